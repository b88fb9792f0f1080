//! Audit events: what each call records while it runs, and the event it emits at the end.

use serde::{Deserialize, Serialize};

use crate::error::ErrorCode;

/// One file a call read or changed.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct AuditFile {
    pub path: String,
    /// `read`, `create`, `modify`, `delete`, `move_from` or `move_to`.
    pub action: String,
    pub sha256_before: Option<String>,
    pub sha256_after: Option<String>,
}

impl From<&crate::api::FileChange> for AuditFile {
    fn from(c: &crate::api::FileChange) -> Self {
        AuditFile {
            path: c.path.clone(),
            action: c.action.clone(),
            sha256_before: c.sha256_before.clone(),
            sha256_after: c.sha256_after.clone(),
        }
    }
}

/// The event emitted at the end of every call; mirrors the WIT `audit-event` record.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct AuditEvent {
    pub sequence: u64,
    pub tool: String,
    pub ok: bool,
    pub error_code: Option<ErrorCode>,
    pub error_message: Option<String>,
    pub paths_read: Vec<String>,
    pub paths_written: Vec<String>,
    pub files: Vec<AuditFile>,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub insertions: u32,
    pub deletions: u32,
    pub duration_us: u64,
    /// The full diff a mutation wrote; empty otherwise.
    pub diff: String,
    /// Choices the call made for the agent (relaxed patch matches, line endings taken
    /// from the repository's configuration); empty otherwise.
    pub notes: Vec<String>,
}

/// What one call did, gathered while it runs.
#[derive(Debug, Default, Clone)]
pub struct CallLog {
    /// The tool being called (its snake_case name).
    pub tool: String,
    /// The full diff of what the call wrote.
    pub diff: String,
    pub paths_read: Vec<String>,
    pub paths_written: Vec<String>,
    pub files: Vec<AuditFile>,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub insertions: u32,
    pub deletions: u32,
    /// Choices made for the agent, for the audit event.
    pub notes: Vec<String>,
}

impl CallLog {
    /// Records that a file's content was read.
    pub fn read(&mut self, path: &str, bytes: u64) {
        if !self.paths_read.iter().any(|p| p == path) {
            self.paths_read.push(path.to_string());
        }
        self.bytes_read += bytes;
    }

    /// Records a change to a file with its content hashes before and after.
    pub fn wrote(&mut self, change: &crate::api::FileChange) {
        if !self.paths_written.contains(&change.path) {
            self.paths_written.push(change.path.clone());
        }
        self.files.push(AuditFile::from(change));
    }
}
