//! The `approval` import: a change that needs a person's yes, put to the call's approver
//! (or the session's); without one, or when the approver panics, the change is declined.

use super::state::HostState;
use crate::bindings::agent;

impl agent::file_tools::approval::Host for HostState {
    fn request(&mut self, change: agent::file_tools::types::ApprovalRequest) -> bool {
        let Some(approver) = self.call.approver.clone().or_else(|| self.approver.clone()) else {
            return false;
        };
        let files: Vec<&str> = change.files.iter().map(|f| f.path.as_str()).collect();
        let started = std::time::Instant::now();
        // A panicking approver declines: the embedder's bug must not write files.
        let yes =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| approver.approve(&change)))
                .unwrap_or(false);
        if let Some(d) = &mut self.call.deadline {
            *d += started.elapsed();
        }
        // A cancel that came while the user was asked wins over the answer: the call ends
        // as cancelled, before any change.
        let yes = !self.call.stops_for_cancel() && yes;
        self.call.approvals.push(format!(
            "approval asked for {} ({}): {} after {} ms",
            files.join(", "),
            change.reasons.join("; "),
            if yes { "granted" } else { "declined" },
            started.elapsed().as_millis()
        ));
        yes
    }
}
