//! `read_media`: an image (PNG, JPEG, GIF, WebP) or a PDF, whole, as base64.
//!
//! The path goes through exactly what a text read goes through: the path guard, resolution
//! without following links outside, classification, the read policy (a hidden file answers
//! as a missing one; a secret by name is refused by name) and the content sniffer (a file
//! holding a private key or token is withheld whatever its type). The type is then told by
//! the content's signature, never by the name alone. A file over the policy's
//! `max_media_bytes` is refused before its content is read, and nothing of it is returned.
//!
//! A PDF is returned as the file itself. Extracting its text page by page would need a PDF
//! library inside the component; the Rust ones that do it panic on malformed files by
//! design, and a panic must never reach a user, so it is not offered.

use crate::api::{ReadMediaArgs, ReadMediaResult};
use crate::audit::CallLog;
use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::rules::classify::looks_binary;
use crate::rules::media::{is_svg_name, MediaType};
use crate::rules::policy::Policy;
use crate::text::base64;
use crate::tools::session::Session;

/// What `read_media` returns, listed for messages.
const OFFERED: &str = "PNG, JPEG, GIF, WebP or PDF";

/// Reads an image or a PDF whole, as base64.
///
/// # Errors
/// `PATH_REJECTED`, `NOT_FOUND`, `NOT_A_FILE`, `POLICY_DENIED`, `FILE_TOO_LARGE` (over the
/// policy's `max_media_bytes`), `UNSUPPORTED_MEDIA` (content of no type offered), `IO_ERROR`.
pub fn read_media(
    s: &Session,
    log: &mut CallLog,
    a: &ReadMediaArgs,
) -> ToolResult<ReadMediaResult> {
    let r = s.readable(&a.path)?;
    let shown = r.resolved.requested.to_string();
    let cap = s.policy.limits().max_media_bytes;
    // The size is the opened file's, so the cap holds for what is read.
    let (file, st) = r.resolved.open()?;
    if st.size > cap {
        return Err(too_large(&shown, st.size, cap));
    }
    let data = file
        .read_all(st.size, cap.saturating_add(1))
        .map_err(|e| ToolError::io(&shown, &e))?;
    let size = data.len() as u64;
    if size > cap {
        // Grew past the cap after it was looked at (an empty file is read up to the cap).
        return Err(too_large(&shown, size, cap));
    }
    Policy::content_denial(&shown, s.policy.sniff(&r.resolved.target, &data))?;
    let name = r.resolved.requested.name();
    let ty = media_type(&shown, name, &data)?;
    let sha256 = s.fs.services().sha256_hex(&data);
    log.read(&shown, size);
    if r.resolved.via_link {
        log.read(&r.resolved.target.to_string(), 0);
    }
    let claimed = MediaType::claimed_by(name).filter(|c| *c != ty);
    let summary = match claimed {
        Some(c) => format!(
            "{shown}: {} ({}), {size} bytes; named as a {} but the content is a {}",
            ty.label(),
            ty.mime(),
            c.label(),
            ty.label()
        ),
        None => format!("{shown}: {} ({}), {size} bytes", ty.label(), ty.mime()),
    };
    Ok(ReadMediaResult {
        path: shown,
        mime_type: ty.mime().to_string(),
        size,
        sha256,
        data_base64: base64::encode(&data),
        summary,
    })
}

fn too_large(shown: &str, size: u64, cap: u64) -> ToolError {
    ToolError::new(
        ErrorCode::FileTooLarge,
        format!(
            "'{shown}' is {size} bytes, over the session policy's limit of {cap} bytes for read_media (max_media_bytes); nothing of it was returned (file_info gives its size and sha256)"
        ),
    )
    .with_path(shown)
    .with_detail("size", size.to_string())
    .with_detail("limit", cap.to_string())
}

/// The type of `data`, by its signature; `UNSUPPORTED_MEDIA` naming what was found when it
/// has none of those offered. `name` is the file's name as the call gave it (what the file
/// says it is).
fn media_type(shown: &str, name: &str, data: &[u8]) -> ToolResult<MediaType> {
    if let Some(ty) = MediaType::of_content(data) {
        return Ok(ty);
    }
    let text = !looks_binary(data);
    let (found, message) = if data.is_empty() {
        ("empty", format!("'{shown}' is empty, not a {OFFERED} file"))
    } else if is_svg_name(name) && text {
        (
            "text",
            format!("'{shown}' is an SVG image, which is text: read it with read_file (read_media returns {OFFERED} files)"),
        )
    } else if text {
        let named = match MediaType::claimed_by(name) {
            Some(c) => format!("is named as a {} but holds text", c.label()),
            None => "holds text".to_string(),
        };
        (
            "text",
            format!("'{shown}' {named}, not a {OFFERED} file; read it with read_file"),
        )
    } else {
        let named = match MediaType::claimed_by(name) {
            Some(c) => format!(
                " (it is named as a {}, but does not start as one)",
                c.label()
            ),
            None => String::new(),
        };
        (
            "binary",
            format!("'{shown}' is binary data of no type read_media returns ({OFFERED}){named}; file_info gives its size and sha256"),
        )
    };
    let mut e = ToolError::new(ErrorCode::UnsupportedMedia, message)
        .with_path(shown)
        .with_detail("found", found);
    if let Some(c) = MediaType::claimed_by(name) {
        e = e.with_detail("named_as", c.mime());
    }
    Err(e)
}

#[cfg(test)]
mod tests;
