//! Where the snapshots behind `changes_since` tokens live: `changes/<sha256>` in the host's
//! private state directory (mounted apart from the repository, so no tool path reaches
//! it), or, when the host mounts none, in the component instance's memory, where they end
//! with the instance. A snapshot is named by the sha256 of its bytes and the signed token
//! carries that name, so a snapshot altered in the state directory no longer matches its
//! name and is refused. The newest [`KEEP`] snapshots are kept; an older token expires.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::delta::{self, Chain, Delta};
use super::snapshot::{memo_of, Snapshot};
use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::rules::services::Services;

/// Snapshots kept per state directory (or per instance without one).
pub const KEEP: usize = 8;
// A prune compares with the oldest kept snapshot besides the one just stored.
const _: () = assert!(KEEP > 1);

/// Snapshots kept in memory, newest last: (name, bytes).
pub type Memory = Arc<Mutex<VecDeque<(String, Arc<Vec<u8>>)>>>;

/// A snapshot read back from the store: whole, or a delta with its base.
#[derive(Debug)]
pub struct Stored {
    name: String,
    whole: Vec<u8>,
    delta: Option<Vec<u8>>,
}

impl Stored {
    /// Its name in the store.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its records, read in place.
    ///
    /// # Errors
    /// `INVALID_INPUT` (reason `token_expired`) when the bytes do not read as a snapshot.
    pub fn snapshot(&self) -> ToolResult<Snapshot<&str>> {
        let whole = Snapshot::decode(&self.whole);
        let read = match &self.delta {
            None => whole,
            Some(d) => Delta::decode(d).zip(whole).map(|(d, w)| d.apply(w)),
        };
        read.ok_or_else(|| expired("is damaged"))
    }

    /// The walk's memo kept with it (the base's, for a delta).
    pub fn memo(&self) -> &[u8] {
        memo_of(&self.whole)
    }

    /// What it differs by from the whole snapshot it is stored against.
    pub fn chain(&self) -> Chain {
        match self.delta.as_deref().and_then(Delta::decode) {
            Some(d) => Chain::from_delta(&d),
            None => Chain::from_whole(&self.name),
        }
    }
}

/// The bytes of the snapshot `name` in `dir`; when it is missing, a prune may be half way
/// (it renamed the snapshot and has not yet put it back): the condemned files are settled
/// and it is read again.
fn read_settled(dir: &Path, name: &str) -> std::io::Result<Vec<u8>> {
    match std::fs::read(dir.join(name)) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            super::prune::settle(dir);
            std::fs::read(dir.join(name))
        }
        read => read,
    }
}

/// Sets the time of the file at `path` to now (by the clock every snapshot's time is set
/// by: the file system's own may be coarser); false when it is not there (or cannot be
/// touched, so it is written again).
fn renewed(path: &Path) -> bool {
    std::fs::File::options()
        .write(true)
        .open(path)
        .and_then(|f| f.set_modified(std::time::SystemTime::now()))
        .is_ok()
}

/// The snapshots of one session.
#[derive(Debug)]
pub struct Store<'a> {
    dir: Option<PathBuf>,
    memory: &'a Memory,
    /// Hashes snapshots (the host's hashing where it offers it: they run to megabytes).
    services: &'a dyn Services,
}

fn state_err(what: &str, e: impl std::fmt::Display) -> ToolError {
    ToolError::new(
        ErrorCode::IoError,
        format!("the changes_since snapshot could not be {what} in the state directory: {e}"),
    )
}

/// The refusal of a token whose snapshot is gone or damaged.
pub fn expired(why: &str) -> ToolError {
    let mut e = ToolError::invalid(format!(
        "the token's snapshot {why}; call changes_since without a token for a new one"
    ));
    e.reason = Some("token_expired".into());
    e
}

impl<'a> Store<'a> {
    /// The store in `state_dir`'s `changes/`, or in `memory` when there is no state
    /// directory, hashing through `services`.
    pub fn new(state_dir: Option<&Path>, memory: &'a Memory, services: &'a dyn Services) -> Self {
        Store {
            dir: state_dir.map(|d| d.join("changes")),
            memory,
            services,
        }
    }

    /// True when snapshots outlive the component instance.
    pub fn persistent(&self) -> bool {
        self.dir.is_some()
    }

    /// Keeps `bytes`; returns its name.
    ///
    /// # Errors
    /// `IO_ERROR` when the state directory cannot be written.
    pub fn put(&self, bytes: Arc<Vec<u8>>) -> ToolResult<String> {
        let name = self.services.sha256_hex(&bytes);
        match &self.dir {
            None => {
                let mut mem = self.memory.lock().map_err(|e| state_err("kept", e))?;
                mem.retain(|(n, _)| *n != name);
                mem.push_back((name.clone(), bytes));
                let newest = mem.iter().rev().take(KEEP);
                let bases: Vec<String> = newest.filter_map(|(_, b)| delta::base_of(b)).collect();
                let old = mem.len().saturating_sub(KEEP);
                let mut at = 0;
                mem.retain(|(n, _)| {
                    at += 1;
                    at > old || bases.contains(n)
                });
            }
            Some(d) => {
                let path = d.join(&name);
                // Its time says it is the newest, so that no other process's prune takes
                // it for an old one: already there, it is touched; written, it has its
                // time from `write_atomic`. Either way it is written (again) when it is
                // not there after that: a prune took it meanwhile (see `prune`).
                let mut in_place = renewed(&path);
                let mut writes = 0;
                while !(in_place && path.is_file()) {
                    if writes == 3 {
                        return Err(state_err("kept", "other processes kept removing it"));
                    }
                    crate::tools::baseline::write_atomic(&path, &bytes)
                        .map_err(|e| state_err("written", e.message))?;
                    writes += 1;
                    in_place = true;
                }
                super::prune::prune(d, &name);
            }
        }
        Ok(name)
    }

    /// Removes the snapshot `name` just stored, which no token names (every snapshot holds
    /// the time it was taken, to the nanosecond, so no other store makes the same one).
    pub fn discard(&self, name: &str) {
        if !crate::fs::hash::is_sha256(name) {
            return;
        }
        match &self.dir {
            None => {
                if let Ok(mut mem) = self.memory.lock() {
                    mem.retain(|(n, _)| n != name);
                }
            }
            Some(d) => {
                let _ = std::fs::remove_file(d.join(name));
            }
        }
    }

    /// True when the snapshot `name` is kept (not checked against its name).
    pub fn has(&self, name: &str) -> bool {
        if !crate::fs::hash::is_sha256(name) {
            return false;
        }
        match &self.dir {
            None => self
                .memory
                .lock()
                .is_ok_and(|m| m.iter().any(|(n, _)| n == name)),
            Some(d) => d.join(name).is_file(),
        }
    }

    /// The snapshot named `name`, checked against its name, with its base when it is a
    /// delta (checked against the name the delta holds).
    ///
    /// # Errors
    /// `INVALID_INPUT` (reason `token_expired`) when it or its base is gone or altered,
    /// or the base is not a whole snapshot; `IO_ERROR` when the state directory cannot be
    /// read.
    pub fn load(&self, name: &str) -> ToolResult<Stored> {
        let bytes = self.get(name)?;
        let Some(base) = delta::base_of(&bytes) else {
            return Ok(Stored {
                name: name.to_string(),
                whole: bytes,
                delta: None,
            });
        };
        let whole = self.get(&base)?;
        if delta::base_of(&whole).is_some() {
            return Err(expired("is damaged"));
        }
        Ok(Stored {
            name: name.to_string(),
            whole,
            delta: Some(bytes),
        })
    }

    /// The bytes of the snapshot named `name`, checked against its name.
    fn get(&self, name: &str) -> ToolResult<Vec<u8>> {
        if !crate::fs::hash::is_sha256(name) {
            return Err(expired("is not one this host kept"));
        }
        let bytes = match &self.dir {
            None => {
                let mem = self.memory.lock().map_err(|e| state_err("read", e))?;
                let found = mem.iter().find(|(n, _)| n == name).map(|(_, b)| b.clone());
                match found {
                    Some(b) => b.as_ref().clone(),
                    None => {
                        return Err(expired(
                            "is no longer kept: this host mounts no state directory, so snapshots live only as long as the component instance (and the newest 8 of them)",
                        ))
                    }
                }
            }
            Some(d) => match read_settled(d, name) {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Err(expired(
                        "is no longer kept (the state directory keeps the newest 8, and none from another state directory)",
                    ))
                }
                Err(e) => return Err(state_err("read", e)),
            },
        };
        if self.services.sha256_hex(&bytes) != name {
            return Err(expired("was altered in the state directory"));
        }
        Ok(bytes)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::fs::hash::sha256_hex;
    use crate::rules::services::NoServices;

    #[test]
    fn a_snapshot_comes_back_whole_or_not_at_all() {
        let tmp = tempfile::tempdir().unwrap();
        let memory = Memory::default();
        for dir in [Some(tmp.path()), None] {
            let store = Store::new(dir, &memory, &NoServices);
            let name = store.put(Arc::new(b"bytes 1\n".to_vec())).unwrap();
            assert_eq!(store.get(&name).unwrap(), b"bytes 1\n");
            let other = sha256_hex(b"never kept");
            let e = store.get(&other).unwrap_err();
            assert_eq!(e.reason.as_deref(), Some("token_expired"));
            assert!(store.get("../../etc/passwd").is_err());
        }
        // Altered on disk: refused, though the file is there.
        let store = Store::new(Some(tmp.path()), &memory, &NoServices);
        let name = store.put(Arc::new(b"bytes 2\n".to_vec())).unwrap();
        std::fs::write(tmp.path().join("changes").join(&name), b"bytes 3\n").unwrap();
        let e = store.get(&name).unwrap_err();
        assert!(e.message.contains("altered"), "{}", e.message);
    }

    #[test]
    fn only_the_newest_snapshots_are_kept() {
        let memory = Memory::default();
        let store = Store::new(None, &memory, &NoServices);
        let names: Vec<String> = (0..KEEP + 2)
            .map(|i| {
                store
                    .put(Arc::new(format!("bytes {i}\n").into_bytes()))
                    .unwrap()
            })
            .collect();
        assert!(store.get(&names[0]).is_err());
        assert!(store.get(&names[1]).is_err());
        assert!(store.get(&names[2]).is_ok());
        assert!(store.get(&names[KEEP + 1]).is_ok());
    }
}
