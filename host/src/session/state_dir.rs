//! The session's private state directory: the baseline (`index.json`, `blobs/`), the
//! `changes_since` snapshots (`changes/`), the search index (`index/`), the journal of
//! pending temporary files, and `repository-id`, which binds all of it to one repository.
//!
//! - **Owner only.** The directory and its subdirectories are `0700`, files `0600` (see
//!   [`crate::private_dir`]). The component writes through WASI, which cannot set modes:
//!   what it creates is tightened after every call (and the directories it lands in admit
//!   no one else meanwhile).
//! - **One repository.** `repository-id` records the identity (device, inode, birth time)
//!   of the repository directory the session opened. Another directory at the same path
//!   (the first renamed away, a new one made) is refused, so it never receives the first
//!   one's `revert`.
//! - **Reset removes only ours.** [`reset`] removes the names file-tools makes and leaves
//!   anything else in the directory.

use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::SystemTime;

use crate::error::HostError;
use crate::private_dir;

/// The file that names the repository a state directory belongs to.
const REPO_ID: &str = "repository-id";
/// Files the component keeps at the top of the state directory.
const TOP_FILES: [&str; 3] = ["index.json", "pending-temps.json", REPO_ID];
/// Subdirectories the component keeps, each holding files named by a sha256 (of their
/// content, or for the search index of what it is bound to); the index's also holds the
/// announcement of a build under way, and `cookies` the host watch's cookie files.
const SUBDIRS: [&str; 4] = [
    "blobs",
    CHANGES,
    file_tools_contract::INDEX_DIR_NAME,
    COOKIES,
];
/// The `changes_since` snapshots (the component's `changes/store.rs`).
const CHANGES: &str = "changes";
/// The host watch's cookie files (`tree_watch`): every file in it is the watch's.
const COOKIES: &str = "cookies";
/// The crash journal's directory (the component's `journal::TXN_DIR`): records of changes
/// under way, and the lock holder's `holder` file.
const TXN: &str = "txn";

/// The identity of an open directory: device, inode and (where the file system keeps it)
/// birth time, so that a directory made later at a reused inode number differs too.
pub(crate) fn identity(f: &fs::File) -> io::Result<String> {
    let m = f.metadata()?;
    let born = m
        .created()
        .ok()
        .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    Ok(format!("{:x}-{:x}-{born:x}", m.dev(), m.ino()))
}

/// The session's private state directory.
#[derive(Debug)]
pub(super) struct StateDir {
    pub(super) path: PathBuf,
    remove_on_drop: bool,
    /// Modification times of the directories as last tightened (top, [`SUBDIRS`], [`TXN`]):
    /// a directory whose time has not moved holds nothing new to tighten.
    seen: Mutex<[Option<SystemTime>; 6]>,
    /// The search index's folder when the host gave one of its own (shared by the sessions
    /// of a repository): private like the rest, and tightened with it.
    pub(super) shared_index: Option<PathBuf>,
}

fn config(dir: &Path, e: impl std::fmt::Display) -> HostError {
    HostError::Config(format!("state directory {}: {e}", dir.display()))
}

/// Refuses `dir` (the state directory or the index folder, `what`) when it lies inside
/// the repository `repo` or holds it, judged before anything is made: where `dir` does not
/// exist yet, by its nearest existing ancestor as resolved, with the rest of its path.
pub(super) fn check_outside(dir: &Path, repo: &Path, what: &str) -> Result<PathBuf, HostError> {
    let mut existing = dir;
    let mut rest = Vec::new();
    let resolved = loop {
        match fs::canonicalize(existing) {
            Ok(p) => break p,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let (Some(name), Some(parent)) = (existing.file_name(), existing.parent()) else {
                    return Err(config(dir, "cannot tell where it leads"));
                };
                rest.push(name);
                existing = if parent.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    parent
                };
            }
            Err(e) => return Err(config(dir, e)),
        }
    };
    let path = rest.iter().rev().fold(resolved, |p, n| p.join(n));
    if path.starts_with(repo) || repo.starts_with(&path) {
        return Err(HostError::Config(format!(
            "the {what} {} must lie outside the repository {}",
            path.display(),
            repo.display()
        )));
    }
    Ok(path)
}

impl StateDir {
    /// The directory `dir` (made when missing) for the repository `repo` whose identity is
    /// `repo_id`.
    ///
    /// # Errors
    /// `HostError::Config` when it lies inside the repository, belongs to another user,
    /// cannot be made private, or holds the session of another repository.
    pub(super) fn given(dir: &Path, repo: &Path, repo_id: &str) -> Result<StateDir, HostError> {
        check_outside(dir, repo, "state directory")?;
        private_dir::ensure_dir(dir).map_err(|e| config(dir, e))?;
        // Again as made (a link may have appeared on the way).
        let path = fs::canonicalize(dir).map_err(|e| config(dir, e))?;
        check_outside(&path, repo, "state directory")?;
        private_dir::tighten_dir(&path).map_err(|e| config(&path, e))?;
        let state = StateDir::new(path, false)?;
        state.bind(repo, repo_id)?;
        Ok(state)
    }

    /// A new directory in the system's temporary directory, removed with the session.
    ///
    /// # Errors
    /// `HostError::Config` when it cannot be made.
    pub(super) fn temporary() -> Result<StateDir, HostError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let name = format!(
            "file-tools-state-{}-{}-{nanos}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let path = std::env::temp_dir().join(name);
        std::os::unix::fs::DirBuilderExt::mode(&mut fs::DirBuilder::new(), private_dir::DIR_MODE)
            .create(&path)
            .map_err(|e| config(&path, e))?;
        // Made private above, and new: nothing to tighten yet; the component makes the
        // subdirectories it needs when it first needs them (most sessions never do).
        Ok(StateDir {
            path,
            remove_on_drop: true,
            seen: Mutex::new([None; 6]),
            shared_index: None,
        })
    }

    fn new(path: PathBuf, remove_on_drop: bool) -> Result<StateDir, HostError> {
        let state = StateDir {
            path,
            remove_on_drop,
            seen: Mutex::new([None; 6]),
            shared_index: None,
        };
        for sub in SUBDIRS {
            private_dir::ensure_dir(&state.path.join(sub)).map_err(|e| config(&state.path, e))?;
        }
        state.tighten();
        Ok(state)
    }

    /// Keeps the search index in `dir` (made when missing) instead of `index/`: a private
    /// folder outside the repository `repo`, which the sessions of that repository may
    /// share (each index file there is bound to the repository and policy it was made
    /// under, so no session uses another's).
    ///
    /// # Errors
    /// `HostError::Config` as for the state directory itself.
    pub(super) fn share_index(&mut self, dir: &Path, repo: &Path) -> Result<(), HostError> {
        check_outside(dir, repo, "index folder")?;
        private_dir::ensure_dir(dir).map_err(|e| config(dir, e))?;
        let path = fs::canonicalize(dir).map_err(|e| config(dir, e))?;
        check_outside(&path, repo, "index folder")?;
        private_dir::tighten_dir(&path).map_err(|e| config(&path, e))?;
        self.shared_index = Some(path);
        self.tighten();
        Ok(())
    }

    /// The search index's folder: the shared one, else `index/` here.
    pub(super) fn index_dir(&self) -> PathBuf {
        self.shared_index
            .clone()
            .unwrap_or_else(|| self.path.join(file_tools_contract::INDEX_DIR_NAME))
    }

    /// Records `repo_id` as the directory's repository, or checks it against the one there.
    /// A directory from before identities were kept takes this repository's.
    fn bind(&self, repo: &Path, repo_id: &str) -> Result<(), HostError> {
        let file = self.path.join(REPO_ID);
        match fs::read_to_string(&file) {
            Ok(found) if found.trim() == repo_id => Ok(()),
            Ok(_) => Err(HostError::Config(format!(
                "the state directory {} holds the session of another repository: the directory now at {} is not the one whose changes it recorded (that one was renamed or replaced). Its baseline does not apply here; reset it (`file-tools session reset`) or use another session name or state directory",
                self.path.display(),
                repo.display()
            ))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                private_dir::write_new(&file, format!("{repo_id}\n").as_bytes())
                    .map_err(|e| config(&self.path, e))
            }
            Err(e) => Err(config(&self.path, e)),
        }
    }

    /// Takes group and other access away from whatever the component created since the
    /// last time. Best effort: what fails here is tried again after the next call, and
    /// the directories admit no one else meanwhile.
    pub(super) fn tighten(&self) {
        let Ok(mut seen) = self.seen.lock() else {
            return;
        };
        let mut dirs = vec![
            self.path.clone(),
            self.path.join(SUBDIRS[0]),
            self.path.join(SUBDIRS[1]),
            self.path.join(SUBDIRS[2]),
            self.path.join(TXN),
        ];
        dirs.extend(self.shared_index.clone());
        let now = SystemTime::now();
        for (dir, last) in dirs.iter().zip(seen.iter_mut()) {
            let Ok(meta) = fs::symlink_metadata(dir) else {
                continue;
            };
            let Ok(time) = meta.modified() else {
                continue;
            };
            if meta.is_dir() && *last != Some(time) {
                // A subdirectory removed and made again by the component came with WASI's
                // mode too.
                let done = private_dir::tighten_dir(dir).is_ok() && tighten_entries(dir).is_ok();
                // A time this recent may not move for a change within the same clock
                // tick: look again next time.
                let settled = now.duration_since(time).is_ok_and(|d| d.as_secs() >= 2);
                *last = (done && settled).then_some(time);
            }
        }
    }
}

fn tighten_entries(dir: &Path) -> io::Result<()> {
    for e in fs::read_dir(dir)? {
        private_dir::tighten_file(&e?.path())?;
    }
    Ok(())
}

impl Drop for StateDir {
    fn drop(&mut self) {
        if self.remove_on_drop {
            let _ = fs::remove_dir_all(&self.path);
        }
    }
}

/// What [`reset`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResetOutcome {
    /// Whether the directory existed.
    pub existed: bool,
    /// Whether the directory itself is gone (it held nothing but the session's files).
    pub removed: bool,
    /// Entries that are not file-tools' own, left where they were (relative paths).
    pub kept: Vec<String>,
}

/// Whether file-tools makes a file called `name` in the state directory's top (`top`) or in
/// one of its subdirectories.
fn ours(name: &str, top: bool) -> bool {
    file_tools_contract::is_state_temp_name(name)
        || if top {
            TOP_FILES.contains(&name)
        } else {
            file_tools_contract::is_snapshot_name(name)
        }
}

/// Whether `name` is a `changes/` snapshot a prune condemned (`changes_since` renames a
/// snapshot so before it removes it).
fn condemned(name: &str) -> bool {
    file_tools_contract::condemned_snapshot(name).is_some()
}

/// Removes file-tools' own files from the subdirectory `path` (called `name`), then the
/// subdirectory when nothing else is left; returns what it left (relative paths). A
/// process still using the state directory may rename or add files meanwhile (a prune
/// renames what it condemns): a file gone is passed over, and a directory that is not
/// empty after the pass is gone over again, twice at most.
fn reset_subdir(path: &Path, name: &str) -> io::Result<Vec<String>> {
    let mut pass = 0;
    loop {
        let mut kept = Vec::new();
        for inner in fs::read_dir(path)? {
            let inner = inner?;
            let n = inner.file_name().to_string_lossy().into_owned();
            // A journal record of a change a killed call left is kept: the next
            // session finishes or undoes that change from it.
            let mine = match name {
                TXN => n == "holder",
                COOKIES => true,
                file_tools_contract::INDEX_DIR_NAME => {
                    n == file_tools_contract::INDEX_BUILDING || ours(&n, false)
                }
                CHANGES => ours(&n, false) || condemned(&n),
                _ => ours(&n, false),
            };
            let is_file = match inner.file_type() {
                Ok(t) => t.is_file(),
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            };
            if is_file && mine {
                match fs::remove_file(inner.path()) {
                    Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                    _ => {}
                }
            } else {
                kept.push(format!("{name}/{n}"));
            }
        }
        if !kept.is_empty() {
            return Ok(kept);
        }
        match fs::remove_dir(path) {
            Err(e) if e.kind() == io::ErrorKind::DirectoryNotEmpty && pass < 2 => pass += 1,
            Err(e) => return Err(e),
            Ok(()) => return Ok(kept),
        }
    }
}

/// Removes the session state in `dir`: only the files file-tools makes there (never
/// through a link), then the directories left empty. Anything else stays and is listed.
///
/// # Errors
/// When a file of the session's cannot be removed, or `dir` is not a directory.
pub fn reset(dir: &Path) -> io::Result<ResetOutcome> {
    let meta = match fs::symlink_metadata(dir) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Ok(ResetOutcome {
                existed: false,
                removed: false,
                kept: Vec::new(),
            })
        }
        Err(e) => return Err(e),
    };
    if !meta.is_dir() {
        return Err(io::Error::other(format!(
            "{} is not a directory; nothing was removed",
            dir.display()
        )));
    }
    let mut kept = Vec::new();
    for e in fs::read_dir(dir)? {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        let ty = e.file_type()?;
        if ty.is_dir() && (SUBDIRS.contains(&name.as_str()) || name == TXN) {
            kept.extend(reset_subdir(&e.path(), &name)?);
        } else if ty.is_file() && ours(&name, true) {
            fs::remove_file(e.path())?;
        } else {
            kept.push(name);
        }
    }
    kept.sort();
    let removed = kept.is_empty();
    if removed {
        fs::remove_dir(dir)?;
    }
    Ok(ResetOutcome {
        existed: true,
        removed,
        kept,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_names_file_tools_makes_are_its_own() {
        let sha = "a".repeat(64);
        assert!(ours("index.json", true));
        assert!(ours(".0123456789abcdef.tmp", true));
        assert!(ours(&sha, false));
        assert!(condemned(&format!("{sha}.0123456789abcdef.gone")));
        assert!(!ours(&format!("{sha}.0123456789abcdef.gone"), false));
        assert!(!condemned(&format!("{sha}.gone")));
        assert!(!condemned(&format!("{sha}.0123456789abcdeg.gone")));
        assert!(!condemned(&format!(
            "{}.0123456789abcdef.gone",
            "a".repeat(63)
        )));
        assert!(!ours(&sha, true));
        assert!(!ours("index.json", false));
        assert!(!ours("notes.txt", true));
        assert!(!ours(".0123456789abcdefg.tmp", false));
        assert!(!ours(&"a".repeat(63), false));
    }

    #[test]
    fn reset_never_reaches_through_a_link() {
        let tmp = tempfile::tempdir().unwrap();
        let (state, elsewhere) = (tmp.path().join("state"), tmp.path().join("elsewhere"));
        let sha = "b".repeat(64);
        fs::create_dir_all(state.join("changes")).unwrap();
        fs::create_dir_all(&elsewhere).unwrap();
        fs::write(elsewhere.join(&sha), b"not the session's").unwrap();
        fs::write(elsewhere.join("index.json"), b"{}").unwrap();
        std::os::unix::fs::symlink(&elsewhere, state.join("blobs")).unwrap();
        std::os::unix::fs::symlink(elsewhere.join("index.json"), state.join("index.json")).unwrap();
        fs::write(state.join("changes").join(&sha), b"ours").unwrap();
        let r = reset(&state).unwrap();
        assert_eq!(r.kept, vec!["blobs".to_string(), "index.json".to_string()]);
        assert!(!r.removed);
        assert!(elsewhere.join(&sha).exists() && elsewhere.join("index.json").exists());
        // Positive control: the session's own snapshot, in a real directory, is gone.
        assert!(!state.join("changes").exists());
    }

    #[test]
    fn reset_removes_the_index_announcement_and_the_watch_cookies() {
        let tmp = tempfile::tempdir().unwrap();
        let state = tmp.path().join("state");
        fs::create_dir_all(state.join("index")).unwrap();
        fs::create_dir_all(state.join(COOKIES)).unwrap();
        fs::write(
            state
                .join("index")
                .join(file_tools_contract::INDEX_BUILDING),
            b"",
        )
        .unwrap();
        fs::write(state.join("index").join("c".repeat(64)), b"index").unwrap();
        fs::write(state.join(COOKIES).join("123-7f00-4"), b"").unwrap();
        let r = reset(&state).unwrap();
        assert!(r.removed, "kept {:?}", r.kept);
        assert!(!state.exists());
        // Control: a stranger in the index's directory is kept, and named.
        fs::create_dir_all(state.join("index")).unwrap();
        fs::write(state.join("index").join("notes.txt"), b"mine").unwrap();
        let r = reset(&state).unwrap();
        assert_eq!(r.kept, vec!["index/notes.txt".to_string()]);
    }
}
