//! What lives inside a store: WASI context, the memory limiter, and the audit events the
//! guest emits during one call; and how a trap becomes a tool error. The imports the
//! component calls are implemented on [`HostState`] in the sibling modules.

use wasmtime::component::ResourceTable;
use wasmtime::{ResourceLimiter, Store, Trap};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::bindings::agent::file_tools::types::{AuditEvent, ErrorCode, ToolError};

/// How often the epoch advances; wall-clock limits are rounded up to this.
pub(crate) const EPOCH_TICK: std::time::Duration = std::time::Duration::from_millis(5);

/// Per-instance state inside the store.
pub struct HostState {
    /// The repository as a capability, for the batched `host-fs` reads: every path is
    /// resolved beneath it (`openat2(RESOLVE_BENEATH)` or its emulation).
    pub(crate) repo_dir: Option<std::sync::Arc<cap_std::fs::Dir>>,
    /// Whether the session refuses every change (the host's `dir` resource then refuses
    /// to create, rename or remove anything).
    pub(crate) read_only: bool,
    /// Whether the policy lets files with several hard links be read (batched reads).
    pub(crate) allow_hardlinks: bool,
    /// The watch behind `host-fs.tree-changes`, when the session runs one.
    #[cfg(all(feature = "watch", target_os = "linux"))]
    pub(crate) tree_watch: Option<std::sync::Arc<crate::tree_watch::TreeWatch>>,
    pub(crate) wasi: WasiCtx,
    pub(crate) table: ResourceTable,
    pub(crate) memory: MemoryLimiter,
    pub(crate) events: Vec<AuditEvent>,
    /// Who decides on changes that need approval; `None` declines them all.
    pub(crate) approver: Option<std::sync::Arc<dyn crate::approval::Approver>>,
    /// Set while a thread reads directory listings ahead for this instance's calls (see
    /// `host_fs::read_ahead`): one at a time.
    pub(crate) read_ahead: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// The state of the call under way.
    pub(crate) call: CallState,
}

/// The state of one call, reset at its start.
#[derive(Default)]
pub(crate) struct CallState {
    /// When the wall-clock limit runs out; time spent waiting for an approver moves it on,
    /// so that a person's thinking time is not the guest's.
    pub(crate) deadline: Option<std::time::Instant>,
    pub(crate) cancel: Option<crate::call::CancelToken>,
    pub(crate) progress: Option<std::sync::Arc<dyn crate::call::Progress>>,
    /// This call's approver, before the session's.
    pub(crate) approver: Option<std::sync::Arc<dyn crate::approval::Approver>>,
    /// The call has begun to change files (its first change through `host-fs`): from here
    /// on it runs to its end, whatever the cancel token says.
    pub(crate) changing: bool,
    /// The call was interrupted because it was cancelled.
    pub(crate) cancelled: bool,
    /// One note per approval asked in this call, with its answer, for the audit event.
    pub(crate) approvals: Vec<String>,
    /// The directories this call listed, and those read ahead for it.
    pub(crate) listings: crate::imports::host_fs::read_ahead::Walks,
    /// The watch as this call first synchronised with it (`Some(None)`: the count was not
    /// exact), before any listing of the call: the listings it keeps date from then.
    #[cfg(all(feature = "watch", target_os = "linux"))]
    pub(crate) synced: Option<Option<crate::tree_watch::Synced>>,
    /// This call's listings the cache held, and those it did not.
    #[cfg(all(feature = "watch", target_os = "linux"))]
    pub(crate) kept: (u32, u32),
}

impl CallState {
    /// Whether the call stops for its cancel token: cancelled before the call began to
    /// change files (then it is marked cancelled).
    pub(crate) fn stops_for_cancel(&mut self) -> bool {
        if !self.changing && self.cancel.as_ref().is_some_and(|c| c.is_cancelled()) {
            self.cancelled = true;
        }
        self.cancelled
    }

    /// What the epoch callback decides: stop the call (cancelled, or out of time) or let it
    /// run one more tick.
    pub(crate) fn tick(&mut self) -> wasmtime::UpdateDeadline {
        if self.stops_for_cancel() {
            return wasmtime::UpdateDeadline::Interrupt;
        }
        match self.deadline {
            Some(d) if std::time::Instant::now() >= d => wasmtime::UpdateDeadline::Interrupt,
            _ => wasmtime::UpdateDeadline::Continue(1),
        }
    }
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

/// Caps linear memory and remembers that the cap was hit, so the trap can be told apart.
#[derive(Debug)]
pub(crate) struct MemoryLimiter {
    pub(crate) max: usize,
    pub(crate) hit: bool,
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

pub(crate) fn internal(e: &wasmtime::Error) -> ToolError {
    ToolError::host(ErrorCode::Internal, format!("{e:#}"))
}

/// Turns a trap into the call's error: limits are `LIMIT_EXCEEDED`, anything else
/// (a guest panic, a host failure) is `INTERNAL`.
pub(crate) fn trap_error(e: &wasmtime::Error, store: &Store<HostState>) -> ToolError {
    let limit = |what: &str| {
        ToolError::host(
            ErrorCode::LimitExceeded,
            format!("the call was stopped: {what}; nothing was changed. Narrow the request (a smaller path, range or query) and retry"),
        )
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
