//! A session: one repository, one policy, limits, an audit sink, and the component
//! instance that serves its calls. A trap (fuel, memory, time, guest panic) fails only the
//! call that hit it: the poisoned instance is dropped and the next call gets a fresh one.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use wasmtime::component::ResourceTable;
use wasmtime::{ResourceLimiter, Store, Trap};
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use crate::audit::AuditSink;
use crate::bindings::agent::file_tools::types::{AuditEvent, ErrorCode, ToolError};
use crate::bindings::exports::agent::file_tools::tools::{
    FileInfoResult, FindFilesArgs, FindFilesResult, ListDirArgs, ListDirResult, ReadFileArgs,
    ReadFileResult, ReadManyArgs, ReadManyResult, SearchTextArgs, SearchTextResult,
};
use crate::bindings::{agent, FileTools};
use crate::error::HostError;
use crate::runtime::{Runtime, EPOCH_TICK};

/// Name of the environment variable that carries the policy into the component.
pub const POLICY_ENV: &str = "FILE_TOOLS_POLICY";

/// Limits applied to every call of a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Fuel (roughly, WebAssembly instructions) one call may use.
    pub fuel_per_call: u64,
    /// Most bytes of linear memory the instance may hold.
    pub memory_bytes: usize,
    /// Wall-clock time one call may take.
    pub timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            fuel_per_call: 200_000_000_000,
            memory_bytes: 1 << 30,
            timeout: Duration::from_secs(60),
        }
    }
}

/// Configures a [`Session`]. Nothing is granted by default: the repository must be named,
/// writes are off until [`SessionBuilder::writable`] is called, and every limit is finite.
#[derive(Clone)]
pub struct SessionBuilder {
    runtime: Runtime,
    repo: Option<PathBuf>,
    writable: bool,
    policy: Value,
    limits: Limits,
    sink: Option<Arc<dyn AuditSink>>,
}

impl std::fmt::Debug for SessionBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionBuilder")
            .field("repo", &self.repo)
            .field("writable", &self.writable)
            .field("policy", &self.policy)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl SessionBuilder {
    pub fn new(runtime: &Runtime) -> Self {
        SessionBuilder {
            runtime: runtime.clone(),
            repo: None,
            writable: false,
            policy: Value::Object(Default::default()),
            limits: Limits::default(),
            sink: None,
        }
    }

    /// The repository directory: the only directory the component can see.
    pub fn repo(mut self, dir: impl Into<PathBuf>) -> Self {
        self.repo = Some(dir.into());
        self
    }

    /// Lets mutation tools change files (subject to the policy). Off by default; when off
    /// the repository is also preopened read-only, a second wall behind the policy.
    pub fn writable(mut self, yes: bool) -> Self {
        self.writable = yes;
        self
    }

    /// The component's policy, as the JSON object documented in `guest/src/policy.rs`.
    pub fn policy(mut self, policy: Value) -> Self {
        self.policy = policy;
        self
    }

    /// Per-call limits.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Receives every call's audit event, numbered across the whole session.
    pub fn audit_sink(mut self, sink: Arc<dyn AuditSink>) -> Self {
        self.sink = Some(sink);
        self
    }

    /// Checks the configuration and opens the session; the policy is checked by the
    /// component itself.
    ///
    /// # Errors
    /// `HostError::Config` (no repository, policy not an object), `HostError::Repo` (the
    /// directory cannot be opened), `HostError::Policy` (the component refused the policy).
    pub fn build(self) -> Result<Session, HostError> {
        let repo = self
            .repo
            .clone()
            .ok_or_else(|| HostError::Config("no repository directory given".into()))?;
        let meta = std::fs::metadata(&repo).map_err(|e| HostError::Repo {
            path: repo.display().to_string(),
            source: e,
        })?;
        if !meta.is_dir() {
            return Err(HostError::Config(format!(
                "{} is not a directory",
                repo.display()
            )));
        }
        let mut policy = self.policy.clone();
        let obj = policy
            .as_object_mut()
            .ok_or_else(|| HostError::Config("the policy must be a JSON object".into()))?;
        if !self.writable {
            obj.insert("read_only".into(), Value::Bool(true));
        }
        let read_only = obj
            .get("read_only")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let config = Arc::new(Config {
            runtime: self.runtime,
            repo: Some(repo),
            read_only,
            policy_json: policy.to_string(),
            limits: self.limits,
            sink: None,
        });
        let mut session = Session {
            config,
            instance: None,
            sequence: 0,
        };
        // Ask the component to parse the policy now rather than fail every call later.
        // This check is set-up, not a tool call: it reaches no sink and takes no number.
        session
            .describe()
            .map_err(|e| HostError::Policy(e.message))?;
        if let Some(c) = Arc::get_mut(&mut session.config) {
            c.sink = self.sink;
        }
        session.sequence = 0;
        Ok(session)
    }
}

struct Config {
    runtime: Runtime,
    /// `None` only for [`describe_tools`], which never touches files.
    repo: Option<PathBuf>,
    read_only: bool,
    policy_json: String,
    limits: Limits,
    sink: Option<Arc<dyn AuditSink>>,
}

/// Per-instance state inside the store.
pub struct HostState {
    wasi: WasiCtx,
    table: ResourceTable,
    memory: MemoryLimiter,
    events: Vec<AuditEvent>,
}

impl std::fmt::Debug for HostState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostState")
            .field("events", &self.events.len())
            .finish_non_exhaustive()
    }
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl agent::file_tools::audit::Host for HostState {
    fn emit(&mut self, event: AuditEvent) {
        // Bounded: one call emits one event; a misbehaving guest cannot grow this forever.
        if self.events.len() < 16 {
            self.events.push(event);
        }
    }
}

impl agent::file_tools::types::Host for HostState {}

/// Caps linear memory and remembers that the cap was hit, so the trap can be told apart.
struct MemoryLimiter {
    max: usize,
    hit: bool,
}

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.max {
            self.hit = true;
            wasmtime::bail!("memory limit of {} bytes reached", self.max);
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= 1_000_000)
    }
}

/// An open session. Calls take `&mut self`; open one session per thread, or share one
/// behind a mutex.
pub struct Session {
    config: Arc<Config>,
    instance: Option<(Store<HostState>, FileTools)>,
    sequence: u64,
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

impl Session {
    pub fn builder(runtime: &Runtime) -> SessionBuilder {
        SessionBuilder::new(runtime)
    }

    /// The repository directory.
    pub fn repo(&self) -> Option<&Path> {
        self.config.repo.as_deref()
    }

    /// True when the session refuses every mutation.
    pub fn read_only(&self) -> bool {
        self.config.read_only
    }

    fn new_instance(&self) -> Result<(Store<HostState>, FileTools), ToolError> {
        let c = &self.config;
        let perms = if c.read_only {
            FsPerms::ReadOnly
        } else {
            FsPerms::ReadWrite
        };
        let mut wasi = WasiCtxBuilder::new();
        // Must precede the preopen: the directory handle takes the setting with it.
        wasi.allow_blocking_current_thread(true);
        wasi.env(POLICY_ENV, &c.policy_json);
        if let Some(repo) = &c.repo {
            wasi.preopened_dir(repo, "/", perms).map_err(|e| {
                ToolError::host(
                    ErrorCode::IoError,
                    format!("cannot open the repository: {e:#}"),
                )
            })?;
        }
        let state = HostState {
            wasi: wasi.build(),
            table: ResourceTable::new(),
            memory: MemoryLimiter {
                max: c.limits.memory_bytes,
                hit: false,
            },
            events: Vec::new(),
        };
        let engine = c.runtime.engine();
        let mut store = Store::new(engine, state);
        store.limiter(|s| &mut s.memory);
        store
            .set_fuel(c.limits.fuel_per_call)
            .map_err(|e| internal(&e))?;
        store.set_epoch_deadline(deadline_ticks(c.limits.timeout));
        let bindings = c
            .runtime
            .pre()
            .instantiate(&mut store)
            .map_err(|e| trap_error(&e, &store))?;
        Ok((store, bindings))
    }

    /// Runs one export call with limits armed, and forwards its audit event.
    fn invoke<R>(
        &mut self,
        tool: &str,
        f: impl FnOnce(&FileTools, &mut Store<HostState>) -> wasmtime::Result<Result<R, ToolError>>,
    ) -> Result<R, ToolError> {
        let started = Instant::now();
        let instance = match self.instance.take() {
            Some(i) => Ok(i),
            None => self.new_instance(),
        };
        let (mut store, bindings) = match instance {
            Ok(i) => i,
            Err(e) => {
                self.forward(Vec::new(), tool, Some(&e), started);
                return Err(e);
            }
        };
        let limits = self.config.limits;
        let armed = store.set_fuel(limits.fuel_per_call);
        store.set_epoch_deadline(deadline_ticks(limits.timeout));
        store.data_mut().events.clear();
        let outcome = match armed {
            Ok(()) => f(&bindings, &mut store),
            Err(e) => Err(e),
        };
        let events = std::mem::take(&mut store.data_mut().events);
        match outcome {
            Ok(result) => {
                self.instance = Some((store, bindings));
                self.forward(events, tool, result.as_ref().err(), started);
                result
            }
            Err(trap) => {
                // The store is poisoned: drop it; the next call instantiates afresh.
                let err = trap_error(&trap, &store);
                self.forward(events, tool, Some(&err), started);
                Err(err)
            }
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

    /// Every tool this session offers, with descriptions and JSON Schemas.
    ///
    /// # Errors
    /// `INVALID_INPUT` when the policy is malformed; `LIMIT_EXCEEDED`/`INTERNAL` on a trap.
    pub fn describe(&mut self) -> Result<Value, ToolError> {
        let text = self.invoke("describe", |b, s| {
            b.agent_file_tools_tools().call_describe(s)
        })?;
        parse_json(&text)
    }

    /// Calls a tool by name with JSON arguments and returns its JSON result.
    ///
    /// # Errors
    /// `INVALID_INPUT` for an unknown tool or malformed arguments, then the tool's errors.
    pub fn call(&mut self, tool: &str, args_json: &str) -> Result<Value, ToolError> {
        let text = self.invoke(tool, |b, s| {
            b.agent_file_tools_tools().call_call(s, tool, args_json)
        })?;
        parse_json(&text)
    }

    /// See the `list-dir` function of the WIT `tools` interface.
    ///
    /// # Errors
    /// The tool's error codes, or `LIMIT_EXCEEDED`/`INTERNAL` on a trap.
    pub fn list_dir(&mut self, args: &ListDirArgs) -> Result<ListDirResult, ToolError> {
        self.invoke("list_dir", |b, s| {
            b.agent_file_tools_tools().call_list_dir(s, args)
        })
    }

    /// See the `find-files` function of the WIT `tools` interface.
    ///
    /// # Errors
    /// The tool's error codes, or `LIMIT_EXCEEDED`/`INTERNAL` on a trap.
    pub fn find_files(&mut self, args: &FindFilesArgs) -> Result<FindFilesResult, ToolError> {
        self.invoke("find_files", |b, s| {
            b.agent_file_tools_tools().call_find_files(s, args)
        })
    }

    /// See the `read-file` function of the WIT `tools` interface.
    ///
    /// # Errors
    /// The tool's error codes, or `LIMIT_EXCEEDED`/`INTERNAL` on a trap.
    pub fn read_file(&mut self, args: &ReadFileArgs) -> Result<ReadFileResult, ToolError> {
        self.invoke("read_file", |b, s| {
            b.agent_file_tools_tools().call_read_file(s, args)
        })
    }

    /// See the `read-many` function of the WIT `tools` interface.
    ///
    /// # Errors
    /// The tool's error codes, or `LIMIT_EXCEEDED`/`INTERNAL` on a trap.
    pub fn read_many(&mut self, args: &ReadManyArgs) -> Result<ReadManyResult, ToolError> {
        self.invoke("read_many", |b, s| {
            b.agent_file_tools_tools().call_read_many(s, args)
        })
    }

    /// See the `search-text` function of the WIT `tools` interface.
    ///
    /// # Errors
    /// The tool's error codes, or `LIMIT_EXCEEDED`/`INTERNAL` on a trap.
    pub fn search_text(&mut self, args: &SearchTextArgs) -> Result<SearchTextResult, ToolError> {
        self.invoke("search_text", |b, s| {
            b.agent_file_tools_tools().call_search_text(s, args)
        })
    }

    /// See the `file-info` function of the WIT `tools` interface.
    ///
    /// # Errors
    /// The tool's error codes, or `LIMIT_EXCEEDED`/`INTERNAL` on a trap.
    pub fn file_info(&mut self, path: &str) -> Result<FileInfoResult, ToolError> {
        self.invoke("file_info", |b, s| {
            b.agent_file_tools_tools().call_file_info(s, path)
        })
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
        repo: None,
        read_only,
        policy_json: policy.to_string(),
        limits: Limits::default(),
        sink: None,
    });
    let mut session = Session {
        config,
        instance: None,
        sequence: 0,
    };
    session.describe().map_err(|e| HostError::Policy(e.message))
}

fn deadline_ticks(timeout: Duration) -> u64 {
    (timeout.as_micros() / EPOCH_TICK.as_micros()).max(1) as u64 + 1
}

fn parse_json(text: &str) -> Result<Value, ToolError> {
    serde_json::from_str(text).map_err(|e| {
        ToolError::host(
            ErrorCode::Internal,
            format!("the component returned malformed JSON: {e}"),
        )
    })
}

fn internal(e: &wasmtime::Error) -> ToolError {
    ToolError::host(ErrorCode::Internal, format!("{e:#}"))
}

/// Turns a trap into the call's error: limits are `LIMIT_EXCEEDED`, anything else
/// (a guest panic, a host failure) is `INTERNAL`.
fn trap_error(e: &wasmtime::Error, store: &Store<HostState>) -> ToolError {
    let limit = |what: &str| {
        ToolError::host(ErrorCode::LimitExceeded, format!("the call was stopped: {what}; narrow the request (a smaller path, range or query) and retry"))
    };
    if store.data().memory.hit {
        return limit("it reached the session's memory limit");
    }
    match e.downcast_ref::<Trap>() {
        Some(Trap::OutOfFuel) => limit("it used all of its fuel (compute budget)"),
        Some(Trap::Interrupt) => limit("it ran past the session's time limit"),
        Some(Trap::StackOverflow) => limit("it overflowed the stack"),
        Some(t) => ToolError::host(
            ErrorCode::Internal,
            format!("file-tools failed inside the sandbox ({t}); the call had no effect it can vouch for, and the session goes on"),
        ),
        None => internal(e),
    }
}
