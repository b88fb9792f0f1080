//! Directory listings kept from one call to the next while the host's watch runs, so that
//! a walk after a few changes (`changes_since`, a search confirming its index,
//! `find_files`, `list_dir`) lists again only the directories they touched. The component
//! still goes over every entry; what is spared is the system calls (a `stat` per entry).
//!
//! A listing is kept with the watch's batch count of the call's first synchronisation
//! ([`crate::tree_watch::TreeWatch::sync`], made before the call's first listing, so every
//! listing of the call, the read-ahead's too, was made after it). It is answered again
//! only for a directory the watch watches by that path, while the watch says that no
//! batch since then touched it ([`crate::tree_watch::TreeWatch::unchanged_since`]), and
//! only in a call that has synchronised itself: every change completed before that call
//! has been seen by then. So a kept listing is the listing the directory would give now,
//! but for what inotify does not report (SECURITY.md, claim 26).
//!
//! Not kept: a listing that holds a file with several names (a change through another name
//! moves its link count and times with no event in this directory), and anything while the
//! call changes files (it must see its own changes before the watch has). Bounded: about
//! [`MAX_BYTES`] in all; past that the cache starts again empty.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::bindings::agent::file_tools::host_fs::{DirEntry, DirEntryStat};
use crate::bindings::agent::file_tools::types::EntryType;
use crate::tree_watch::TreeWatch;

/// The memory the kept listings take, at most (about: each entry's name and record, each
/// directory's path).
const MAX_BYTES: usize = 128 << 20;

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
    /// What they take, as [`weight`] counts it.
    bytes: usize,
    /// Listings answered from the cache, and asked of it, for tests and measurements.
    hits: u64,
    asked: u64,
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
        inner.asked += 1;
        let kept = inner.dirs.get(dir)?;
        if !watch.unchanged_since(dir, kept.seq) {
            if let Some(gone) = inner.dirs.remove(dir) {
                inner.bytes -= weight(dir, &gone);
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

    /// The kept listing of `dir` (names and types), when nothing in it changed since. (Not
    /// made from the one with metadata: that one leaves out an entry it could not look at,
    /// in a directory that may be read but not searched.)
    pub(crate) fn plain(&self, watch: &TreeWatch, dir: &str) -> Option<Vec<DirEntry>> {
        self.fresh(watch, dir, |k| k.plain.clone())
    }

    /// Keeps the listing of `dir` with metadata, made after the synchronisation at `seq`.
    pub(crate) fn keep_stat(&self, dir: &str, seq: u64, listing: &[DirEntryStat]) {
        let linked = listing
            .iter()
            .any(|e| e.stat.kind != EntryType::Dir && e.stat.link_count > 1);
        if !linked {
            self.keep(dir, seq, |k| k.stat = Some(listing.to_vec()));
        }
    }

    /// Keeps the listing of `dir` (names and types), made after the synchronisation at
    /// `seq`. (A file's other names do not change its type: no entry is refused.)
    pub(crate) fn keep_plain(&self, dir: &str, seq: u64, listing: &[DirEntry]) {
        self.keep(dir, seq, |k| k.plain = Some(listing.to_vec()));
    }

    fn keep(&self, dir: &str, seq: u64, put: impl FnOnce(&mut Kept)) {
        if !canonical(dir) {
            return;
        }
        let mut guard = self.lock();
        let inner = &mut *guard;
        let empty = || Kept {
            seq,
            stat: None,
            plain: None,
        };
        let mut kept = match inner.dirs.remove(dir) {
            Some(k) => {
                inner.bytes -= weight(dir, &k);
                k
            }
            None => empty(),
        };
        // What was kept under another count goes, in both its forms.
        if kept.seq != seq {
            kept = empty();
        }
        put(&mut kept);
        let w = weight(dir, &kept);
        if inner.bytes + w > MAX_BYTES {
            inner.dirs.clear();
            inner.bytes = 0;
            if w > MAX_BYTES {
                return;
            }
        }
        inner.bytes += w;
        inner.dirs.insert(dir.to_string(), kept);
    }

    /// Listings answered from the cache so far.
    #[cfg(test)]
    pub(crate) fn hits(&self) -> u64 {
        self.lock().hits
    }

    /// Listings asked of the cache so far (answered or not).
    #[cfg(test)]
    pub(crate) fn asked(&self) -> u64 {
        self.lock().asked
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

/// About the memory the listings of `dir` take: its path, each entry's name and record.
fn weight(dir: &str, k: &Kept) -> usize {
    let names = |n: &Option<String>| n.as_ref().map_or(0, String::len);
    let stat = k.stat.as_ref().map_or(0, |l| {
        l.iter()
            .map(|e| names(&e.name) + std::mem::size_of::<DirEntryStat>())
            .sum()
    });
    let plain = k.plain.as_ref().map_or(0, |l| {
        l.iter()
            .map(|e| names(&e.name) + std::mem::size_of::<DirEntry>())
            .sum()
    });
    dir.len() + std::mem::size_of::<Kept>() + 64 + stat + plain
}

#[cfg(test)]
mod tests;
