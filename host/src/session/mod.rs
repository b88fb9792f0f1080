//! A session: one repository, one policy, limits, an audit sink, a private state directory,
//! and the component instance that serves its calls. A trap (fuel, memory, time, guest
//! panic) fails only the call that hit it: the poisoned instance is dropped and the next
//! call gets a fresh one. Mutating calls hold an exclusive lock on the repository, shared
//! by every session and process that uses file-tools on it.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use wasmtime::component::ResourceTable;
use wasmtime::{Store, Trap};
use wasmtime_wasi::{FsPerms, WasiCtxBuilder};

use crate::approval::Approver;
use crate::audit::AuditSink;
use crate::bindings::agent::file_tools::types::{AuditEvent, ErrorCode, ToolError};
use crate::bindings::exports::agent::file_tools::tools as t;
use crate::bindings::FileTools;
use crate::call::{CallOptions, CancelToken};
use crate::error::HostError;
use crate::imports::host_fs::read_ahead::Walks;
use crate::imports::state::{internal, trap_error, CallState, HostState, MemoryLimiter};
use crate::runtime::Runtime;

mod builder;
mod lock;
mod state_dir;
pub use builder::{inside, Limits, SessionBuilder};
use state_dir::StateDir;
pub use state_dir::{reset as reset_state_dir, ResetOutcome};

/// Name of the environment variable that carries the policy into the component.
pub const POLICY_ENV: &str = file_tools_contract::env::POLICY;
/// The environment variable that carries the cursor key into the component.
pub const CURSOR_KEY_ENV: &str = file_tools_contract::env::TOKEN_KEY;
/// The environment variable that names the session while it holds the mutation lock.
pub const LOCK_TOKEN_ENV: &str = file_tools_contract::env::LOCK_TOKEN;

/// 32 bytes from the system's randomness.
fn random_key() -> std::io::Result<[u8; 32]> {
    use std::io::Read as _;
    let mut key = [0u8; 32];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut key)?;
    Ok(key)
}

/// The observed outcome of an error: its code in lower case.
fn error_outcome(e: &ToolError) -> String {
    crate::observe::outcome_of(crate::code_name(e.code))
}

/// Where the component finds its private state directory (a name no tool path reaches).
pub const STATE_GUEST_PATH: &str = file_tools_contract::STATE_GUEST_PATH;

struct Config {
    runtime: Runtime,
    /// The repository as a capability for the batched reads; `None` turns them off.
    repo_dir: Option<Arc<cap_std::fs::Dir>>,
    /// Drop the instance after every call.
    fresh_per_call: bool,
    /// `None` only for [`describe_tools`], which never touches files.
    repo: Option<PathBuf>,
    /// The identity of the repository directory as the builder opened it: an instance
    /// opens the repository only when the path still leads to that directory.
    repo_id: Option<String>,
    state: Option<StateDir>,
    read_only: bool,
    /// The policy's `allow_hardlinks`, for the host's batched reads.
    allow_hardlinks: bool,
    policy_json: String,
    limits: Limits,
    sink: Option<Arc<dyn AuditSink>>,
    approver: Option<Arc<dyn Approver>>,
    mutating: HashSet<String>,
    /// Every tool's name: metrics label any other name `unknown`, so that a client sending
    /// made-up names cannot grow the metrics without bound.
    known: HashSet<String>,
    fault: Option<String>,
    /// Searches record the index even while a build is announced.
    index_builder: bool,
    /// How often an index builder's search saves what it has recorded.
    index_checkpoint: Duration,
    /// The cursor key, as the component reads it (64 hex digits).
    cursor_key: String,
    /// The session's name while it holds the mutation lock (see [`lock`]).
    lock_token: String,
    observer: Option<Arc<dyn crate::CallObserver>>,
    /// The count of changes below the repository the search index may trust (see
    /// [`crate::SessionBuilder::watch_tree`]).
    #[cfg(all(feature = "watch", target_os = "linux"))]
    tree_watch: Option<Arc<crate::tree_watch::TreeWatch>>,
}

/// An open session. Calls take `&mut self`; open one session per thread, or share one
/// behind a mutex. Sessions on the same repository serialise their mutations.
pub struct Session {
    config: Arc<Config>,
    instance: Option<(Store<HostState>, FileTools)>,
    sequence: u64,
    /// Set while the host lists the tools for itself: that is set-up, not a call an
    /// agent made, and the metrics do not count it.
    listing: bool,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("repo", &self.config.repo)
            .field("read_only", &self.config.read_only)
            .field("sequence", &self.sequence)
            .finish_non_exhaustive()
    }
}

macro_rules! typed_tools {
    ($($(#[$doc:meta])* $name:ident / $export:ident ($args:ty) -> $ret:ty;)*) => {
        $(
            $(#[$doc])*
            ///
            /// # Errors
            /// The tool's error codes (see the WIT `tools` interface), or `LIMIT_EXCEEDED` /
            /// `INTERNAL` when the call trapped.
            pub fn $name(&mut self, args: &$args) -> Result<$ret, ToolError> {
                self.invoke(stringify!($name), |b, s| b.agent_file_tools_tools().$export(s, args))
            }
        )*
    };
}

impl Session {
    /// A builder of a session over `runtime` (see [`SessionBuilder::new`]).
    pub fn builder(runtime: &Runtime) -> SessionBuilder {
        SessionBuilder::new(runtime)
    }

    /// The repository directory (canonical).
    pub fn repo(&self) -> Option<&Path> {
        self.config.repo.as_deref()
    }

    /// The state directory holding the session baseline and the `changes_since` snapshots
    /// (a temporary one, removed with the session, unless the builder named one).
    pub fn state_dir(&self) -> Option<&Path> {
        self.config.state.as_ref().map(|s| s.path.as_path())
    }

    /// The folder holding the search index: the one given to
    /// [`SessionBuilder::index_dir`], else `index/` in the state directory.
    pub fn index_dir(&self) -> Option<PathBuf> {
        self.config.state.as_ref().map(StateDir::index_dir)
    }

    /// True when the session refuses every mutation.
    pub fn read_only(&self) -> bool {
        self.config.read_only
    }

    /// A key for `purpose`, derived from the session's cursor key, its repository's path
    /// and its state directory's: processes given the same cursor key
    /// ([`SessionBuilder::cursor_key`]) and state directory derive the same one, and no
    /// other repository or session does.
    pub fn derived_key(&self, purpose: &str) -> [u8; 32] {
        use sha2::Digest as _;
        let repo = self.config.repo.as_deref().unwrap_or(Path::new(""));
        let state = self
            .config
            .state
            .as_ref()
            .map_or(Path::new(""), |d| &d.path);
        sha2::Sha256::new()
            .chain_update(b"file-tools derived key\0")
            .chain_update(purpose.as_bytes())
            .chain_update(b"\0")
            .chain_update(self.config.cursor_key.as_bytes())
            .chain_update(b"\0")
            .chain_update(repo.as_os_str().as_encoded_bytes())
            .chain_update(b"\0")
            .chain_update(state.as_os_str().as_encoded_bytes())
            .finalize()
            .into()
    }

    fn new_instance(&self) -> Result<(Store<HostState>, FileTools), ToolError> {
        let c = &self.config;
        let open_err = |e: wasmtime::Error| {
            ToolError::host(
                ErrorCode::IoError,
                format!("cannot open the repository: {e:#}"),
            )
        };
        let perms = if c.read_only {
            FsPerms::ReadOnly
        } else {
            FsPerms::ReadWrite
        };
        let mut wasi = WasiCtxBuilder::new();
        // Must precede the preopens: each directory handle takes the setting with it.
        wasi.allow_blocking_current_thread(true);
        wasi.env(POLICY_ENV, &c.policy_json);
        if !c.cursor_key.is_empty() {
            wasi.env(CURSOR_KEY_ENV, &c.cursor_key);
        }
        if !c.lock_token.is_empty() {
            wasi.env(LOCK_TOKEN_ENV, &c.lock_token);
        }
        if let Some(point) = &c.fault {
            wasi.env(file_tools_contract::env::FAULT, point);
        }
        if c.index_builder {
            wasi.env(file_tools_contract::env::INDEX_BUILDER, "1");
            wasi.env(
                file_tools_contract::env::INDEX_CHECKPOINT_MS,
                c.index_checkpoint.as_millis().to_string(),
            );
        }
        if let Some(repo) = &c.repo {
            let held = self.open_repo(repo)?;
            // The very directory just checked, through its descriptor where the system
            // names descriptors by path; the path again elsewhere.
            let by_fd = PathBuf::from(format!(
                "/proc/self/fd/{}",
                std::os::fd::AsRawFd::as_raw_fd(&held)
            ));
            let place = if by_fd.exists() { by_fd } else { repo.clone() };
            wasi.preopened_dir(&place, "/", perms).map_err(open_err)?;
        }
        if let Some(state) = &c.state {
            wasi.preopened_dir(&state.path, STATE_GUEST_PATH, FsPerms::ReadWrite)
                .map_err(open_err)?;
            if let Some(shared) = &state.shared_index {
                wasi.preopened_dir(
                    shared,
                    file_tools_contract::INDEX_GUEST_PATH,
                    FsPerms::ReadWrite,
                )
                .map_err(open_err)?;
                wasi.env(
                    file_tools_contract::env::INDEX_DIR,
                    file_tools_contract::INDEX_GUEST_PATH,
                );
            }
        }
        let state = HostState {
            repo_dir: c.repo_dir.clone(),
            read_only: c.read_only,
            allow_hardlinks: c.allow_hardlinks,
            #[cfg(all(feature = "watch", target_os = "linux"))]
            tree_watch: c.tree_watch.clone(),
            wasi: wasi.build(),
            table: ResourceTable::new(),
            memory: MemoryLimiter {
                max: c.limits.memory_bytes,
                hit: false,
            },
            events: Vec::new(),
            approver: c.approver.clone(),
            read_ahead: Default::default(),
            call: CallState::default(),
        };
        let mut store = Store::new(c.runtime.engine(), state);
        store.limiter(|s| &mut s.memory);
        // Called at every epoch tick while the guest runs: it stops a cancelled call and
        // one past its deadline (see `CallState::tick`).
        store.epoch_deadline_callback(|mut ctx| Ok(ctx.data_mut().call.tick()));
        if c.runtime.fuel_metered() {
            store
                .set_fuel(c.limits.fuel_per_call)
                .map_err(|e| internal(&e))?;
        }
        store.set_epoch_deadline(1);
        let bindings = c
            .runtime
            .pre()
            .instantiate(&mut store)
            .map_err(|e| trap_error(&e, &store))?;
        Ok((store, bindings))
    }

    /// Opens the repository directory and checks that it is the one the session was built
    /// on: a directory renamed away and another made at its path must not receive this
    /// session's calls (nor its baseline's `revert`).
    fn open_repo(&self, repo: &Path) -> Result<std::fs::File, ToolError> {
        let gone = |why: String| {
            ToolError::host(
                ErrorCode::IoError,
                format!("the repository at {} is no longer the directory this session opened ({why}); nothing was done. Open a new session on it", repo.display()),
            )
        };
        let held = std::fs::File::open(repo).map_err(|e| gone(e.to_string()))?;
        let id = state_dir::identity(&held).map_err(|e| gone(e.to_string()))?;
        if self.config.repo_id.as_ref().is_some_and(|want| *want != id) {
            return Err(gone("it was renamed or replaced".into()));
        }
        Ok(held)
    }

    /// Takes the repository's mutation lock when `tool` changes files, or when a killed
    /// call left a change for this call to finish or undo first (see [`lock`]).
    fn lock_for(&self, tool: &str) -> Result<Option<lock::MutationLock>, ToolError> {
        let Some(repo) = &self.config.repo_dir else {
            return Ok(None);
        };
        // A read-only session cannot finish a change: it leaves that to a writable one.
        let state = (self.config.state.as_ref())
            .filter(|_| !self.config.read_only)
            .map(|s| s.path.as_path());
        let recover = state.is_some_and(lock::pending);
        if !self.config.mutating.contains(tool) && !recover {
            return Ok(None);
        }
        let token = self.config.lock_token.as_str();
        lock::take(repo, state.map(|s| (s, token)))
            .map(Some)
            .map_err(|e| {
                ToolError::host(
                    ErrorCode::IoError,
                    format!("cannot lock the repository for a change: {e}"),
                )
            })
    }

    /// Runs one export call with limits armed, and forwards its audit event.
    fn invoke<R>(
        &mut self,
        tool: &str,
        f: impl FnOnce(&FileTools, &mut Store<HostState>) -> wasmtime::Result<Result<R, ToolError>>,
    ) -> Result<R, ToolError> {
        self.invoke_with(tool, &CallOptions::default(), f)
    }

    /// [`Session::invoke`] with a cancel token, a progress sink or an approver.
    fn invoke_with<R>(
        &mut self,
        tool: &str,
        options: &CallOptions,
        f: impl FnOnce(&FileTools, &mut Store<HostState>) -> wasmtime::Result<Result<R, ToolError>>,
    ) -> Result<R, ToolError> {
        let started = Instant::now();
        if options
            .cancel
            .as_ref()
            .is_some_and(CancelToken::is_cancelled)
        {
            // Cancelled while it waited for its turn: it never starts.
            let e = cancelled_error();
            self.count(tool, error_outcome(&e), started, &[], 0);
            self.forward(Vec::new(), tool, Some(&e), started);
            return Err(e);
        }
        let _lock = match self.lock_for(tool) {
            Ok(l) => l,
            Err(e) => {
                self.count(tool, error_outcome(&e), started, &[], 0);
                self.forward(Vec::new(), tool, Some(&e), started);
                return Err(e);
            }
        };
        let instance = match self.instance.take() {
            Some(i) => Ok(i),
            None => self.new_instance(),
        };
        let (mut store, bindings) = match instance {
            Ok(i) => i,
            Err(e) => {
                self.count(tool, error_outcome(&e), started, &[], 0);
                self.forward(Vec::new(), tool, Some(&e), started);
                return Err(e);
            }
        };
        let limits = self.config.limits;
        let armed = if self.config.runtime.fuel_metered() {
            store.set_fuel(limits.fuel_per_call)
        } else {
            Ok(())
        };
        store.set_epoch_deadline(1);
        store.data_mut().events.clear();
        store.data_mut().call = CallState {
            deadline: Some(started + limits.timeout),
            cancel: options.cancel.clone(),
            progress: options.progress.clone(),
            approver: options.approver.clone(),
            changing: false,
            cancelled: false,
            approvals: Vec::new(),
            listings: Walks::new(store.data().read_ahead.clone()),
            #[cfg(all(feature = "watch", target_os = "linux"))]
            synced: None,
            #[cfg(all(feature = "watch", target_os = "linux"))]
            kept: (0, 0),
        };
        let outcome = match armed {
            Ok(()) => f(&bindings, &mut store),
            Err(e) => Err(e),
        };
        // What the component wrote into the state directory came with WASI's modes. Only
        // calls that change files (the baseline, the journal), finish a killed change
        // (they hold the lock) or keep a snapshot (`changes_since`) write there.
        let wrote_state = _lock.is_some() || tool == "changes_since";
        if let (Some(state), true) = (&self.config.state, wrote_state) {
            state.tighten();
        }
        let call = std::mem::take(&mut store.data_mut().call);
        let mut events = std::mem::take(&mut store.data_mut().events);
        for e in &mut events {
            e.notes.extend(call.approvals.iter().cloned());
        }
        if !call.cancelled && call.cancel.as_ref().is_some_and(CancelToken::is_cancelled) {
            for e in &mut events {
                e.notes.push(
                    "a cancel came after the call had begun to change files (or had finished): it ran to its end"
                        .to_string(),
                );
            }
        }
        let fuel = if self.config.runtime.fuel_metered() {
            limits
                .fuel_per_call
                .saturating_sub(store.get_fuel().unwrap_or(limits.fuel_per_call))
        } else {
            0
        };
        // A cancel seen at the first change makes the guest give up with an I/O error:
        // report it as the cancel it was.
        let outcome = match outcome {
            Ok(Err(_)) if call.cancelled => Ok(Err(cancelled_before_change())),
            other => other,
        };
        let label = match &outcome {
            Ok(Ok(_)) => "ok".to_string(),
            Ok(Err(e)) => error_outcome(e),
            Err(trap) if matches!(trap.downcast_ref::<Trap>(), Some(Trap::Interrupt)) => {
                if call.cancelled {
                    "cancelled".to_string()
                } else {
                    "timed_out".to_string()
                }
            }
            Err(_) => "trapped".to_string(),
        };
        self.count(tool, label, started, &events, fuel);
        match outcome {
            Ok(result) => {
                if !self.config.fresh_per_call {
                    self.instance = Some((store, bindings));
                }
                self.forward(events, tool, result.as_ref().err(), started);
                result
            }
            Err(trap) => {
                // The store is poisoned: drop it; the next call instantiates afresh.
                let err = if call.cancelled {
                    cancelled_before_change()
                } else {
                    trap_error(&trap, &store)
                };
                self.forward(events, tool, Some(&err), started);
                Err(err)
            }
        }
    }

    /// Tells the session's call observer about the call, if it has one.
    fn count(
        &self,
        tool: &str,
        outcome: String,
        started: Instant,
        events: &[AuditEvent],
        fuel: u64,
    ) {
        if self.listing {
            return;
        }
        if let Some(o) = &self.config.observer {
            let known = self.config.known.contains(tool);
            let record = crate::CallRecord {
                tool: if known { tool } else { "unknown" }.to_string(),
                outcome,
                duration: started.elapsed(),
                bytes_read: events.iter().map(|e| e.bytes_read).sum(),
                bytes_written: events.iter().map(|e| e.bytes_written).sum(),
                fuel,
            };
            // A panicking observer loses its record, never the call's result.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| o.record(&record)));
        }
    }

    fn forward(
        &mut self,
        events: Vec<AuditEvent>,
        tool: &str,
        err: Option<&ToolError>,
        started: Instant,
    ) {
        let events = if events.is_empty() {
            // The guest never reached its own audit (a trap, or no instance): the host
            // records the call so that every call still has exactly one event.
            vec![AuditEvent {
                sequence: 0,
                tool: tool.to_string(),
                ok: err.is_none(),
                error_code: err.map(|e| e.code),
                error_message: err.map(|e| e.message.clone()),
                paths_read: Vec::new(),
                paths_written: Vec::new(),
                files: Vec::new(),
                bytes_read: 0,
                bytes_written: 0,
                insertions: 0,
                deletions: 0,
                duration_us: started.elapsed().as_micros() as u64,
                diff: String::new(),
                notes: Vec::new(),
            }]
        } else {
            events
        };
        for mut e in events {
            self.sequence += 1;
            e.sequence = self.sequence;
            if let Some(sink) = &self.config.sink {
                sink.event(&e);
            }
        }
    }

    /// Records a call the host refused before it reached the component (an unknown or
    /// unlisted tool name, say), so that every call still has its one audit event.
    pub fn audit_refusal(&mut self, tool: &str, error: &ToolError) {
        self.count(tool, error_outcome(error), Instant::now(), &[], 0);
        self.forward(Vec::new(), tool, Some(error), Instant::now());
    }

    /// Every tool this session offers, with descriptions and JSON Schemas.
    ///
    /// # Errors
    /// `INVALID_INPUT` when the policy is malformed; `LIMIT_EXCEEDED`/`INTERNAL` on a trap.
    pub fn describe(&mut self) -> Result<Value, ToolError> {
        self.listing = true;
        let text = self.invoke("describe", |b, s| {
            b.agent_file_tools_tools().call_describe(s)
        });
        self.listing = false;
        parse_answer(&text?)
    }

    /// Listings the host answered from its watch's cache so far.
    #[cfg(all(test, feature = "watch", target_os = "linux"))]
    pub(crate) fn listings_answered(&self) -> u64 {
        self.config
            .tree_watch
            .as_ref()
            .map_or(0, |w| w.listings.hits())
    }

    /// Listings the host's calls asked of its watch's cache so far (answered or not).
    #[cfg(all(test, feature = "watch", target_os = "linux"))]
    pub(crate) fn listings_asked(&self) -> u64 {
        self.config
            .tree_watch
            .as_ref()
            .map_or(0, |w| w.listings.asked())
    }

    /// Calls a tool by name with JSON arguments and returns its JSON result.
    ///
    /// # Errors
    /// `INVALID_INPUT` for an unknown tool or malformed arguments, then the tool's errors.
    pub fn call(&mut self, tool: &str, args_json: &str) -> Result<Value, ToolError> {
        self.call_with(tool, args_json, &CallOptions::default())
    }

    /// [`Session::call`] with a cancel token, a progress sink or an approver for this call
    /// (see [`crate::call`]).
    ///
    /// # Errors
    /// As [`Session::call`], and `CANCELLED` when the token stopped the call before it
    /// changed anything.
    pub fn call_with(
        &mut self,
        tool: &str,
        args_json: &str,
        options: &CallOptions,
    ) -> Result<Value, ToolError> {
        parse_answer(&self.call_text_with(tool, args_json, options)?)
    }

    /// [`Session::call_with`] answering the component's JSON text itself, for a host that
    /// passes the text on (the MCP server's text block), so that it is not parsed and
    /// printed again; [`parse_answer`] reads it.
    ///
    /// # Errors
    /// As [`Session::call_with`].
    pub fn call_text_with(
        &mut self,
        tool: &str,
        args_json: &str,
        options: &CallOptions,
    ) -> Result<String, ToolError> {
        self.invoke_with(tool, options, |b, s| {
            b.agent_file_tools_tools().call_call(s, tool, args_json)
        })
    }

    /// Describes one path (see `file-info` in the WIT `tools` interface).
    ///
    /// # Errors
    /// The tool's error codes, or `LIMIT_EXCEEDED`/`INTERNAL` on a trap.
    pub fn file_info(&mut self, path: &str) -> Result<t::FileInfoResult, ToolError> {
        self.invoke("file_info", |b, s| {
            b.agent_file_tools_tools().call_file_info(s, path)
        })
    }

    typed_tools! {
        /// Lists a directory.
        list_dir / call_list_dir(t::ListDirArgs) -> t::ListDirResult;
        /// Finds files by glob.
        find_files / call_find_files(t::FindFilesArgs) -> t::FindFilesResult;
        /// What changed since a token (see `changes-since` in the WIT `tools` interface).
        changes_since / call_changes_since(t::ChangesSinceArgs) -> t::ChangesSinceResult;
        /// Reads a text file or a range of it.
        read_file / call_read_file(t::ReadFileArgs) -> t::ReadFileResult;
        /// Reads several files.
        read_many / call_read_many(t::ReadManyArgs) -> t::ReadManyResult;
        /// Reads an image or a PDF whole, as base64.
        read_media / call_read_media(t::ReadMediaArgs) -> t::ReadMediaResult;
        /// Searches file contents.
        search_text / call_search_text(t::SearchTextArgs) -> t::SearchTextResult;
        /// Creates or replaces a file.
        write_file / call_write_file(t::WriteFileArgs) -> t::MutationResult;
        /// Exact-replacement edits.
        edit_file / call_edit_file(t::EditFileArgs) -> t::MutationResult;
        /// Applies a patch, all or nothing.
        apply_patch / call_apply_patch(t::ApplyPatchArgs) -> t::MutationResult;
        /// Appends to a file.
        append_file / call_append_file(t::AppendFileArgs) -> t::MutationResult;
        /// Deletes a file.
        delete_file / call_delete_file(t::DeleteFileArgs) -> t::MutationResult;
        /// Moves a file.
        move_file / call_move_file(t::MoveFileArgs) -> t::MutationResult;
        /// The session's changes as a diff.
        diff_workspace / call_diff_workspace(t::DiffWorkspaceArgs) -> t::DiffWorkspaceResult;
        /// Restores files to the session baseline.
        revert / call_revert(t::RevertArgs) -> t::MutationResult;
    }
}

/// Every tool the component offers under `policy`, without opening a repository.
///
/// # Errors
/// `HostError::Policy` when the component refuses the policy.
pub fn describe_tools(runtime: &Runtime, policy: Value) -> Result<Value, HostError> {
    let read_only = policy
        .get("read_only")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let config = Arc::new(Config {
        runtime: runtime.clone(),
        repo_dir: None,
        fresh_per_call: false,
        repo: None,
        repo_id: None,
        state: None,
        read_only,
        allow_hardlinks: false,
        #[cfg(all(feature = "watch", target_os = "linux"))]
        tree_watch: None,
        policy_json: policy.to_string(),
        limits: Limits::default(),
        sink: None,
        approver: None,
        mutating: HashSet::new(),
        known: HashSet::new(),
        fault: None,
        index_builder: false,
        index_checkpoint: Duration::MAX,
        // No repository, so no cursor: the component makes its own key when it needs one.
        cursor_key: String::new(),
        lock_token: String::new(),
        observer: None,
    });
    let mut session = Session {
        config,
        instance: None,
        sequence: 0,
        listing: false,
    };
    session.describe().map_err(|e| HostError::Policy(e.message))
}

fn cancelled_before_change() -> ToolError {
    ToolError::host(
        ErrorCode::Cancelled,
        "the call was cancelled before it changed anything; nothing was changed",
    )
}

fn cancelled_error() -> ToolError {
    ToolError::host(
        ErrorCode::Cancelled,
        "the call was cancelled before it started; nothing was changed",
    )
}

/// A tool's answer (the text [`Session::call_text_with`] returns) as JSON.
///
/// # Errors
/// `INTERNAL` when the text is not JSON.
pub fn parse_answer(text: &str) -> Result<Value, ToolError> {
    serde_json::from_str(text).map_err(|e| {
        ToolError::host(
            ErrorCode::Internal,
            format!("the component returned malformed JSON: {e}"),
        )
    })
}
