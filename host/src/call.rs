//! What a caller can attach to one call: a [`CancelToken`] to stop it, a [`Progress`] sink
//! to hear how far it has come, and an [`Approver`] for this call only.
//!
//! Cancellation is honoured until the call starts to change files (its first change through
//! the host's file-system port: a temporary file, a directory, a rename or a removal). From
//! that point on the change runs to its end, so a cancel never leaves a multi-file change
//! half applied. A cancelled call fails with `CANCELLED` and has changed nothing; a call
//! that returns anything else with its token cancelled ran to its end (its audit event
//! notes that the cancel came too late).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::approval::Approver;

/// A flag that asks a running call to stop. Cheap to clone; every clone is the same flag.
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    /// A token not yet cancelled.
    pub fn new() -> Self {
        CancelToken::default()
    }

    /// Asks the call to stop (it stops within a few milliseconds, unless it has begun to
    /// change files).
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether [`CancelToken::cancel`] was called on this token or a clone of it.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// How far a long call (a walk, a search, a patch) has come.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProgressUpdate {
    /// Files looked at so far.
    pub files_scanned: u64,
    /// Matches found so far (searches).
    pub matches: u64,
}

/// Receives progress updates during a call. Called on the calling thread, from inside the
/// call: keep it quick (hand the update to another thread or task).
pub trait Progress: Send + Sync {
    /// The call has come this far.
    fn update(&self, update: ProgressUpdate);
}

impl<F: Fn(ProgressUpdate) + Send + Sync> Progress for F {
    fn update(&self, update: ProgressUpdate) {
        self(update)
    }
}

/// Options of one call (see the module docs). The default is a plain call.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct CallOptions {
    /// Stops the call when cancelled (before it begins to change files).
    pub cancel: Option<CancelToken>,
    /// Hears how far a long call has come.
    pub progress: Option<Arc<dyn Progress>>,
    /// Decides on changes that need approval in this call, instead of the session's.
    pub approver: Option<Arc<dyn Approver>>,
}

impl std::fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallOptions")
            .field("cancel", &self.cancel)
            .field("progress", &self.progress.is_some())
            .field("approver", &self.approver.is_some())
            .finish()
    }
}

impl CallOptions {
    /// A plain call: no cancel token, no progress sink, the session's approver.
    pub fn new() -> Self {
        CallOptions::default()
    }

    /// Lets `token` stop the call.
    pub fn cancel(mut self, token: CancelToken) -> Self {
        self.cancel = Some(token);
        self
    }

    /// Sends the call's progress to `sink`.
    pub fn progress(mut self, sink: Arc<dyn Progress>) -> Self {
        self.progress = Some(sink);
        self
    }

    /// Lets `approver` decide on this call's changes that need approval.
    pub fn approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = Some(approver);
        self
    }
}
