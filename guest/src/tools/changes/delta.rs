//! A snapshot stored as what differs from a whole one, so that a call which found a few
//! changes writes a few records, not the whole tree again.
//!
//! The stored form is the 8 bytes `ftsnapd\n`, the 32 bytes of the sha256 that names the
//! whole snapshot it is read against (its base), the time the snapshot was taken (u64,
//! little-endian), then one entry per path whose record differs from the base's, in path
//! order, each once: a record as a whole snapshot stores it ([`super::snapshot`]) for a file
//! as it now is, or the byte [`GONE`], the path's length (u32) and the path for one that is
//! no longer there. The walk's memo is the base's.
//!
//! A delta's own name is the sha256 of these bytes, which hold the base's name: reading
//! one checks both, so neither can be altered alone. A base is always a whole snapshot (a
//! delta holds every difference from it, never a chain of deltas), and the store keeps the
//! base of every delta it keeps ([`super::store`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use super::snapshot::{paired, plain_path, read_rec, write_rec, Rec, Snapshot};
use super::store::Store;
use crate::error::ToolResult;
use crate::text::bytes::{self, Reader};

const MAGIC: &[u8; 8] = b"ftsnapd\n";

/// The first byte of an entry for a path no longer there (a record's flags never have
/// this bit).
const GONE: u8 = 0x40;

/// A delta read in place: its base's name, when it was taken and its entries (`None` for a
/// path no longer there), in path order.
#[derive(Debug)]
pub struct Delta<'a> {
    pub base: String,
    pub taken: u64,
    pub entries: Vec<(&'a str, Option<Rec>)>,
}

/// The name of the base of the delta `bytes`; `None` for a whole snapshot (or anything
/// else).
pub fn base_of(bytes: &[u8]) -> Option<String> {
    let rest = bytes.strip_prefix(MAGIC)?;
    rest.get(..32).map(crate::fs::hash::hex)
}

impl<'a> Delta<'a> {
    /// Reads the stored form, borrowing each path from `bytes`; `None` for anything else
    /// (also for paths out of order or repeated).
    pub fn decode(bytes: &'a [u8]) -> Option<Self> {
        let base = base_of(bytes)?;
        let mut r = Reader(bytes.get(MAGIC.len() + 32..)?);
        let taken = r.u64()?;
        let mut entries: Vec<(&str, Option<Rec>)> = Vec::new();
        while let Some(&flags) = r.0.first() {
            let (path, rec) = if flags == GONE {
                r.take(1)?;
                let len = usize::try_from(r.u32()?).ok()?;
                let path = std::str::from_utf8(r.take(len)?).ok()?;
                (plain_path(path).then_some(path)?, None)
            } else {
                let (path, rec) = read_rec(&mut r)?;
                (path, Some(rec))
            };
            if entries
                .last()
                .is_some_and(|(last, _)| bytes::cmp(last.as_bytes(), path.as_bytes()).is_ge())
            {
                return None;
            }
            entries.push((path, rec));
        }
        Some(Delta {
            base,
            taken,
            entries,
        })
    }

    /// The snapshot this delta stands for, read against `base` (the whole snapshot its
    /// name names).
    pub fn apply(&self, base: Snapshot<&'a str>) -> Snapshot<&'a str> {
        Snapshot {
            taken: self.taken,
            files: apply(base.files, self.entries.iter().copied()),
        }
    }
}

/// The records of `files` (in path order) with `entries` (in path order, each path once)
/// put in: a record replaces the one at its path or is added, `None` removes the path's.
pub fn apply<P: AsRef<str>>(
    files: Vec<(P, Rec)>,
    entries: impl IntoIterator<Item = (P, Option<Rec>)>,
) -> Vec<(P, Rec)> {
    let mut entries = entries.into_iter().peekable();
    let mut out = Vec::with_capacity(files.len() + entries.size_hint().0);
    let before = |a: &P, b: &P| bytes::cmp(a.as_ref().as_bytes(), b.as_ref().as_bytes());
    for (path, rec) in files {
        while let Some((p, r)) = entries.next_if(|(p, _)| before(p, &path).is_lt()) {
            // A path removed that the base never held has nothing to remove.
            out.extend(r.map(|r| (p, r)));
        }
        match entries.next_if(|(p, _)| before(p, &path).is_eq()) {
            Some((p, r)) => out.extend(r.map(|r| (p, r))),
            None => out.push((path, rec)),
        }
    }
    out.extend(entries.filter_map(|(p, r)| r.map(|r| (p, r))));
    out
}

/// The entries that turn `old` into `new` (both in path order): the records that differ
/// or are new, and `None` for each path gone.
pub fn between<'p, P: AsRef<str>, Q: AsRef<str>>(
    old: &'p [(P, Rec)],
    new: &'p [(Q, Rec)],
) -> Vec<(&'p str, Option<Rec>)> {
    let mut out = Vec::new();
    paired(old, new, |path, a, b| {
        if a != b {
            out.push((path, b.copied()));
        }
    });
    out
}

/// What a session's newest snapshot differs by from the whole snapshot it is stored
/// against.
#[derive(Debug, Clone, Default)]
pub struct Chain {
    /// The whole snapshot's name; empty when none is known (the next one is stored whole).
    pub base: String,
    pub entries: BTreeMap<Arc<str>, Option<Rec>>,
}

impl Chain {
    /// A chain from the whole snapshot `base`, with nothing changed yet.
    pub fn from_whole(base: &str) -> Self {
        Chain {
            base: base.to_string(),
            entries: BTreeMap::new(),
        }
    }

    /// The chain a stored delta read as `d` stands for.
    pub fn from_delta(d: &Delta<'_>) -> Self {
        Chain {
            base: d.base.clone(),
            entries: d.entries.iter().map(|(p, r)| (Arc::from(*p), *r)).collect(),
        }
    }

    /// Adds what changed since the chain's newest snapshot.
    pub fn add(&mut self, changed: impl IntoIterator<Item = (Arc<str>, Option<Rec>)>) {
        self.entries.extend(changed);
    }

    /// Stores `snap` (whose walk's memo is `memo`, the base's when the chain has one) as a
    /// delta against the base when the chain holds few entries and the base is still
    /// kept once the delta is written, whole otherwise (which starts a new chain); returns
    /// its name.
    ///
    /// # Errors
    /// `IO_ERROR` when the state directory cannot be written.
    pub fn store<P: AsRef<str>>(
        &mut self,
        store: &Store<'_>,
        snap: &Snapshot<P>,
        memo: &[u8],
    ) -> ToolResult<String> {
        // At most one record in eight: a delta stays far smaller than the whole.
        let small = self.entries.len() <= snap.files.len() / 8;
        let base = crate::fs::hash::unhex32(&self.base).filter(|_| small);
        if let Some(base) = base.filter(|_| store.has(&self.base)) {
            let mut out = Vec::with_capacity(48 + self.entries.len() * 120);
            out.extend_from_slice(MAGIC);
            out.extend_from_slice(&base);
            out.extend_from_slice(&snap.taken.to_le_bytes());
            for (path, rec) in &self.entries {
                match rec {
                    Some(r) => write_rec(&mut out, path, r),
                    None => {
                        out.push(GONE);
                        out.extend_from_slice(&(path.len() as u32).to_le_bytes());
                        out.extend_from_slice(path.as_bytes());
                    }
                }
            }
            let name = store.put(Arc::new(out))?;
            // Another process's prune may have taken the base meanwhile; seen after the
            // delta was written, it stays (see `prune`). Else the delta, which names
            // nothing, is removed at once (its put counted it among the newest).
            if store.has(&self.base) {
                return Ok(name);
            }
            store.discard(&name);
        }
        let name = store.put(Arc::new(snap.encode(memo)))?;
        *self = Chain::from_whole(&name);
        Ok(name)
    }
}
