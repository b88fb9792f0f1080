//! Directory listings kept from one call to the next while the host's watch runs, so that
//! a walk after a few changes lists only the directories they touched: `changes_since`,
//! a search confirming its index, `find_files` and `list_dir` then cost what changed, not
//! the whole tree.
//!
//! A listing is kept with the watch's batch count of the call's first synchronisation
//! ([`crate::tree_watch::TreeWatch::sync`], made before the call's first listing, so every
//! listing of the call, the read-ahead's too, was made after it). It is answered again
//! only while the watch says that no batch since then touched its directory
//! ([`crate::tree_watch::TreeWatch::unchanged_since`]), and only in a call that has
//! synchronised itself: every change completed before that call has been seen by then. So
//! a kept listing is the listing the directory would give now, but for what inotify does
//! not report (SECURITY.md, claim 26: the same limits as the watch's count).
//!
//! Not kept: a listing that holds a file with several names (a change through another name
//! moves its link count and times with no event in this directory), and anything while the
//! call changes files (it must see its own changes before the watch has). Bounded: about
//! [`MAX_ENTRIES`] entries in all; past that the cache starts again empty.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::bindings::agent::file_tools::host_fs::{DirEntry, DirEntryStat};
use crate::bindings::agent::file_tools::types::EntryType;
use crate::tree_watch::TreeWatch;

/// Entries kept in all listings, at most (about 100 bytes each).
const MAX_ENTRIES: usize = 1 << 20;

/// A directory's listings, as of a batch count of the watch.
#[derive(Debug)]
struct Kept {
    seq: u64,
    stat: Option<Vec<DirEntryStat>>,
    plain: Option<Vec<DirEntry>>,
}

#[derive(Debug, Default)]
struct Inner {
    dirs: HashMap<String, Kept>,
    entries: usize,
    /// Listings answered from the cache, for tests and measurements.
    hits: u64,
}

/// The listings kept for one watch.
#[derive(Debug, Default)]
pub(crate) struct ListingCache(Mutex<Inner>);

impl ListingCache {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // Plain data: still usable after a panic elsewhere.
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The kept listing of `dir`, when nothing in it changed since it was made.
    fn fresh<T>(
        &self,
        watch: &TreeWatch,
        dir: &str,
        pick: impl FnOnce(&Kept) -> Option<Vec<T>>,
    ) -> Option<Vec<T>> {
        if !canonical(dir) {
            return None;
        }
        let mut guard = self.lock();
        let inner = &mut *guard;
        let kept = inner.dirs.get(dir)?;
        if !watch.unchanged_since(dir, kept.seq) {
            if let Some(gone) = inner.dirs.remove(dir) {
                inner.entries -= count(&gone);
            }
            return None;
        }
        let hit = pick(kept)?;
        inner.hits += 1;
        Some(hit)
    }

    /// The kept listing of `dir` with metadata, when nothing in it changed since.
    pub(crate) fn stat(&self, watch: &TreeWatch, dir: &str) -> Option<Vec<DirEntryStat>> {
        self.fresh(watch, dir, |k| k.stat.clone())
    }

    /// The kept listing of `dir` (names and types; from the one with metadata when only
    /// that is kept), when nothing in it changed since.
    pub(crate) fn plain(&self, watch: &TreeWatch, dir: &str) -> Option<Vec<DirEntry>> {
        self.fresh(watch, dir, |k| {
            k.plain.clone().or_else(|| {
                k.stat.as_ref().map(|l| {
                    l.iter()
                        .map(|e| DirEntry {
                            name: e.name.clone(),
                            kind: e.stat.kind,
                        })
                        .collect()
                })
            })
        })
    }

    /// Keeps the listing of `dir` with metadata, made after the synchronisation at `seq`.
    pub(crate) fn keep_stat(&self, dir: &str, seq: u64, listing: &[DirEntryStat]) {
        let linked = listing
            .iter()
            .any(|e| e.stat.kind != EntryType::Dir && e.stat.link_count > 1);
        if !linked {
            self.keep(dir, seq, listing.len(), |k| k.stat = Some(listing.to_vec()));
        }
    }

    /// Keeps the listing of `dir` (names and types), made after the synchronisation at
    /// `seq`. (A file's other names do not change its type: no entry is refused.)
    pub(crate) fn keep_plain(&self, dir: &str, seq: u64, listing: &[DirEntry]) {
        self.keep(dir, seq, listing.len(), |k| {
            k.plain = Some(listing.to_vec())
        });
    }

    fn keep(&self, dir: &str, seq: u64, len: usize, put: impl FnOnce(&mut Kept)) {
        if !canonical(dir) {
            return;
        }
        let mut guard = self.lock();
        let inner = &mut *guard;
        if inner.entries + len > MAX_ENTRIES {
            inner.dirs.clear();
            inner.entries = 0;
            if len > MAX_ENTRIES {
                return;
            }
        }
        let empty = || Kept {
            seq,
            stat: None,
            plain: None,
        };
        let kept = inner.dirs.entry(dir.to_string()).or_insert_with(empty);
        // What was kept under another count goes, in both its forms.
        if kept.seq != seq {
            inner.entries -= count(&std::mem::replace(kept, empty()));
        }
        let before = count(kept);
        put(kept);
        inner.entries = inner.entries + count(kept) - before;
    }

    /// Listings answered from the cache so far.
    #[cfg(test)]
    pub(crate) fn hits(&self) -> u64 {
        self.lock().hits
    }
}

/// Whether `dir` is a logical path as the watch stamps it (`""`, or names joined by single
/// `/`, none `.` or `..`): another spelling of a directory would never be found stale.
fn canonical(dir: &str) -> bool {
    dir.is_empty()
        || dir
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != "..")
}

/// The entries a kept directory holds in both its forms.
fn count(k: &Kept) -> usize {
    k.stat.as_ref().map_or(0, Vec::len) + k.plain.as_ref().map_or(0, Vec::len)
}

#[cfg(test)]
mod tests;
