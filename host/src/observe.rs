//! Watching every call a session makes: a [`CallObserver`] given to
//! [`crate::SessionBuilder::observer`] hears one [`CallRecord`] per tool call, after the call
//! returns. It is the hook for metrics (the `file-tools-mcp` crate counts calls in the
//! Prometheus format through it) or any accounting of the embedder's own, shaped like the
//! audit sink.
//!
//! Outcomes: `ok`, an error code in lower case (`not_found`, `write_conflict`, ...),
//! `timed_out` (the wall-clock limit interrupted the call), `cancelled` (the caller's
//! cancel token stopped it, see [`crate::call`]), `trapped` (any other trap: fuel, memory,
//! a guest panic).

use std::time::Duration;

/// What one call did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallRecord {
    /// The tool's name; a name the session does not offer is `unknown`, so that a client
    /// sending made-up names makes one label, not one each.
    pub tool: String,
    /// `ok`, an error code in lower case, `timed_out`, `cancelled` or `trapped`.
    pub outcome: String,
    /// Wall-clock time of the call.
    pub duration: Duration,
    /// Bytes of file content the call read.
    pub bytes_read: u64,
    /// Bytes the call wrote.
    pub bytes_written: u64,
    /// Fuel the call used (0 on a runtime without fuel metering).
    pub fuel: u64,
}

/// Hears every call of the sessions it is given to. Called on the calling thread after each
/// call; a panic in it is caught and the record lost, never the call's result.
pub trait CallObserver: Send + Sync {
    /// One call has returned.
    fn record(&self, call: &CallRecord);
}

impl<F: Fn(&CallRecord) + Send + Sync> CallObserver for F {
    fn record(&self, call: &CallRecord) {
        self(call)
    }
}

/// The outcome of an error code (`NOT_FOUND` is `not_found`).
pub fn outcome_of(code: &str) -> String {
    code.to_ascii_lowercase()
}
