//! The transaction journal: a change of several files survives a crash whole or not at all.
//!
//! Before the first temporary file of a change exists, [`Journal::begin`] writes a record
//! of it to the `txn` folder of the state directory: for every file its directory, its
//! name, its temporary name and the sha256 of its old and new content. The record moves
//! through three names, each reached by an atomic rename after its content was flushed:
//!
//! - `<id>.new`: being written; no temporary file exists yet;
//! - `<id>.open`: the temporary files are being written;
//! - `<id>.commit`: every temporary file is complete and flushed and every target was
//!   checked once more: the change is decided, the renames follow.
//!
//! The call removes its record when it ends, whether it succeeded or failed. A record
//! still there belongs to a call that was killed (or trapped), and the next call recovers
//! it before it does anything else ([`recover`]): a `new` or `open` record is rolled back
//! (its temporary files are removed), a `commit` record is rolled forward (each temporary
//! file still there whose content has the recorded hash is renamed over its target while
//! the target still holds the recorded old content; each recorded deletion is done while
//! the file still holds its old content). Temporary files a record does not name are never
//! touched: every temporary file of a change is named in its record before it is created.
//!
//! Only a call that holds the repository's mutation lock may recover, since the record of
//! a call running in another process looks just like a dead one. The Rust host takes that
//! lock for a call whenever records are pending and then writes its session's token to
//! `txn/holder`; the component recovers when that file holds the token the host gave it
//! (`FILE_TOOLS_LOCK_TOKEN`). A host that gives no token has no lock either (a plain WASI
//! host with a state directory mounted): there the component recovers at the start of
//! every call that changes files, the best it can do. Recovery shows nothing to the agent.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::rules::path::{is_temp_name, LogicalPath};
use crate::tools::session::Session;

/// The folder of the state directory that holds the records.
pub const TXN_DIR: &str = "txn";
/// The file the host writes its token to while it holds the lock (see the module docs).
pub const HOLDER: &str = "holder";
/// The journal of temporary names an earlier version wrote (names only, no commit mark).
const LEGACY: &str = "pending-temps.json";
const NEW: &str = "new";
const OPEN: &str = "open";
const COMMIT: &str = "commit";

/// One file of a change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// The directory holding the file (a logical path, `""` for the root).
    pub dir: String,
    pub name: String,
    /// The temporary name beside it.
    pub temp: String,
    /// The sha256 of the content before the change (`None`: the file did not exist).
    pub old: Option<String>,
    /// The sha256 of the new content (`None`: the file is deleted).
    pub new: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Record {
    version: u32,
    steps: Vec<Step>,
}

/// The record of the change a call is making.
#[derive(Debug)]
pub struct Journal {
    dir: PathBuf,
    id: String,
    state: &'static str,
}

fn state_err(e: &std::io::Error) -> ToolError {
    ToolError::new(
        ErrorCode::IoError,
        format!("the session state could not be written (the change journal): {e}"),
    )
}

/// Flushes the entries of `dir` (best effort: not every host can open a directory).
fn sync_dir(dir: &Path) {
    if let Ok(f) = fs::File::open(dir) {
        let _ = f.sync_all();
    }
}

impl Journal {
    /// Writes the record of `steps`, flushed, under its `open` name.
    ///
    /// # Errors
    /// `IO_ERROR` when the state directory cannot be written; nothing has changed yet.
    pub fn begin(state_dir: &Path, steps: Vec<Step>) -> ToolResult<Journal> {
        let dir = state_dir.join(TXN_DIR);
        fs::create_dir_all(&dir).map_err(|e| state_err(&e))?;
        let id = crate::rules::path::temp_suffix();
        let record = Record { version: 1, steps };
        let json = serde_json::to_vec(&record).map_err(|e| state_err(&e.into()))?;
        let new = dir.join(format!("{id}.{NEW}"));
        let written = fs::File::create_new(&new).and_then(|mut f| {
            f.write_all(&json)?;
            f.sync_all()
        });
        let opened = written.and_then(|()| fs::rename(&new, dir.join(format!("{id}.{OPEN}"))));
        if let Err(e) = opened {
            let _ = fs::remove_file(&new);
            return Err(state_err(&e));
        }
        sync_dir(&dir);
        Ok(Journal {
            dir,
            id,
            state: OPEN,
        })
    }

    fn path(&self, state: &str) -> PathBuf {
        self.dir.join(format!("{}.{state}", self.id))
    }

    /// Marks the change decided: from here a crash is rolled forward.
    ///
    /// # Errors
    /// `IO_ERROR` when the mark cannot be made; the change is then abandoned.
    pub fn commit(&mut self) -> ToolResult<()> {
        fs::rename(self.path(OPEN), self.path(COMMIT)).map_err(|e| state_err(&e))?;
        sync_dir(&self.dir);
        self.state = COMMIT;
        Ok(())
    }

    /// Removes the record: the call is over and left nothing to recover.
    pub fn end(self) {
        let _ = fs::remove_file(self.path(self.state));
    }
}

/// Whether this call may recover records: it holds the lock (see the module docs).
fn may_recover(s: &Session, txn: &Path, mutating: bool) -> bool {
    match &s.lock_token {
        Some(token) => fs::read_to_string(txn.join(HOLDER)).is_ok_and(|h| h.trim() == token),
        None => mutating,
    }
}

/// Recovers every record a killed call left (see the module docs), when this call may.
/// `mutating` tells whether the call changes files. Nothing is reported: what recovery
/// touched may be hidden from the agent.
pub fn recover(s: &Session, mutating: bool) {
    let Some(state) = &s.state_dir else { return };
    // A read-only session cannot change the repository: the next writable one recovers.
    // Checked before any look at the records: most calls may not recover, and a call
    // that may costs a listing of the state directory.
    if s.policy.config.read_only {
        return;
    }
    let txn = state.join(TXN_DIR);
    if !may_recover(s, &txn, mutating) {
        return;
    }
    let legacy = state.join(LEGACY);
    let records: Vec<(PathBuf, String)> = fs::read_dir(&txn)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let (_, kind) = name.rsplit_once('.')?;
            [NEW, OPEN, COMMIT]
                .contains(&kind)
                .then(|| (e.path(), kind.to_string()))
        })
        .collect();
    let has_legacy = !s.legacy_settled.load(std::sync::atomic::Ordering::Relaxed) && {
        let there = legacy.exists();
        if !there {
            s.legacy_settled
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
        there
    };
    if records.is_empty() && !has_legacy {
        return;
    }
    for (path, kind) in records {
        let steps = fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice::<Record>(&b).ok())
            .map(|r| r.steps)
            .unwrap_or_default();
        let settled = match kind.as_str() {
            // Written before any temporary file exists: nothing to undo.
            NEW => true,
            COMMIT => roll_forward(s, &steps),
            _ => roll_back(s, &steps),
        };
        // A record whose steps could not all be done is kept for the next call.
        if settled {
            let _ = fs::remove_file(&path);
        }
    }
    if has_legacy {
        recover_legacy(s, &legacy);
    }
}

/// The directory of a step, reached without following links; `None` when it is gone or
/// the record is not one of ours.
fn step_dir(s: &Session, step: &Step) -> Option<std::sync::Arc<crate::fs::port::Dir>> {
    if !is_temp_name(&step.temp) || is_temp_name(&step.name) {
        return None;
    }
    let dir = LogicalPath::parse_dir(&step.dir).ok()?;
    s.fs.open_dir(&dir).ok()
}

/// The sha256 of the regular file `name` in `dir`; `Ok(None)` when nothing is there,
/// `Err(())` when something else or something unreadable is.
fn hash_at(s: &Session, dir: &crate::fs::port::Dir, name: &str) -> Result<Option<String>, ()> {
    let max = s.policy.limits().max_write_bytes.saturating_add(1);
    match dir.stat_at(name) {
        Ok(None) => Ok(None),
        Ok(Some(st)) if st.is_file() => dir
            .read_file(name, max)
            .map(|(d, _)| Some(s.fs.services().sha256_hex(&d)))
            .map_err(|_| ()),
        _ => Err(()),
    }
}

/// Whether a removal or rename left nothing to do (done, or the name was already gone).
fn done(r: std::io::Result<()>) -> bool {
    r.is_ok() || r.is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
}

/// Removes the temporary files of `steps`; false when one could not be removed.
fn roll_back(s: &Session, steps: &[Step]) -> bool {
    let mut settled = true;
    for step in steps {
        if let Some(dir) = step_dir(s, step) {
            settled &= done(dir.unlink(&step.temp));
        }
    }
    settled
}

/// Finishes the renames and deletions of `steps`; false when a step could not be done.
fn roll_forward(s: &Session, steps: &[Step]) -> bool {
    let mut settled = true;
    for step in steps {
        let Some(dir) = step_dir(s, step) else {
            continue;
        };
        // The target must still be as the call found it: a later writer's content stays.
        let target_as_planned = hash_at(s, &dir, &step.name) == Ok(step.old.clone());
        match &step.new {
            Some(new) => {
                let temp_complete = hash_at(s, &dir, &step.temp) == Ok(Some(new.clone()));
                if !(temp_complete
                    && target_as_planned
                    && dir.rename(&step.temp, &step.name).is_ok())
                {
                    settled &= done(dir.unlink(&step.temp));
                }
            }
            None => {
                if target_as_planned && step.old.is_some() {
                    settled &= done(dir.unlink(&step.name));
                }
                settled &= done(dir.unlink(&step.temp));
            }
        }
    }
    settled
}

/// Removes the temporary files named by an earlier version's journal, then the journal.
fn recover_legacy(s: &Session, journal: &Path) {
    let names: Vec<String> = fs::read(journal)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    for n in names {
        let (parent, name) = n.rsplit_once('/').unwrap_or(("", n.as_str()));
        let Ok(parent) = LogicalPath::parse_dir(parent) else {
            continue;
        };
        if is_temp_name(name) {
            if let Ok(dir) = s.fs.open_dir(&parent) {
                let _ = dir.unlink(name);
            }
        }
    }
    let _ = fs::remove_file(journal);
}

#[cfg(all(test, unix))]
mod tests;
