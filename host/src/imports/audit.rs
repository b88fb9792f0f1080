//! The `audit` import: the event the component emits for each call, kept for the
//! session to hand to its audit sink when the call returns.

use super::state::HostState;
use crate::bindings::agent;
use crate::bindings::agent::file_tools::types::AuditEvent;

impl agent::file_tools::audit::Host for HostState {
    fn emit(&mut self, event: AuditEvent) {
        // Bounded: one call emits one event; a misbehaving guest cannot grow this forever.
        if self.events.len() < 16 {
            self.events.push(event);
        }
    }
}
