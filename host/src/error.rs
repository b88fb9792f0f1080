//! Errors of the host: setup failures (`HostError`), and helpers for the tool error the
//! component returns (`ToolError`), whose JSON form is the CLI's and the JSON API's.

use std::fmt;

use serde_json::{json, Map, Value};

use crate::bindings::agent::file_tools::types::{ErrorCode, ToolError};

/// Why a runtime or session could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HostError {
    /// The builder was not given something it needs, or was given something unusable.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// The repository directory cannot be opened.
    #[error("cannot open repository {path}: {source}")]
    Repo {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// The policy is malformed (the component's own check).
    #[error("invalid policy: {0}")]
    Policy(String),
    /// Wasmtime failed to compile, load or instantiate the component.
    #[error("wasmtime: {0}")]
    Wasmtime(String),
}

impl From<wasmtime::Error> for HostError {
    fn from(e: wasmtime::Error) -> Self {
        HostError::Wasmtime(format!("{e:#}"))
    }
}

/// The SCREAMING_SNAKE_CASE name of a code, as in JSON.
pub fn code_name(code: ErrorCode) -> &'static str {
    match code {
        ErrorCode::PathRejected => "PATH_REJECTED",
        ErrorCode::NotFound => "NOT_FOUND",
        ErrorCode::AlreadyExists => "ALREADY_EXISTS",
        ErrorCode::NotAFile => "NOT_A_FILE",
        ErrorCode::PolicyDenied => "POLICY_DENIED",
        ErrorCode::FileTooLarge => "FILE_TOO_LARGE",
        ErrorCode::UnsupportedBinary => "UNSUPPORTED_BINARY",
        ErrorCode::EncodingError => "ENCODING_ERROR",
        ErrorCode::WriteConflict => "WRITE_CONFLICT",
        ErrorCode::EditNoMatch => "EDIT_NO_MATCH",
        ErrorCode::EditAmbiguous => "EDIT_AMBIGUOUS",
        ErrorCode::PatchParseError => "PATCH_PARSE_ERROR",
        ErrorCode::PatchConflict => "PATCH_CONFLICT",
        ErrorCode::PatchBudgetExceeded => "PATCH_BUDGET_EXCEEDED",
        ErrorCode::ApprovalRequired => "APPROVAL_REQUIRED",
        ErrorCode::InvalidInput => "INVALID_INPUT",
        ErrorCode::LimitExceeded => "LIMIT_EXCEEDED",
        ErrorCode::IoError => "IO_ERROR",
        ErrorCode::Internal => "INTERNAL",
        ErrorCode::Cancelled => "CANCELLED",
    }
}

impl ToolError {
    /// An error made by the host itself (a trap, an unusable result).
    pub fn host(code: ErrorCode, message: impl Into<String>) -> Self {
        ToolError {
            code,
            message: message.into(),
            path: None,
            reason: None,
            details: Vec::new(),
        }
    }

    /// The value of a detail, if present.
    pub fn detail(&self, key: &str) -> Option<&str> {
        self.details
            .iter()
            .find(|d| d.key == key)
            .map(|d| d.value.as_str())
    }

    /// The JSON form: `{"code": "...", "message": "...", "path"?, "reason"?, "details"?}`.
    pub fn to_json(&self) -> Value {
        let mut o = Map::new();
        o.insert("code".into(), json!(code_name(self.code)));
        o.insert("message".into(), json!(self.message));
        if let Some(p) = &self.path {
            o.insert("path".into(), json!(p));
        }
        if let Some(r) = &self.reason {
            o.insert("reason".into(), json!(r));
        }
        if !self.details.is_empty() {
            let d: Map<String, Value> = self
                .details
                .iter()
                .map(|d| (d.key.clone(), json!(d.value)))
                .collect();
            o.insert("details".into(), Value::Object(d));
        }
        Value::Object(o)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(code_name(*self))
    }
}
