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
        /// The repository's path as given.
        path: String,
        /// Why it cannot be opened.
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

/// The SCREAMING_SNAKE_CASE name of a code, as in JSON: the contract's table, which lists
/// the codes in WIT order as the generated enum does.
pub fn code_name(code: ErrorCode) -> &'static str {
    file_tools_contract::error_code_name(code as usize)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_names_follow_the_wit_order_of_the_generated_enum() {
        assert_eq!(code_name(ErrorCode::PathRejected), "PATH_REJECTED");
        assert_eq!(code_name(ErrorCode::InvalidInput), "INVALID_INPUT");
        assert_eq!(code_name(ErrorCode::Cancelled), "CANCELLED");
        assert_eq!(code_name(ErrorCode::UnsupportedMedia), "UNSUPPORTED_MEDIA");
    }
}
