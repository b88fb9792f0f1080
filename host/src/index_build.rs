//! Building the search index outside the calls that use it.
//!
//! The component makes the index: a search that reads every file the policy lets a search
//! read records each one (see the README's "Search index"). [`build`] runs that search in
//! a session of its own; [`spawn`] does it on a thread, so that a long-lived host (the MCP
//! server) has the index ready without holding up a call. While a build runs it is
//! announced in the state directory ([`file_tools_contract::INDEX_BUILDING`], touched as
//! the build goes): a search in another instance that finds no index to load then scans
//! without recording, instead of building a second index beside it. A build that dies
//! leaves an announcement that goes stale in seconds.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::call::{CallOptions, Progress, ProgressUpdate};
use crate::session::Session;
use crate::SessionBuilder;
use crate::ToolError;

/// Where in the state directory a build is announced, and how long an announcement holds
/// after its last touch.
pub use file_tools_contract::{INDEX_BUILDING, INDEX_BUILDING_FRESH_SECS};

/// How often a running build touches its announcement (well inside its freshness).
const TOUCH_EVERY: Duration = Duration::from_secs(2);

/// The announcement of a build under way; removed when dropped.
#[derive(Debug)]
pub struct Announcement {
    path: PathBuf,
}

impl Announcement {
    /// Announces a build in `state_dir` now.
    ///
    /// # Errors
    /// The state directory cannot be written.
    pub fn new(state_dir: &Path) -> std::io::Result<Self> {
        let path = state_dir.join(file_tools_contract::INDEX_BUILDING);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let a = Announcement { path };
        a.make()?;
        Ok(a)
    }

    /// Makes the announcement afresh: whatever is at its name is removed (a link itself,
    /// never what it points to), and a new empty file is created there, refused if
    /// anything took the name meanwhile, so nothing is ever written through a link.
    fn make(&self) -> std::io::Result<()> {
        let _ = std::fs::remove_file(&self.path);
        std::fs::File::options()
            .write(true)
            .create_new(true)
            .open(&self.path)
            .map(drop)
    }

    /// Says again that the build is under way (a new file, with a new time).
    pub fn touch(&self) {
        let _ = self.make();
    }
}

impl Drop for Announcement {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Builds (or brings up to date) the index of `session`'s repository under its policy,
/// announcing the build while it runs, and passes the search's progress to `progress`.
/// The answer is the search's: `files_searched` and `skipped` say what was read.
/// `session` is to be opened with [`crate::SessionBuilder::index_builder`]: any other
/// session's searches scan while a build is announced, so it would record nothing.
///
/// # Errors
/// The search's error (for example a wall-clock or fuel limit).
pub fn build(
    session: &mut Session,
    progress: Option<Arc<dyn Progress>>,
) -> Result<Value, ToolError> {
    // Held by the progress relay, so withdrawn when the call's options are dropped.
    let announced = session.state_dir().and_then(|d| Announcement::new(d).ok());
    let last_touch = Mutex::new(Instant::now());
    let relay = move |u: ProgressUpdate| {
        if let (Some(a), Ok(mut last)) = (&announced, last_touch.lock()) {
            if last.elapsed() >= TOUCH_EVERY {
                a.touch();
                *last = Instant::now();
            }
        }
        if let Some(p) = &progress {
            p.update(u);
        }
    };
    // A literal no file holds: every file is read once and recorded, no line is returned.
    // Files already recorded and unchanged are not read again.
    let probe = format!("file-tools-index-probe-{:x}", std::process::id());
    let args = json!({"query": probe, "output": "count"}).to_string();
    let options = CallOptions::new().progress(Arc::new(relay));
    let answer = session.call_with("search_text", &args, &options);
    drop(options);
    answer
}

/// [`build`] on a new thread, in a session `builder` opens there as an
/// [index builder](crate::SessionBuilder::index_builder), then `done` with the build's
/// answer or why it could not run. The build is announced in the builder's state
/// directory before this returns, so that a search made right after does not start a
/// second one. A builder without a state directory has nowhere to keep the index: `done`
/// hears so at once, and nothing is built.
///
/// # Errors
/// The thread cannot be started.
pub fn spawn(
    builder: SessionBuilder,
    done: impl FnOnce(Result<Value, String>) + Send + 'static,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    let Some(state_dir) = builder.state_dir_given() else {
        return std::thread::Builder::new().spawn(move || {
            done(Err("no state directory to keep the index in".into()));
        });
    };
    let early = Announcement::new(state_dir).ok();
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
