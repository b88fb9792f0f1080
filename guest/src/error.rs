//! The error every tool returns: a stable code, a message that tells the agent what to do
//! next, the logical path concerned, and machine-readable details.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// Stable failure codes, one-to-one with the WIT `error-code` enum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[non_exhaustive]
pub enum ErrorCode {
    PathRejected,
    NotFound,
    AlreadyExists,
    NotAFile,
    PolicyDenied,
    FileTooLarge,
    UnsupportedBinary,
    EncodingError,
    WriteConflict,
    EditNoMatch,
    EditAmbiguous,
    PatchParseError,
    PatchConflict,
    PatchBudgetExceeded,
    ApprovalRequired,
    InvalidInput,
    LimitExceeded,
    IoError,
    Internal,
    // Made by hosts only (a cancelled call); listed so that the codes stay one list. (A
    // `///` doc here would turn the enum's schema into a `oneOf` of documented constants.)
    Cancelled,
    UnsupportedMedia,
}

impl ErrorCode {
    /// Every code, in WIT order.
    pub const ALL: [ErrorCode; 21] = [
        ErrorCode::PathRejected,
        ErrorCode::NotFound,
        ErrorCode::AlreadyExists,
        ErrorCode::NotAFile,
        ErrorCode::PolicyDenied,
        ErrorCode::FileTooLarge,
        ErrorCode::UnsupportedBinary,
        ErrorCode::EncodingError,
        ErrorCode::WriteConflict,
        ErrorCode::EditNoMatch,
        ErrorCode::EditAmbiguous,
        ErrorCode::PatchParseError,
        ErrorCode::PatchConflict,
        ErrorCode::PatchBudgetExceeded,
        ErrorCode::ApprovalRequired,
        ErrorCode::InvalidInput,
        ErrorCode::LimitExceeded,
        ErrorCode::IoError,
        ErrorCode::Internal,
        ErrorCode::Cancelled,
        ErrorCode::UnsupportedMedia,
    ];

    /// The SCREAMING_SNAKE_CASE name used in JSON (the contract's table: the variants
    /// are in WIT order, which `error_codes_are_in_the_contract_order` checks).
    pub fn as_str(self) -> &'static str {
        file_tools_contract::error_code_name(self as usize)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failed call. Every function of the `tools` interface returns this on failure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ToolError {
    /// What went wrong, as a stable code.
    pub code: ErrorCode,
    /// A sentence for the agent that says what happened and what to do next.
    pub message: String,
    /// The logical path concerned, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// For `POLICY_DENIED`: the rule that refused (`secret`, `git_internal`, `read_only`,
    /// `generated`, `vendored`, `lockfile`, `blocked`, `not_allowed`, `hardlinked`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Further machine-readable facts (for example `current_sha256`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub details: BTreeMap<String, String>,
}

/// Shorthand for results of tool logic.
pub type ToolResult<T> = Result<T, ToolError>;

impl ToolError {
    /// An error with a code and message and nothing else.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ToolError {
            code,
            message: message.into(),
            path: None,
            reason: None,
            details: BTreeMap::new(),
        }
    }

    /// Attaches the logical path concerned.
    pub fn with_path(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }

    /// Attaches a machine-readable detail.
    pub fn with_detail(mut self, key: &str, value: impl Into<String>) -> Self {
        self.details.insert(key.to_string(), value.into());
        self
    }

    /// `INVALID_INPUT` with a message.
    pub fn invalid(message: impl Into<String>) -> Self {
        ToolError::new(ErrorCode::InvalidInput, message)
    }

    /// `POLICY_DENIED` for `path` because of `reason`.
    pub fn denied(path: &str, reason: &str, message: impl Into<String>) -> Self {
        let mut e = ToolError::new(ErrorCode::PolicyDenied, message).with_path(path);
        e.reason = Some(reason.to_string());
        e
    }

    /// Maps an I/O error met while working on `path` to the closest code.
    pub fn io(path: &str, err: &std::io::Error) -> Self {
        use std::io::ErrorKind;
        let (code, msg) = match err.kind() {
            ErrorKind::NotFound => (
                ErrorCode::NotFound,
                format!("'{path}' does not exist; use list_dir or find_files to see what does"),
            ),
            ErrorKind::AlreadyExists => {
                (ErrorCode::AlreadyExists, format!("'{path}' already exists"))
            }
            ErrorKind::IsADirectory => (
                ErrorCode::NotAFile,
                format!("'{path}' is a directory, not a file; use list_dir to see its entries"),
            ),
            ErrorKind::NotADirectory => (
                ErrorCode::NotFound,
                format!("a parent of '{path}' is a file, not a directory"),
            ),
            _ => (
                ErrorCode::IoError,
                format!("the file system refused an operation on '{path}': {err}"),
            ),
        };
        ToolError::new(code, msg).with_path(path)
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ToolError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_codes_are_in_the_contract_order() {
        assert_eq!(ErrorCode::ALL.len(), file_tools_contract::ERROR_CODES.len());
        for (i, code) in ErrorCode::ALL.into_iter().enumerate() {
            assert_eq!(code as usize, i, "{code:?}");
        }
    }

    #[test]
    fn json_names_match_as_str() {
        for code in ErrorCode::ALL {
            let json = serde_json::to_string(&code).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", code.as_str()));
        }
    }

    #[test]
    fn io_not_found_maps_to_not_found() {
        let e = ToolError::io("a.txt", &std::io::Error::from(std::io::ErrorKind::NotFound));
        assert_eq!(e.code, ErrorCode::NotFound);
        assert_eq!(e.path.as_deref(), Some("a.txt"));
    }
}
