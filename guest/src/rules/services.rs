//! What the host offers beyond the repository's files: the audit sink, the approver,
//! permission bits, batched reads and hashing. The bindings shell implements [`Services`]
//! over the world's imports and installs it in the session (through [`crate::rules::fsx::Fs`]);
//! nothing below calls up into the shell. Every method has a default that does without
//! the host (nothing emitted, nothing approved, reads through the port, hashing in the
//! component), which is what native unit tests and plain WASI hosts get.

use std::io;

use crate::audit::AuditEvent;
use crate::fs::port::DirItem;
use crate::rules::approval::ApprovalRequest;
use crate::rules::path::LogicalPath;

/// Buffers at least this large are hashed by the host when it offers to (below it, the
/// call costs more than it saves; at 1 KiB the host's hashing already spares about a
/// tenth of a `file_info`, at 8 KiB a third) ...
const HOST_HASH_MIN: usize = 256;
/// ... and at most this large (a host call's arguments are bounded).
const HOST_HASH_MAX: usize = 64 << 20;

/// A directory entry with its metadata: its name (`Err` when not valid UTF-8) and a look
/// at it that did not follow a link.
pub type StatItem = (Result<String, ()>, crate::fs::port::Stat);

/// The host's services; see the module docs.
pub trait Services: std::fmt::Debug + Send + Sync {
    /// Receives the one audit event of a call.
    fn emit(&self, _event: AuditEvent) {}

    /// Decides on a change the policy marks as needing approval; false declines.
    fn approve(&self, _request: &ApprovalRequest) -> bool {
        false
    }

    /// Gives `to` the permission bits of `from` (both logical paths); false when not done.
    fn copy_mode(&self, _from: &LogicalPath, _to: &LogicalPath) -> bool {
        false
    }

    /// All entries of the directory `dir` in one call; `None` when not offered.
    fn read_dir(&self, _dir: &LogicalPath) -> Option<io::Result<Vec<DirItem>>> {
        None
    }

    /// All entries of the directory `dir` with their metadata (not following links) in
    /// one call; `None` when not offered.
    fn read_dir_stat(&self, _dir: &LogicalPath) -> Option<io::Result<Vec<StatItem>>> {
        None
    }

    /// How many changes the host's watch has seen below the repository, counting every
    /// change completed before the call; `None` when no watch runs or its count is not
    /// exact. Asked once per search, never cached.
    fn tree_changes(&self) -> Option<u64> {
        None
    }

    /// The directories (logical paths, `""` for the root) whose listing may have changed
    /// since the watch's count was `since`, counting every change completed before the
    /// call, for a walk from `start`; `None` when no watch runs, its count is not exact,
    /// it cannot say, or it follows `start` under no such spelling.
    fn tree_changed_dirs(&self, _since: u64, _start: &LogicalPath) -> Option<Vec<String>> {
        None
    }

    /// Up to `max` bytes of the regular file `path` in one call, refusing any symlink on
    /// the way; `None` when not offered.
    fn read_file(&self, _path: &LogicalPath, _max: u64) -> Option<io::Result<Vec<u8>>> {
        None
    }

    /// How far the current call has come (see [`crate::tools::progress::Meter`]); ignored unless
    /// the host shows progress.
    fn progress(&self, _files_scanned: u64, _matches: u64) {}

    /// The sha256 of `data`; `None` when not offered.
    fn sha256(&self, _data: &[u8]) -> Option<[u8; 32]> {
        None
    }

    /// The sha256 of `data` as lowercase hex, by the host for large buffers when it offers.
    fn sha256_hex(&self, data: &[u8]) -> String {
        if (HOST_HASH_MIN..=HOST_HASH_MAX).contains(&data.len()) {
            if let Some(d) = self.sha256(data) {
                return crate::fs::hash::hex(&d);
            }
        }
        crate::fs::hash::sha256_hex(data)
    }
}

/// No host services at all.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoServices;

impl Services for NoServices {}
