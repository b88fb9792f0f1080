//! Building the search index outside the calls that use it.
//!
//! The component makes the index: a search that reads every file the policy lets a search
//! read records each one (see the README's "Search index"). [`build`] runs that search in
//! a session of its own; [`spawn`] does it on a thread, so that a long-lived host (the MCP
//! server) has the index ready without holding up a call. While a build runs it is
//! announced in the index folder ([`file_tools_contract::INDEX_BUILDING`], made
//! afresh every two seconds while the build runs): a search in another instance that finds no index to load then scans
//! without recording, instead of building a second index beside it. A build that dies
//! leaves an announcement that goes stale in seconds.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

use serde_json::{json, Value};

use crate::call::{CallOptions, Progress};
use crate::session::Session;
use crate::SessionBuilder;
use crate::{ErrorCode, ToolError};

/// The index folder's name in a state directory, where in the folder a build is announced,
/// and how long an announcement holds after its last touch.
pub use file_tools_contract::{INDEX_BUILDING, INDEX_BUILDING_FRESH_SECS, INDEX_DIR_NAME};

/// How often a running build touches its announcement (well inside its freshness).
const TOUCH_EVERY: Duration = Duration::from_secs(2);

/// The announcement of a build under way: made afresh every 2 s (`TOUCH_EVERY`) by a thread of
/// its own while it is held (whatever the build is doing: opening its session, walking,
/// or saving an index of hundreds of megabytes, which reports no progress), and removed
/// when dropped.
#[derive(Debug)]
pub struct Announcement {
    /// The announcement, and the name its next file is made under before it takes the
    /// announcement's place.
    path: Arc<(PathBuf, PathBuf)>,
    /// Dropping it stops the touching thread.
    stop: Option<mpsc::Sender<()>>,
    toucher: Option<JoinHandle<()>>,
}

impl Announcement {
    /// Announces a build in the index folder `index_dir` now, and keeps announcing it
    /// until dropped.
    ///
    /// # Errors
    /// The folder cannot be written, or the touching thread cannot be started.
    pub fn new(index_dir: &Path) -> std::io::Result<Self> {
        // Named as file-tools' temporary files are (what `session reset` removes), and
        // apart from any other announcement's.
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let fresh = format!(".{:08x}{nanos:08x}.tmp", std::process::id());
        let path = Arc::new((
            index_dir.join(file_tools_contract::INDEX_BUILDING),
            index_dir.join(fresh),
        ));
        // Private from the start, as the session makes it (the build's session is opened
        // after this).
        crate::private_dir::ensure_dir(index_dir)?;
        make(&path)?;
        let (stop, stopped) = mpsc::channel::<()>();
        let touched = Arc::clone(&path);
        let toucher = std::thread::Builder::new()
            .name("file-tools index announcement".into())
            .spawn(move || {
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(TOUCH_EVERY) {
                    let _ = make(&touched);
                }
            });
        let toucher = match toucher {
            Ok(t) => t,
            Err(e) => {
                let _ = std::fs::remove_file(&path.0);
                return Err(e);
            }
        };
        Ok(Announcement {
            path,
            stop: Some(stop),
            toucher: Some(toucher),
        })
    }
}

/// Makes the announcement `path.0` afresh: a new empty file is created at `path.1` (whatever
/// was there removed first: a link itself, never what it points to; and refused if
/// anything took the name meanwhile, so nothing is ever written through a link), then
/// renamed over the announcement, which replaces whatever is at its name in one step: a
/// search that looks meanwhile finds the old file or the new one, never none (it would
/// build a second index). A new file has a new time: that is the touch.
fn make(path: &(PathBuf, PathBuf)) -> std::io::Result<()> {
    let (at, fresh) = path;
    let _ = std::fs::remove_file(fresh);
    let made = std::fs::File::options()
        .write(true)
        .create_new(true)
        .open(fresh)
        .and_then(|_| std::fs::rename(fresh, at));
    if made.is_err() {
        let _ = std::fs::remove_file(fresh);
    }
    made
}

impl Drop for Announcement {
    fn drop(&mut self) {
        // The thread is stopped and joined first, so that it cannot make the file again
        // after it is removed.
        drop(self.stop.take());
        if let Some(t) = self.toucher.take() {
            let _ = t.join();
        }
        let _ = std::fs::remove_file(&self.path.0);
    }
}

/// At most this many calls make one build: each after the first goes on from what the
/// one before saved, and only while each saves more.
const MAX_CALLS: usize = 8;

/// Builds (or brings up to date) the index of `session`'s repository under its policy,
/// announcing the build while it runs, and passes the search's progress to `progress`.
/// The answer is the search's: `files_searched` and `skipped` say what was read.
/// `session` is to be opened with [`crate::SessionBuilder::index_builder`]: any other
/// session's searches scan while a build is announced, so it would record nothing.
///
/// A tree too large for one call's limits is built over several: the builder's search
/// saves what it has recorded as it goes
/// ([`crate::SessionBuilder::index_checkpoint_every`]), and when a call ends on a limit
/// having saved more, the next call reads only the files the index lacks.
///
/// # Errors
/// The last call's error (for example a wall-clock or fuel limit it reached without
/// saving anything more than the call before).
pub fn build(
    session: &mut Session,
    progress: Option<Arc<dyn Progress>>,
) -> Result<Value, ToolError> {
    let index_dir = session.index_dir();
    // Withdrawn when the build returns, whatever it returns.
    let _announced = index_dir.as_deref().and_then(|d| Announcement::new(d).ok());
    // A literal no file holds: every file is read once and recorded, no line is returned.
    // Files already recorded and unchanged are not read again.
    let probe = format!("file-tools-index-probe-{:x}", std::process::id());
    let args = json!({"query": probe, "output": "count"}).to_string();
    let mut options = CallOptions::new();
    if let Some(p) = progress {
        options = options.progress(p);
    }
    let mut saved = index_dir.as_deref().map(saved_indexes);
    let mut answer = session.call_with("search_text", &args, &options);
    for _ in 1..MAX_CALLS {
        match &answer {
            Err(e) if e.code == ErrorCode::LimitExceeded => {}
            _ => break,
        }
        let now = index_dir.as_deref().map(saved_indexes);
        if now == saved {
            // Nothing kept: another call would end the same way.
            break;
        }
        saved = now;
        answer = session.call_with("search_text", &args, &options);
    }
    answer
}

/// The index files in the index folder (named by 64 hex digits), with their sizes and
/// times: what a save changes. Nothing else there is progress: not the announcement, nor
/// the temporary file of a save that a limit cut short before its rename.
fn saved_indexes(index_dir: &Path) -> Vec<(std::ffi::OsString, u64, Option<SystemTime>)> {
    let index_name = |n: &std::ffi::OsStr| {
        n.len() == 64 && n.as_encoded_bytes().iter().all(u8::is_ascii_hexdigit)
    };
    let mut found: Vec<_> = std::fs::read_dir(index_dir)
        .map(|d| {
            d.flatten()
                .filter(|e| index_name(&e.file_name()))
                .filter_map(|e| {
                    let m = e.metadata().ok()?;
                    Some((e.file_name(), m.len(), m.modified().ok()))
                })
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

/// [`build`] on a new thread, in a session `builder` opens there as an
/// [index builder](crate::SessionBuilder::index_builder), then `done` with the build's
/// answer or why it could not run. The build is announced in the builder's index
/// folder before this returns, so that a search made right after does not start a
/// second one. A builder given neither a state directory nor an index folder has nowhere
/// to keep the index, and one whose state directory or index folder lies inside the
/// repository is refused: `done` hears so at once, and nothing is built or made.
///
/// # Errors
/// The thread cannot be started.
pub fn spawn(
    builder: SessionBuilder,
    done: impl FnOnce(Result<Value, String>) + Send + 'static,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    let index_dir = match builder.index_dir_given() {
        Ok(Some(d)) => d,
        Ok(None) => {
            return std::thread::Builder::new().spawn(move || {
                done(Err(
                    "neither a state directory nor an index folder to keep the index in".into(),
                ));
            })
        }
        Err(e) => return std::thread::Builder::new().spawn(move || done(Err(e.to_string()))),
    };
    let early = Announcement::new(&index_dir).ok();
    std::thread::Builder::new()
        .name("file-tools index build".into())
        .spawn(move || {
            let answer = builder
                .index_builder(true)
                .build()
                .map_err(|e| e.to_string())
                .and_then(|mut s| build(&mut s, None).map_err(|e| e.message));
            drop(early);
            done(answer);
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    fn identity(p: &Path) -> Option<(u64, i64, i64)> {
        std::fs::symlink_metadata(p)
            .ok()
            .map(|m| (m.ino(), m.mtime(), m.mtime_nsec()))
    }

    #[test]
    fn an_announcement_makes_its_folder_private() {
        use std::os::unix::fs::PermissionsExt;
        let top = tempfile::tempdir().expect("tempdir");
        let folder = top.path().join("state").join("shared.index");
        let _a = Announcement::new(&folder).expect("announce");
        let mode = std::fs::metadata(&folder)
            .expect("made")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700, "{mode:o}");
    }

    /// While held, the announcement is made afresh by itself (a long save reports no
    /// progress), well inside its freshness, and a search that looks meanwhile always finds
    /// it: the new file takes the name in one step (a search that found it missing would
    /// build a second index beside this one). Dropped, it is gone and stays gone.
    #[test]
    fn a_held_announcement_stays_fresh_is_never_missing_and_goes_when_dropped() {
        assert!(TOUCH_EVERY < Duration::from_secs(INDEX_BUILDING_FRESH_SECS) / 2);
        let folder = tempfile::tempdir().expect("tempdir");
        let at = folder.path().join(INDEX_BUILDING);
        let a = Announcement::new(folder.path()).expect("announce");
        let first = identity(&at).expect("announced at once");
        let until = std::time::Instant::now() + TOUCH_EVERY * 2 + Duration::from_millis(500);
        let (mut looks, mut missed) = (0u64, 0u64);
        while std::time::Instant::now() < until {
            looks += 1;
            if std::fs::symlink_metadata(&at).is_err() {
                missed += 1;
            }
        }
        assert_ne!(identity(&at), Some(first), "not made afresh");
        assert_eq!(missed, 0, "missing at {missed} of {looks} looks");
        drop(a);
        assert!(
            identity(&at).is_none(),
            "the announcement outlived the build"
        );
        // Nothing makes it again after the drop.
        std::thread::sleep(TOUCH_EVERY + Duration::from_millis(300));
        assert!(
            identity(&at).is_none(),
            "the toucher outlived the announcement"
        );
    }
}
