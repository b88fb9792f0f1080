//! The repository's mutation lock, and the hand-over of crash recovery to the component.
//!
//! Calls that change files hold an exclusive `flock` on the repository directory, shared by
//! every session and process that uses file-tools on it. A change the component was
//! making when its process was killed is left as a record in the state directory's `txn`
//! folder (see the component's `journal` module), to be finished or undone before any
//! other call. Only a lock holder may do that (a record of a live call in another process
//! looks like a dead one), so whenever records are pending the host takes the lock for
//! the call, whatever the tool, and writes the session's token to `txn/holder`: the
//! component recovers when that file holds the token it was given, and the host removes
//! the file again before it lets the lock go.

use std::fs::File;
use std::path::{Path, PathBuf};

/// The state directory's folder of change records (the component's `journal::TXN_DIR`).
const TXN_DIR: &str = "txn";
/// The file naming the lock holder (the component's `journal::HOLDER`).
const HOLDER: &str = "holder";

/// The lock, held until dropped.
#[derive(Debug)]
pub(super) struct MutationLock {
    _file: File,
    /// The holder file written for this call, removed before the lock is released.
    holder: Option<PathBuf>,
}

impl Drop for MutationLock {
    fn drop(&mut self) {
        if let Some(h) = &self.holder {
            let _ = std::fs::remove_file(h);
        }
    }
}

/// Whether the state directory holds a record of a change a killed call left.
pub(super) fn pending(state: &Path) -> bool {
    std::fs::read_dir(state.join(TXN_DIR))
        .is_ok_and(|d| d.filter_map(Result::ok).any(|e| e.file_name() != HOLDER))
}

/// Takes the lock on `repo` (waiting for it). With `state` and `token`, and records
/// pending once the lock is held, names this session the holder.
///
/// # Errors
/// When the repository cannot be opened or locked, or the holder file cannot be written.
pub(super) fn take(
    repo: &cap_std::fs::Dir,
    state: Option<(&Path, &str)>,
) -> std::io::Result<MutationLock> {
    // flock on the directory itself: every open of it is a separate lock holder, so
    // threads, sessions and processes all serialise, and nothing is created in the repo.
    // Opened afresh through the held directory, not by path: a repository renamed away and
    // replaced by another directory keeps its lock with the sessions that hold it.
    let file = File::from(rustix::fs::openat(
        repo,
        ".",
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )?);
    file.lock()?;
    let mut lock = MutationLock {
        _file: file,
        holder: None,
    };
    if let Some((state, token)) = state.filter(|(s, _)| pending(s)) {
        let path = state.join(TXN_DIR).join(HOLDER);
        std::fs::write(&path, token)?;
        lock.holder = Some(path);
    }
    Ok(lock)
}
