//! The `progress` import: a long call's counts, passed on to the caller's progress sink.

use super::state::HostState;
use crate::bindings::agent;

impl agent::file_tools::progress::Host for HostState {
    fn report(&mut self, files_scanned: u64, matches: u64) {
        if let Some(sink) = &self.call.progress {
            let update = crate::call::ProgressUpdate {
                files_scanned,
                matches,
            };
            // A panicking sink loses its updates, never the call.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sink.update(update)));
        }
    }
}
