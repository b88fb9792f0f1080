//! A watch on a session's repository: file-system notifications (inotify and its kin,
//! through the `notify` crate) wake a thread that, once the tree has been quiet for a
//! moment, calls `changes_since` with the token it holds and hands the policy-filtered
//! result to a callback. What the tool does not show (ignored, hidden, blocked, secret
//! content) never reaches the callback, and a burst of writes becomes one delivery.
//!
//! The watcher never follows symlinks (notify's default does: it is turned off), drops
//! notifications for paths outside the repository and inside `.git`, and ignores read
//! accesses (its own reads would otherwise wake it). When the system's limit on watches is
//! reached it says so ([`WatchEvent::WatchLimit`]) instead of silently missing changes.

use std::path::{Component, Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use notify::{Config, EventKind, RecommendedWatcher, RecursiveMode, Watcher};

use crate::bindings::agent::file_tools::types::ToolError;
use crate::bindings::exports::agent::file_tools::tools as t;
use crate::error::HostError;
use crate::session::Session;

/// What a watch delivers.
#[derive(Debug)]
#[non_exhaustive]
pub enum WatchEvent {
    /// One page of the changes since the previous delivery (a long list comes as several
    /// pages, in order, each with the same `token`).
    Changes(t::ChangesSinceResult),
    /// The system's limit on file-system watches was reached: changes below some
    /// directories may not wake the watch. Raise the limit (on Linux,
    /// `fs.inotify.max_user_watches`) or watch a smaller `path`; a later delivery still
    /// reports every change since the previous one, as `changes_since` compares the tree
    /// itself.
    WatchLimit(String),
    /// `changes_since` failed (its error; the watch goes on with the token it had).
    Failed(ToolError),
    /// The watch's token expired (its snapshot was pruned: the state directory keeps the
    /// newest few, and other `changes_since` calls in the same session add theirs), so
    /// changes since the previous delivery may have been missed. The watch goes on from
    /// the tree as it is now; a receiver should treat everything it follows as changed.
    Restarted(ToolError),
    /// The notification backend reported another error.
    Backend(String),
}

/// How a watch behaves.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct WatchOptions {
    /// Quiet time after the last notification before `changes_since` runs.
    pub debounce: Duration,
    /// Longest wait after the first notification of a burst, however busy the tree stays.
    pub max_delay: Duration,
    /// The scope of `changes_since`: `path`, `include_hidden`, `respect_ignore` (the
    /// `token`, `cursor` and `max_changes` fields are the watch's own).
    pub scope: t::ChangesSinceArgs,
}

impl Default for WatchOptions {
    fn default() -> Self {
        WatchOptions {
            debounce: Duration::from_millis(200),
            max_delay: Duration::from_secs(2),
            scope: t::ChangesSinceArgs {
                token: None,
                path: None,
                max_changes: None,
                include_hidden: None,
                respect_ignore: None,
                cursor: None,
            },
        }
    }
}

impl WatchOptions {
    /// The same options with another quiet time.
    pub fn debounce(mut self, d: Duration) -> Self {
        self.debounce = d;
        self
    }

    /// The same options with another longest wait.
    pub fn max_delay(mut self, d: Duration) -> Self {
        self.max_delay = d;
        self
    }

    /// The same options watching below `path` (a logical path) only.
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.scope.path = Some(path.into());
        self
    }
}

enum Msg {
    Fs(notify::Result<notify::Event>),
    Stop,
}

/// A running watch; dropping it stops it.
pub struct Watch {
    tx: mpsc::Sender<Msg>,
    thread: Option<JoinHandle<()>>,
    _watcher: RecommendedWatcher,
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watch").finish_non_exhaustive()
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.tx.send(Msg::Stop);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// What a notification means for the watch.
#[derive(Debug, PartialEq, Eq)]
enum Heard {
    /// Something in the repository may have changed.
    Change,
    /// Nothing to act on (outside the repository, inside `.git`, a read).
    Nothing,
    WatchLimit(String),
    Backend(String),
}

/// Judges one notification for the repository at `root` (canonical).
fn hear(root: &Path, res: notify::Result<notify::Event>) -> Heard {
    match res {
        Err(e) => match e.kind {
            notify::ErrorKind::MaxFilesWatch => Heard::WatchLimit(format!(
                "the system's limit on file-system watches was reached ({e}); changes below some directories may not wake the watch"
            )),
            _ => Heard::Backend(e.to_string()),
        },
        Ok(ev) if matches!(ev.kind, EventKind::Access(_)) => Heard::Nothing,
        // No path: the backend lost track (an overflowed queue): look at everything.
        Ok(ev) if ev.paths.is_empty() => Heard::Change,
        Ok(ev) => {
            let inside = |p: &PathBuf| {
                p.strip_prefix(root).is_ok_and(|rel| {
                    !rel.components()
                        .any(|c| matches!(c, Component::Normal(n) if n == ".git"))
                })
            };
            if ev.paths.iter().any(inside) {
                Heard::Change
            } else {
                Heard::Nothing
            }
        }
    }
}

/// Where a watch's `changes_since` calls run: a session behind a lock of its own, or the
/// session an MCP server works in (the `file-tools-mcp` crate's `McpServer`).
pub trait WatchedSession: Send + Sync + 'static {
    /// The repository's directory, when there is one.
    fn repo_dir(&self) -> Option<std::path::PathBuf>;
    /// Runs `changes_since`.
    ///
    /// # Errors
    /// The tool's error, or `INTERNAL` when the session cannot be reached.
    fn changes_since(&self, args: &t::ChangesSinceArgs)
        -> Result<t::ChangesSinceResult, ToolError>;
}

impl WatchedSession for Mutex<Session> {
    fn repo_dir(&self) -> Option<std::path::PathBuf> {
        self.lock().ok()?.repo().map(Path::to_path_buf)
    }

    fn changes_since(
        &self,
        args: &t::ChangesSinceArgs,
    ) -> Result<t::ChangesSinceResult, ToolError> {
        let mut s = self.lock().map_err(|_| {
            ToolError::host(
                crate::bindings::agent::file_tools::types::ErrorCode::Internal,
                "the session's lock is poisoned",
            )
        })?;
        s.changes_since(args)
    }
}

/// Starts watching the repository of `session`, delivering to `deliver` on the watch's
/// own thread. The token is taken before this returns, so every change made after it is
/// reported.
///
/// # Errors
/// `HostError::Config` when the session has no repository, the notification backend
/// cannot start (the watch limit included), or the first `changes_since` fails.
pub fn watch<S: WatchedSession>(
    session: Arc<S>,
    options: WatchOptions,
    mut deliver: impl FnMut(WatchEvent) + Send + 'static,
) -> Result<Watch, HostError> {
    let root = session
        .repo_dir()
        .ok_or_else(|| HostError::Config("the session has no repository".into()))?;
    let (tx, rx) = mpsc::channel::<Msg>();
    let fs_tx = tx.clone();
    let handler = move |res: notify::Result<notify::Event>| {
        let _ = fs_tx.send(Msg::Fs(res));
    };
    let backend =
        |e: notify::Error| HostError::Config(format!("cannot watch {}: {e}", root.display()));
    let mut watcher =
        RecommendedWatcher::new(handler, Config::default().with_follow_symlinks(false))
            .map_err(backend)?;
    watcher
        .watch(&root, RecursiveMode::Recursive)
        .map_err(backend)?;
    // The first token after the watch is in place: nothing falls between the two.
    let mut args = options.scope.clone();
    args.token = None;
    args.cursor = None;
    let first = session
        .changes_since(&args)
        .map_err(|e| HostError::Config(e.message))?;
    let thread = std::thread::Builder::new()
        .name("file-tools-watch".into())
        .spawn(move || {
            let mut token = first.token;
            while let Some(heard) = next_burst(&rx, &root, &options) {
                for h in heard.reports {
                    deliver(h);
                }
                if heard.changed {
                    token = catch_up(&*session, &options.scope, token, &mut deliver);
                }
            }
        })
        .map_err(|e| HostError::Config(format!("cannot start the watch thread: {e}")))?;
    Ok(Watch {
        tx,
        thread: Some(thread),
        _watcher: watcher,
    })
}

/// What one burst of notifications asked for.
struct Burst {
    changed: bool,
    reports: Vec<WatchEvent>,
}

/// Waits for a burst of notifications and its end (quiet for `debounce`, or `max_delay`
/// after its first); `None` when the watch is to stop.
fn next_burst(rx: &mpsc::Receiver<Msg>, root: &Path, o: &WatchOptions) -> Option<Burst> {
    let mut burst = Burst {
        changed: false,
        reports: Vec::new(),
    };
    let mut limit_told = false;
    let mut take = |m: Msg, burst: &mut Burst| -> bool {
        let Msg::Fs(res) = m else {
            return false;
        };
        match hear(root, res) {
            Heard::Change => burst.changed = true,
            Heard::Nothing => {}
            // Once per burst: a limit hit while adding many directories repeats.
            Heard::WatchLimit(m) if !limit_told => {
                limit_told = true;
                burst.reports.push(WatchEvent::WatchLimit(m));
            }
            Heard::WatchLimit(_) => {}
            Heard::Backend(m) => burst.reports.push(WatchEvent::Backend(m)),
        }
        true
    };
    loop {
        let first = rx.recv().ok()?;
        if !take(first, &mut burst) {
            return None;
        }
        if burst.changed || !burst.reports.is_empty() {
            break;
        }
    }
    let end = Instant::now() + o.max_delay;
    loop {
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        match rx.recv_timeout(o.debounce.min(left)) {
            Ok(m) => {
                if !take(m, &mut burst) {
                    return None;
                }
            }
            Err(RecvTimeoutError::Timeout) => break,
            Err(RecvTimeoutError::Disconnected) => return None,
        }
    }
    Some(burst)
}

/// Delivers every page of the changes since `token`; returns the token to hold next.
fn catch_up(
    session: &impl WatchedSession,
    scope: &t::ChangesSinceArgs,
    token: String,
    deliver: &mut impl FnMut(WatchEvent),
) -> String {
    let mut args = scope.clone();
    args.token = Some(token.clone());
    args.cursor = None;
    loop {
        match session.changes_since(&args) {
            Err(e) if e.reason.as_deref() == Some("token_expired") => {
                let mut fresh = scope.clone();
                fresh.token = None;
                fresh.cursor = None;
                return match session.changes_since(&fresh) {
                    Ok(r) => {
                        deliver(WatchEvent::Restarted(e));
                        r.token
                    }
                    Err(again) => {
                        deliver(WatchEvent::Failed(again));
                        token
                    }
                };
            }
            Err(e) => {
                deliver(WatchEvent::Failed(e));
                return token;
            }
            Ok(r) => {
                let next = r.next_cursor.clone();
                let new_token = r.token.clone();
                if !r.changes.is_empty() {
                    deliver(WatchEvent::Changes(r));
                }
                match next {
                    Some(c) => args.cursor = Some(c),
                    None => return new_token,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: EventKind, paths: &[&str]) -> notify::Result<notify::Event> {
        let mut ev = notify::Event::new(kind);
        for p in paths {
            ev = ev.add_path(PathBuf::from(p));
        }
        Ok(ev)
    }

    #[test]
    fn only_changes_inside_the_repository_wake_the_watch() {
        let root = Path::new("/repo");
        let modify = EventKind::Modify(notify::event::ModifyKind::Any);
        assert_eq!(
            hear(root, event(modify, &["/repo/src/a.rs"])),
            Heard::Change
        );
        assert_eq!(
            hear(root, event(modify, &["/elsewhere/a.rs"])),
            Heard::Nothing
        );
        assert_eq!(
            hear(root, event(modify, &["/repo/.git/index"])),
            Heard::Nothing
        );
        assert_eq!(
            hear(root, event(modify, &["/repository/a"])),
            Heard::Nothing
        );
        let read = EventKind::Access(notify::event::AccessKind::Any);
        assert_eq!(hear(root, event(read, &["/repo/src/a.rs"])), Heard::Nothing);
        assert_eq!(hear(root, event(modify, &[])), Heard::Change);
    }

    #[test]
    fn the_watch_limit_is_reported_not_swallowed() {
        let e = notify::Error::new(notify::ErrorKind::MaxFilesWatch);
        assert!(
            matches!(hear(Path::new("/repo"), Err(e)), Heard::WatchLimit(m) if m.contains("limit"))
        );
        let other = notify::Error::generic("boom");
        assert!(matches!(
            hear(Path::new("/repo"), Err(other)),
            Heard::Backend(_)
        ));
    }
}
