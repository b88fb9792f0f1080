//! The embedder's say on changes the policy marks as needing approval.
//!
//! The policy's `approval` rules (deletions, build files, security-sensitive paths, large
//! changes) decide *which* changes need approval; an [`Approver`] decides whether each one
//! goes ahead. The component asks after planning a change and before writing anything; a
//! session without an approver declines, and the call fails with `APPROVAL_REQUIRED`.
//! Time spent waiting for an answer does not count against the call's wall-clock limit.
//!
//! The request's text (reasons, paths, diff) comes with every control, bidi-control and
//! invisible character spelled out (`⟨CR⟩`, `⟨U+001B⟩`, `⟨U+202E⟩`), and
//! `ApprovalRequest::escaped` counts them; an approver that shows the plan to a person
//! should show [`notice`] with it.

pub use crate::bindings::agent::file_tools::types::ApprovalRequest;

/// Decides whether a planned change may be written.
pub trait Approver: Send + Sync {
    /// True lets the change go ahead; false refuses it (nothing is written).
    fn approve(&self, request: &ApprovalRequest) -> bool;
}

impl<F: Fn(&ApprovalRequest) -> bool + Send + Sync> Approver for F {
    fn approve(&self, request: &ApprovalRequest) -> bool {
        self(request)
    }
}

/// The warning to show beside a plan that holds control, bidi-control or invisible
/// characters (spelled out in its text); `None` for a plain one.
pub fn notice(request: &ApprovalRequest) -> Option<String> {
    let n = request.escaped;
    (n > 0).then(|| {
        let s = if n == 1 { "" } else { "s" };
        format!(
            "Warning: this change contains {n} invisible or control character{s} (carriage \
             returns, escape sequences, bidi overrides, zero-width characters), shown escaped \
             as ⟨NAME⟩ or ⟨U+XXXX⟩; the file gets the characters themselves."
        )
    })
}
