//! The embedder's say on changes the policy marks as needing approval.
//!
//! The policy's `approval` rules (deletions, build files, security-sensitive paths, large
//! changes) decide *which* changes need approval; an [`Approver`] decides whether each one
//! goes ahead. The component asks after planning a change and before writing anything; a
//! session without an approver declines, and the call fails with `APPROVAL_REQUIRED`.
//! Time spent waiting for an answer does not count against the call's wall-clock limit.

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
