//! The host-fs listings answered from, and kept in, the watch's listing cache
//! ([`crate::listing_cache`]).

use std::sync::Arc;

use crate::imports::state::HostState;
use crate::tree_watch::TreeWatch;

impl HostState {
    /// The watch's count as this call reads it. The call's first read is the call's
    /// synchronisation: the listings it keeps date from it.
    pub(super) fn sync_watch(&mut self) -> Option<u64> {
        let now = self.tree_watch.as_ref()?.sync();
        if self.call.synced.is_none() {
            self.call.synced = Some(now);
        }
        now.map(|s| s.count)
    }

    /// The watch and the batch count this call's listings are kept under, when they may be
    /// answered from and kept in its cache: the session runs a watch whose count is exact,
    /// and the call has not begun to change files. Synchronises the call first when it has
    /// not yet.
    pub(super) fn cache(&mut self) -> Option<(Arc<TreeWatch>, u64)> {
        if self.call.changing {
            return None;
        }
        if self.call.synced.is_none() {
            self.sync_watch();
        }
        let seq = self.call.synced??.seq;
        Some((self.tree_watch.clone()?, seq))
    }

    /// Whether a listing this call's cache does not hold is made at once rather than
    /// through the read-ahead (and counts it as not held): while the cache holds most of
    /// the call's listings, the read-ahead would list ahead below each one it does not
    /// hold what the cache holds anyway, and the walk would help it there.
    pub(super) fn list_at_once(&mut self) -> bool {
        let (held, not) = self.call.kept;
        self.call.kept.1 += 1;
        held > not
    }
}
