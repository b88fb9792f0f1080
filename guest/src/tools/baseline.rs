//! The session baseline: the content every path had before the session first changed it,
//! so that `diff_workspace` can show and `revert` can undo everything the tools did.
//!
//! It lives in the host's private state directory (never reachable by a tool path):
//! `index.json` maps a logical path to whether it existed and its sha256, and
//! `blobs/<sha256>` holds each original content once. Blobs are written before the index,
//! and the index is replaced atomically, so a trap or a crash at any point leaves a baseline
//! that is still whole. Without a state directory the baseline lives in the instance's
//! memory and ends with it.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::fs::hash::sha256_hex;

/// What a path was when the session first changed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub existed: bool,
    pub sha256: Option<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Index {
    version: u32,
    entries: BTreeMap<String, Entry>,
}

/// Entries and blobs of a baseline kept in memory.
type MemoryBaseline = (BTreeMap<String, Entry>, BTreeMap<String, Vec<u8>>);

/// A baseline kept in memory when there is no state directory: owned by the session (one
/// per component instance), shared by its clones.
pub type Memory = Arc<Mutex<Option<MemoryBaseline>>>;

/// The baseline of one session.
#[derive(Debug)]
pub struct Baseline<'a> {
    dir: Option<PathBuf>,
    memory: &'a Memory,
}

fn state_err(what: &str, e: impl std::fmt::Display) -> ToolError {
    ToolError::new(
        ErrorCode::IoError,
        format!("the session state could not be {what}: {e}"),
    )
}

impl<'a> Baseline<'a> {
    /// The baseline in `dir`, or in `memory` when there is no state directory.
    pub fn new(dir: Option<&Path>, memory: &'a Memory) -> Self {
        Baseline {
            dir: dir.map(Path::to_path_buf),
            memory,
        }
    }

    /// Every path changed in this session, with what it was before.
    ///
    /// # Errors
    /// `IO_ERROR` when the index cannot be read or parsed.
    pub fn entries(&self) -> ToolResult<BTreeMap<String, Entry>> {
        match &self.dir {
            None => Ok(self
                .memory
                .lock()
                .map_err(|e| state_err("read", e))?
                .as_ref()
                .map(|m| m.0.clone())
                .unwrap_or_default()),
            Some(d) => Ok(read_index(d)?.entries),
        }
    }

    /// The original content of an entry (`None` for a path that did not exist).
    ///
    /// # Errors
    /// `IO_ERROR` when the blob is missing or unreadable.
    pub fn content(&self, entry: &Entry) -> ToolResult<Option<Vec<u8>>> {
        let Some(sha) = entry.sha256.as_ref().filter(|_| entry.existed) else {
            return Ok(None);
        };
        match &self.dir {
            None => {
                let mem = self.memory.lock().map_err(|e| state_err("read", e))?;
                let blob = mem.as_ref().and_then(|m| m.1.get(sha).cloned());
                blob.map(Some)
                    .ok_or_else(|| state_err("read", "blob missing"))
            }
            Some(d) => fs::read(d.join("blobs").join(sha))
                .map(Some)
                .map_err(|e| state_err("read", e)),
        }
    }

    /// Records the original content of every path not yet in the baseline.
    ///
    /// # Errors
    /// `IO_ERROR` when the state cannot be written; nothing in the repository has changed yet.
    pub fn record(&self, originals: &[(String, Option<&[u8]>)]) -> ToolResult<()> {
        match &self.dir {
            None => {
                let mut guard = self.memory.lock().map_err(|e| state_err("written", e))?;
                let (entries, blobs) = guard.get_or_insert_with(Default::default);
                for (path, content) in originals {
                    if entries.contains_key(path) {
                        continue;
                    }
                    let sha = content.map(sha256_hex);
                    if let (Some(c), Some(s)) = (content, &sha) {
                        blobs.insert(s.clone(), c.to_vec());
                    }
                    entries.insert(
                        path.clone(),
                        Entry {
                            existed: content.is_some(),
                            sha256: sha,
                        },
                    );
                }
                Ok(())
            }
            Some(d) => {
                let mut index = read_index(d)?;
                let mut changed = false;
                for (path, content) in originals {
                    if index.entries.contains_key(path) {
                        continue;
                    }
                    let sha = content.map(sha256_hex);
                    if let (Some(c), Some(s)) = (content, &sha) {
                        let blob = d.join("blobs").join(s);
                        if !blob.exists() {
                            write_atomic(&blob, c)?;
                        }
                    }
                    index.entries.insert(
                        path.clone(),
                        Entry {
                            existed: content.is_some(),
                            sha256: sha,
                        },
                    );
                    changed = true;
                }
                if changed {
                    index.version = 1;
                    let json = serde_json::to_vec(&index).map_err(|e| state_err("written", e))?;
                    write_atomic(&d.join("index.json"), &json)?;
                }
                Ok(())
            }
        }
    }
}

fn read_index(dir: &Path) -> ToolResult<Index> {
    match fs::read(dir.join("index.json")) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| state_err("parsed", e)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Index::default()),
        Err(e) => Err(state_err("read", e)),
    }
}

pub(crate) fn write_atomic(path: &Path, data: &[u8]) -> ToolResult<()> {
    let dir = path
        .parent()
        .ok_or_else(|| state_err("written", "no parent"))?;
    fs::create_dir_all(dir).map_err(|e| state_err("written", e))?;
    let tmp = dir.join(format!(".{}.tmp", crate::rules::path::temp_suffix()));
    let result = (|| {
        use std::io::Write;
        let mut f = fs::File::create(&tmp)?;
        f.write_all(data)?;
        // Its time by the clock the state's readers compare (the file system's may be
        // coarser), set before it appears under its name (see `changes::prune`); where
        // that fails, the file system's own time stays.
        let _ = f.set_modified(std::time::SystemTime::now());
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result.map_err(|e| state_err("written", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_record_wins_and_survives_reopening() {
        let tmp = tempfile::tempdir().unwrap();
        let memory = Memory::default();
        let b = Baseline::new(Some(tmp.path()), &memory);
        b.record(&[
            ("a.txt".into(), Some(b"v1".as_slice())),
            ("new.txt".into(), None),
        ])
        .unwrap();
        b.record(&[("a.txt".into(), Some(b"v2".as_slice()))])
            .unwrap();
        let again = Baseline::new(Some(tmp.path()), &memory);
        let e = again.entries().unwrap();
        assert_eq!(e.len(), 2);
        assert_eq!(
            again.content(&e["a.txt"]).unwrap().as_deref(),
            Some(b"v1".as_slice())
        );
        assert_eq!(again.content(&e["new.txt"]).unwrap(), None);
        assert!(!e["new.txt"].existed);
    }
}
