//! The server's repository: open from the start (`--repo`), or waiting for the client's
//! roots (see [`super::roots`]), or missing with the reason why.

use std::sync::{Condvar, Mutex};
use std::time::Duration;

use file_tools_host::bindings::agent::file_tools::types::{ErrorCode, ToolError};
use file_tools_host::bindings::exports::agent::file_tools::tools::{
    ChangesSinceArgs, ChangesSinceResult,
};
use file_tools_host::session::Session;

/// How long a request waits for the client's roots to name the repository.
const WAIT_FOR_ROOTS: Duration = Duration::from_secs(10);

pub(crate) enum State {
    /// The roots have not been asked yet.
    Pending,
    Open(Box<Session>),
    /// No repository, and why (for the error every request then gets).
    Missing(String),
}

/// The session behind a lock, and a way to wait until there is one.
pub(crate) struct RepoSlot {
    state: Mutex<State>,
    ready: Condvar,
}

impl std::fmt::Debug for RepoSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RepoSlot(..)")
    }
}

impl RepoSlot {
    pub(crate) fn new(state: State) -> Self {
        RepoSlot {
            state: Mutex::new(state),
            ready: Condvar::new(),
        }
    }

    /// Replaces the state (a new root, or none) and wakes the requests waiting for one.
    pub(crate) fn set(&self, state: State) {
        if let Ok(mut s) = self.state.lock() {
            *s = state;
        }
        self.ready.notify_all();
    }

    /// Gives up waiting for roots that will never come: `Pending` becomes `Missing(why)`;
    /// any other state stays.
    pub(crate) fn give_up_waiting(&self, why: &str) {
        if let Ok(mut s) = self.state.lock() {
            if matches!(*s, State::Pending) {
                *s = State::Missing(why.to_string());
            }
        }
        self.ready.notify_all();
    }

    /// The repository directory of the open session, if any.
    pub(crate) fn repo(&self) -> Option<std::path::PathBuf> {
        match &*self.state.lock().ok()? {
            State::Open(s) => s.repo().map(std::path::Path::to_path_buf),
            _ => None,
        }
    }

    /// Runs `f` on the session, waiting a while for the roots when they are still to come.
    ///
    /// # Errors
    /// Why there is no repository.
    pub(crate) fn with<T>(&self, f: impl FnOnce(&mut Session) -> T) -> Result<T, String> {
        let poisoned =
            || "an earlier call panicked inside the host; restart the server".to_string();
        let guard = self.state.lock().map_err(|_| poisoned())?;
        let (mut guard, _) = self
            .ready
            .wait_timeout_while(guard, WAIT_FOR_ROOTS, |s| matches!(s, State::Pending))
            .map_err(|_| poisoned())?;
        match &mut *guard {
            State::Open(session) => Ok(f(session)),
            State::Missing(why) => Err(why.clone()),
            State::Pending => Err("the client has not answered roots/list; start the server \
                                   with --repo DIR, or use a client that declares roots"
                .into()),
        }
    }
}

/// A watch ([`file_tools_host::watch()`]) can run in the session the slot holds.
impl file_tools_host::watch::WatchedSession for RepoSlot {
    fn repo_dir(&self) -> Option<std::path::PathBuf> {
        self.repo()
    }

    fn changes_since(&self, args: &ChangesSinceArgs) -> Result<ChangesSinceResult, ToolError> {
        self.with(|s| s.changes_since(args))
            .unwrap_or_else(|why| Err(ToolError::host(ErrorCode::Internal, why)))
    }
}
