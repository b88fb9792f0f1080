//! Arguments and result of `read_media`: an image or a PDF, whole, as base64.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Arguments of `read_media`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadMediaArgs {
    /// Image (PNG, JPEG, GIF, WebP) or PDF to read, relative to the repository root.
    pub path: String,
}

/// Result of `read_media`: a whole image or PDF as base64, with its type.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct ReadMediaResult {
    /// The file's logical path.
    pub path: String,
    /// Its type, told by the content's leading bytes (not by the name): `image/png`,
    /// `image/jpeg`, `image/gif`, `image/webp` or `application/pdf`.
    pub mime_type: String,
    /// Size of the file in bytes (the bytes `data_base64` encodes).
    pub size: u64,
    /// sha256 of the file's bytes, lowercase hex.
    pub sha256: String,
    /// The whole file, standard base64 (RFC 4648, with padding).
    pub data_base64: String,
    /// One line for the model: the path, its type and its size.
    pub summary: String,
}
