//! The shell's [`Services`]: the world's imports (audit, approval, host-fs) behind the trait
//! the rest of the component uses. A batched-read or hashing service the host answers
//! `none` for is not asked again in this instance.

#[cfg(not(feature = "standalone"))]
use std::io;
#[cfg(not(feature = "standalone"))]
use std::sync::atomic::{AtomicBool, Ordering};

use crate::audit::AuditEvent;
#[cfg(not(feature = "standalone"))]
use crate::fs::port::DirItem;
#[cfg(not(feature = "standalone"))]
use crate::rules::approval::ApprovalRequest;
#[cfg(not(feature = "standalone"))]
use crate::rules::path::LogicalPath;
use crate::rules::services::Services;

#[cfg(not(feature = "standalone"))]
use super::{agent, Conv};

impl HostServices {
    /// The services as the host configured them in the component's environment.
    // The standalone world's services have no field but `no_audit`.
    #[allow(clippy::needless_update)]
    pub fn from_env() -> HostServices {
        let no_audit = std::env::var(file_tools_contract::env::AUDIT).as_deref() == Ok("off");
        HostServices {
            no_audit,
            ..HostServices::default()
        }
    }
}

/// The host's services, through the `file-tools` world's imports.
#[cfg(not(feature = "standalone"))]
#[derive(Debug, Default)]
pub struct HostServices {
    /// The host has no audit sink (`FILE_TOOLS_AUDIT=off`): events are not sent.
    no_audit: bool,
    no_read_dir: AtomicBool,
    no_read_dir_stat: AtomicBool,
    no_read_file: AtomicBool,
    no_sha256: AtomicBool,
    /// The host was asked for the hash of nothing, before any large buffer (see `sha256`).
    sha256_probed: AtomicBool,
}

/// Asks an optional service unless the host said earlier that it does not offer it.
#[cfg(not(feature = "standalone"))]
fn offered<T>(off: &AtomicBool, ask: impl FnOnce() -> Option<T>) -> Option<T> {
    if off.load(Ordering::Relaxed) {
        return None;
    }
    let answer = ask();
    if answer.is_none() {
        off.store(true, Ordering::Relaxed);
    }
    answer
}

#[cfg(not(feature = "standalone"))]
impl Services for HostServices {
    fn emit(&self, event: AuditEvent) {
        if !self.no_audit {
            agent::file_tools::audit::emit(&event.conv());
        }
    }

    fn approve(&self, request: &ApprovalRequest) -> bool {
        agent::file_tools::approval::request(&request.clone().conv())
    }

    fn progress(&self, files_scanned: u64, matches: u64) {
        agent::file_tools::progress::report(files_scanned, matches);
    }

    fn copy_mode(&self, from: &LogicalPath, to: &LogicalPath) -> bool {
        agent::file_tools::host_fs::copy_mode(from.as_str(), to.as_str())
    }

    fn read_dir(&self, dir: &LogicalPath) -> Option<io::Result<Vec<DirItem>>> {
        offered(&self.no_read_dir, || {
            agent::file_tools::host_fs::read_dir(dir.as_str())
        })
        .map(|r| {
            r.map(|entries| {
                entries
                    .into_iter()
                    .map(|e| (e.name.ok_or(()), e.kind.conv()))
                    .collect()
            })
            .map_err(io::Error::other)
        })
    }

    fn tree_changes(&self) -> Option<u64> {
        agent::file_tools::host_fs::tree_changes()
    }

    fn tree_changed_dirs(&self, since: u64, start: &LogicalPath) -> Option<Vec<String>> {
        agent::file_tools::host_fs::tree_changed_dirs(since, start.as_str())
    }

    fn read_dir_stat(
        &self,
        dir: &LogicalPath,
    ) -> Option<io::Result<Vec<crate::rules::services::StatItem>>> {
        offered(&self.no_read_dir_stat, || {
            agent::file_tools::host_fs::read_dir_stat(dir.as_str())
        })
        .map(|r| {
            r.map(|entries| {
                entries
                    .into_iter()
                    .map(|e| (e.name.ok_or(()), super::host_port::stat_of(&e.stat)))
                    .collect()
            })
            .map_err(io::Error::other)
        })
    }

    fn read_file(&self, path: &LogicalPath, max: u64) -> Option<io::Result<Vec<u8>>> {
        offered(&self.no_read_file, || {
            agent::file_tools::host_fs::read_file(path.as_str(), max)
        })
        .map(|r| r.map_err(io::Error::other))
    }

    fn sha256(&self, data: &[u8]) -> Option<[u8; 32]> {
        // Whether the host hashes is first asked with no bytes: a host that does not (the
        // Python one, whose runtime would carry a large buffer into Python a byte at a
        // time only to answer `none`) then never receives one. (The host is trusted with
        // its hashes as with everything else; an answer other than the hash of nothing is
        // only taken as "not offered".)
        if !self.sha256_probed.swap(true, Ordering::Relaxed) {
            let empty = agent::file_tools::host_fs::sha256(&[]);
            if empty.as_deref() != Some(&crate::fs::hash::sha256(&[])[..]) {
                self.no_sha256.store(true, Ordering::Relaxed);
            }
        }
        offered(&self.no_sha256, || {
            agent::file_tools::host_fs::sha256(data)
                .and_then(|d| <[u8; 32]>::try_from(d.as_slice()).ok())
        })
    }
}

/// The standalone world's services: audit events as JSON lines on stderr, nothing else
/// (nobody to ask for approval, no permission bits, reads and hashing in the component).
#[cfg(feature = "standalone")]
#[derive(Debug, Default)]
pub struct HostServices {
    /// `FILE_TOOLS_AUDIT=off`: no lines on stderr.
    no_audit: bool,
}

#[cfg(feature = "standalone")]
impl Services for HostServices {
    fn emit(&self, event: AuditEvent) {
        if self.no_audit {
            return;
        }
        if let Ok(line) = serde_json::to_string(&event) {
            eprintln!("{line}");
        }
    }
}
