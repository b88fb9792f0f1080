//! The host-fs listings answered from, and kept in, the watch's listing cache
//! ([`crate::listing_cache`]).

use std::sync::Arc;

use cap_std::fs::Dir;

use super::read_ahead::{Entry, List, Listing, Listings, Walks};
use crate::bindings::agent::file_tools::host_fs::{DirEntry, DirEntryStat};
use crate::imports::state::HostState;
use crate::listing_cache::ListingCache;
use crate::tree_watch::TreeWatch;

/// One kind of listing (`read-dir`'s or `read-dir-stat`'s): how the cache holds and keeps
/// it, how it is made, and the read-ahead that makes it for a walk.
pub(super) struct Kind<E> {
    held: fn(&ListingCache, &TreeWatch, &str) -> Option<Vec<E>>,
    keep: fn(&ListingCache, &str, u64, &[E]),
    make: List<E>,
    ahead: fn(&mut Walks) -> &mut Listings<E>,
}

/// `read-dir`'s listings.
pub(super) const PLAIN: Kind<DirEntry> = Kind {
    held: ListingCache::plain,
    keep: ListingCache::keep_plain,
    make: super::read_dir,
    ahead: |w| &mut w.plain,
};

/// `read-dir-stat`'s listings.
pub(super) const WITH_STAT: Kind<DirEntryStat> = Kind {
    held: ListingCache::stat,
    keep: ListingCache::keep_stat,
    make: super::read_dir_stat,
    ahead: |w| &mut w.with_stat,
};

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

    /// This call's synchronisation with the watch (made now when the call has none yet);
    /// `None` when the watch's count is not exact.
    fn synced(&mut self) -> Option<crate::tree_watch::Synced> {
        if self.call.synced.is_none() {
            self.sync_watch();
        }
        self.call.synced?
    }

    /// The directories a change since the watch's count `since` may have touched, as this
    /// call's synchronisation sees them (see [`TreeWatch::changed_dirs`]), for a walk from
    /// `start`. Synchronises the call first when it has not yet.
    pub(super) fn changed_dirs(&mut self, since: u64, start: &str) -> Option<Vec<String>> {
        self.synced()?;
        let dirs = self.tree_watch.as_ref()?.changed_dirs(since, start)?;
        // A directory whose name is not UTF-8 is never walked.
        Some(
            dirs.into_iter()
                .filter_map(|d| d.into_os_string().into_string().ok())
                .collect(),
        )
    }

    /// The watch and the batch count this call's listings are kept under, when they may be
    /// answered from and kept in its cache: the session runs a watch whose count is exact,
    /// and the call has not begun to change files. Synchronises the call first when it has
    /// not yet.
    fn cache(&mut self) -> Option<(Arc<TreeWatch>, u64)> {
        if self.call.changing {
            return None;
        }
        let seq = self.synced()?.seq;
        Some((self.tree_watch.clone()?, seq))
    }

    /// Whether a listing this call's cache does not hold is made at once rather than
    /// through the read-ahead (and counts it as not held): while the cache holds most of
    /// the call's listings, the read-ahead would list ahead below each one it does not
    /// hold what the cache holds anyway, and the walk would help it there.
    fn list_at_once(&mut self) -> bool {
        let (held, not) = self.call.kept;
        self.call.kept.1 += 1;
        held > not
    }

    /// The listing of `path` in the repository `dir`: the one the cache holds, else made
    /// (at once, or by the read-ahead) and kept.
    pub(super) fn listing<E: Entry + Clone>(
        &mut self,
        dir: &Arc<Dir>,
        path: &str,
        kind: Kind<E>,
    ) -> Listing<E> {
        let cache = self.cache();
        if let Some(hit) = cache
            .as_ref()
            .and_then(|(w, _)| (kind.held)(&w.listings, w, path))
        {
            self.call.kept.0 += 1;
            return Ok(hit);
        }
        let listing = if cache.is_some() && self.list_at_once() {
            (kind.make)(dir, path, usize::MAX)
        } else {
            (kind.ahead)(&mut self.call.listings).list(dir, path, kind.make)
        };
        if let (Some((w, seq)), Ok(l)) = (&cache, &listing) {
            (kind.keep)(&w.listings, path, *seq, l);
        }
        listing
    }
}
