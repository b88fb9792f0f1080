//! Audit sinks: where a session delivers the event of every call.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

use serde_json::{json, Value};

use crate::bindings::agent::file_tools::types::AuditEvent;
use crate::error::code_name;

/// Receives audit events. Called once per tool call, after the call, on the caller's
/// thread; it must not panic.
pub trait AuditSink: Send + Sync {
    /// One call's event.
    fn event(&self, event: &AuditEvent);
}

impl<F: Fn(&AuditEvent) + Send + Sync> AuditSink for F {
    fn event(&self, event: &AuditEvent) {
        self(event)
    }
}

/// An event as a JSON object (snake_case names, codes in SCREAMING_SNAKE_CASE). The diff
/// itself is not included, only its `diff_sha256` (null when the call wrote nothing).
pub fn event_json(e: &AuditEvent) -> Value {
    json!({
        "sequence": e.sequence,
        "tool": e.tool,
        "ok": e.ok,
        "error_code": e.error_code.map(code_name),
        "error_message": e.error_message,
        "paths_read": e.paths_read,
        "paths_written": e.paths_written,
        "files": e.files.iter().map(|f| json!({
            "path": f.path,
            "action": f.action,
            "sha256_before": f.sha256_before,
            "sha256_after": f.sha256_after,
        })).collect::<Vec<_>>(),
        "bytes_read": e.bytes_read,
        "bytes_written": e.bytes_written,
        "insertions": e.insertions,
        "deletions": e.deletions,
        "duration_us": e.duration_us,
        "notes": e.notes,
        "diff_sha256": (!e.diff.is_empty()).then(|| crate::audit_log::line_hash(&e.diff)),
    })
}

/// Appends each event as one JSON line to a log file, chained: every line carries
/// `prev_sha256`, the sha256 of the line before it (64 zeros for the first), and a sidecar
/// `FILE.head` holds the number of lines and the last line's sha256. [`crate::audit_log::verify`]
/// then finds any removed, inserted, edited or truncated line. Appends from several
/// processes are serialised with a lock on the log file.
///
/// The full diff of each mutation is stored once, named by its sha256, in `FILE.artifacts/`
/// and referenced from the event as `diff_artifact` (relative to the log's directory);
/// `verify` checks that every referenced artifact still matches its hash.
#[derive(Debug)]
pub struct JsonLinesSink {
    path: std::path::PathBuf,
    file: Mutex<File>,
    /// Signs every line and the head (see [`crate::audit_key`]).
    key: Option<crate::audit_key::AuditKey>,
}

impl JsonLinesSink {
    /// Opens (creating or appending to) the log file.
    ///
    /// # Errors
    /// When the file cannot be opened for appending.
    pub fn open(path: &Path) -> std::io::Result<Self> {
        let file = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(path)?;
        Ok(JsonLinesSink {
            path: path.to_path_buf(),
            file: Mutex::new(file),
            key: None,
        })
    }

    /// Opens the log like [`JsonLinesSink::open`], signing every line and the head record
    /// with `key` (kept outside the repository), so that `audit verify` with the key finds
    /// a log rewritten by anyone without it.
    ///
    /// # Errors
    /// When the file cannot be opened for appending.
    pub fn open_keyed(path: &Path, key: crate::audit_key::AuditKey) -> std::io::Result<Self> {
        let mut sink = JsonLinesSink::open(path)?;
        sink.key = Some(key);
        Ok(sink)
    }

    fn append(&self, event: &AuditEvent) -> std::io::Result<()> {
        let f = self
            .file
            .lock()
            .map_err(|_| std::io::Error::other("audit log lock poisoned"))?;
        f.lock()?;
        let result = (|| {
            let (count, prev) = crate::audit_log::tail(&self.path)?;
            let mut obj = event_json(event);
            if let Some(sha) = obj["diff_sha256"].as_str() {
                let rel = crate::audit_log::store_artifact(&self.path, sha, &event.diff)?;
                obj["diff_artifact"] = serde_json::Value::String(rel);
            }
            obj["prev_sha256"] = serde_json::Value::String(prev);
            let body = obj.to_string();
            let line = match &self.key {
                Some(k) => k.sign_line(&body),
                None => body,
            };
            let mut out = line.clone().into_bytes();
            out.push(b'\n');
            (&*f).write_all(&out)?;
            let hash = crate::audit_log::line_hash(&line);
            let mac = self.key.as_ref().map(|k| k.head_mac(count + 1, &hash));
            crate::audit_log::write_head(&self.path, count + 1, &hash, mac.as_deref())
        })();
        let _ = f.unlock();
        result
    }
}

impl AuditSink for JsonLinesSink {
    fn event(&self, event: &AuditEvent) {
        // An audit line that cannot be written is reported on stderr, never silently lost.
        if let Err(e) = self.append(event) {
            eprintln!(
                "file-tools: cannot write the audit log {}: {e}",
                self.path.display()
            );
        }
    }
}
