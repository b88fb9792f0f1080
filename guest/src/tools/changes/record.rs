//! The records of a snapshot, made as the walk shows each file.
//!
//! A [`Recorder`] takes the files of a walk one by one, in the walk's order, and makes each
//! one's record: its metadata, and its content's digest, reused from the earlier snapshot
//! where the metadata did not move (see [`super::scan`]). It is fed while the walk goes on,
//! so that this work runs beside the host's listings rather than after the last of them.
//! The files whose content is to be read wait for [`Recorder::finish`], which the scan
//! calls once the walk is known to fit the policy's bound: a tree past it costs its
//! listings, not its reads.
//!
//! The earlier snapshot is in path order (bytes), the walk's in component order: the two
//! differ only for a name that sorts before `/` beside a directory of the same stem. The
//! earlier record of a file is looked for where the last one was met, and by a binary
//! search only when it is not there. The records come out in path order.

use std::sync::Arc;

use super::scan::{nanos, racily_clean, ScanStats, Seen};
use super::snapshot::{Rec, Sha256, Shown, Snapshot};
use crate::fs::port::{Dir, Stat};
use crate::rules::classify::Kind;
use crate::rules::fsx::EntryType;
use crate::rules::path::LogicalPath;
use crate::text::bytes::{self, NearlySorted};
use crate::tools::session::Session;

/// The directory holding a file: the walk's held handle, or opened by path on first need.
enum Parent {
    Held(Arc<Dir>),
    ByPath {
        path: LogicalPath,
        opened: Option<Option<Arc<Dir>>>,
    },
}

impl Parent {
    /// True for a directory opened by its path, `dir`.
    fn opened_at(&self, dir: &str) -> bool {
        matches!(self, Parent::ByPath { path, .. } if path.as_str() == dir)
    }

    fn dir(&mut self, s: &Session) -> Option<Arc<Dir>> {
        match self {
            Parent::Held(d) => Some(d.clone()),
            Parent::ByPath { path, opened } => opened
                .get_or_insert_with(|| s.fs.open_dir(path).ok())
                .clone(),
        }
    }
}

/// What reading files cost a scan.
#[derive(Debug, Default)]
struct Tally {
    /// Files whose content was read and hashed.
    hashed: u32,
    /// Bytes read to hash them.
    bytes: u64,
}

/// Makes the records of a walk's files, one at a time (see the module docs).
pub struct Recorder<'o, P> {
    /// The earlier snapshot's time and records.
    old: Option<(u64, &'o [(P, Rec)])>,
    /// The index in `old` of the record expected next.
    next: usize,
    /// The directory of the last file looked at by `stat` (a listing without metadata).
    parent: Option<Parent>,
    files: NearlySorted<(String, Rec)>,
    /// The files whose content is to be read, with their records so far.
    to_read: Vec<ToRead<'o>>,
    /// Whether every record so far met an equal earlier one.
    same: bool,
    tally: Tally,
}

impl<'o, P: AsRef<str>> Recorder<'o, P> {
    /// A recorder reusing what `old` knew.
    pub fn new(old: Option<&'o Snapshot<P>>) -> Self {
        Recorder {
            old: old.map(|o| (o.taken, o.files.as_slice())),
            next: 0,
            parent: None,
            // About as many files as the earlier snapshot held: no growth, and no copy,
            // midway.
            files: NearlySorted::with_capacity(old.map_or(0, |o| o.files.len()) + 64, by_path),
            to_read: Vec::new(),
            same: true,
            tally: Tally::default(),
        }
    }

    /// The earlier record of the file at `path`, with the earlier snapshot's time.
    fn earlier(&mut self, path: &[u8]) -> Option<(u64, &'o Rec)> {
        let (taken, files) = self.old?;
        let at = match files.get(self.next) {
            Some((p, _)) if bytes::eq_short(p.as_ref().as_bytes(), path) => Some(self.next),
            _ => files
                .binary_search_by(|(p, _)| bytes::cmp(p.as_ref().as_bytes(), path))
                .ok(),
        }?;
        self.next = at + 1;
        Some((taken, &files[at].1))
    }

    /// Records the file `seen` (each path once).
    pub fn take(&mut self, s: &Session, (path, kind, held, listed_stat): Seen) {
        let prev = self.earlier(path.as_str().as_bytes());
        // The walk's own listing with metadata (`with_stat`, where the host lists with
        // metadata), else one look through the directory.
        let st = match listed_stat {
            Some(st) => Some(st),
            None => parent_of(&mut self.parent, &path, held.clone())
                .dir(s)
                .and_then(|d| d.stat_at(path.name()).ok().flatten()),
        };
        // Gone, or unreadable, since the walk listed it: not part of this snapshot.
        let Some(st) = st else {
            return;
        };
        match look(s, kind, &st, prev) {
            None => {}
            Some(Look::Done(rec)) => self.keep(path, rec, prev.map(|p| p.1)),
            // A directory opened by path is let go meanwhile (opened again then).
            Some(Look::Read(rec)) => self.to_read.push(ToRead {
                path,
                held,
                rec,
                prev: prev.map(|p| p.1),
            }),
        }
    }

    fn keep(&mut self, path: LogicalPath, rec: Rec, prev: Option<&Rec>) {
        self.same &= prev.is_some_and(|p| p.tells_same(&rec));
        self.files.push((path.into_string(), rec));
    }

    /// The records, in path order; adds what reading cost to `stats` and sets
    /// `stats.same_as_old` to whether every record met an equal earlier one (the caller
    /// compares the counts).
    pub fn finish(mut self, s: &Session, stats: &mut ScanStats) -> Vec<(String, Rec)> {
        let mut parent = None;
        for f in std::mem::take(&mut self.to_read) {
            let dir = parent_of(&mut parent, &f.path, f.held);
            if let Some(rec) = read(s, dir, &f.path, f.rec, &mut self.tally) {
                self.keep(f.path, rec, f.prev);
            }
        }
        stats.hashed += self.tally.hashed;
        stats.bytes += self.tally.bytes;
        stats.same_as_old = self.same;
        self.files.into_sorted()
    }
}

/// The records of the files `seen`, in path order, reusing `old`'s hashes where the
/// metadata did not move; sets `stats.same_as_old` to whether every record met an equal
/// earlier one (the caller compares the counts).
pub fn records<P: AsRef<str>>(
    s: &Session,
    seen: Vec<Seen>,
    old: Option<&Snapshot<P>>,
    stats: &mut ScanStats,
) -> Vec<(String, Rec)> {
    let mut recorder = Recorder::new(old);
    for file in seen {
        recorder.take(s, file);
    }
    recorder.finish(s, stats)
}

/// A record's path, as the records are ordered.
fn by_path(f: &(String, Rec)) -> &[u8] {
    f.0.as_bytes()
}

/// The directory holding the file at `path`: the walk's `held` handle, else `last` when
/// it was opened for a file before in the same directory, else that directory by path.
fn parent_of<'p>(
    last: &'p mut Option<Parent>,
    path: &LogicalPath,
    held: Option<Arc<Dir>>,
) -> &'p mut Parent {
    if let Some(d) = held {
        return last.insert(Parent::Held(d));
    }
    if !last
        .as_ref()
        .is_some_and(|p| p.opened_at(path.parent_str()))
    {
        *last = None;
    }
    last.get_or_insert_with(|| Parent::ByPath {
        path: path.parent(),
        opened: None,
    })
}

/// A file whose content is to be read.
struct ToRead<'o> {
    path: LogicalPath,
    /// The walk's handle of its directory, when the walk held one.
    held: Option<Arc<Dir>>,
    /// Its record from its metadata.
    rec: Rec,
    prev: Option<&'o Rec>,
}

/// What the metadata of a file tells.
enum Look {
    /// Its record.
    Done(Rec),
    /// Its record so far: its content is to be read.
    Read(Rec),
}

/// What the metadata `st` of one file tells; `None` for what is to be left out (a
/// directory or special file swapped in since the walk).
fn look(s: &Session, kind: Kind, st: &Stat, prev: Option<(u64, &Rec)>) -> Option<Look> {
    let mut rec = Rec {
        size: st.size,
        mtime: nanos(st.modified),
        ctime: nanos(st.changed),
        inode: st.inode,
        shown: Shown::Name,
        sha256: None,
    };
    match st.ty {
        EntryType::Symlink => {
            rec.shown = Shown::Link;
            return Some(Look::Done(rec));
        }
        EntryType::File => {}
        EntryType::Dir | EntryType::Other => return None,
    }
    // A secret by name, or a file another name of which may lie outside: name only.
    if kind == Kind::Secret || !s.policy.links_allowed(st.nlink) {
        return Some(Look::Done(rec));
    }
    // Blocked and not-allowed paths never reach here: the walk leaves them out.
    if let Some((taken, p)) = prev {
        // Equal metadata: the earlier record's time is this one's.
        if p.same_metadata(&rec) && !racily_clean(p, taken) {
            rec.shown = p.shown;
            rec.sha256 = p.sha256;
            return Some(Look::Done(rec));
        }
    }
    if st.size > s.policy.limits().max_hash_bytes {
        rec.shown = Shown::Size;
        return Some(Look::Done(rec));
    }
    Some(Look::Read(rec))
}

/// The record `rec` of the file at `path` completed with what its content tells; `None`
/// when it can no longer be read (gone since the walk).
fn read(
    s: &Session,
    parent: &mut Parent,
    path: &LogicalPath,
    mut rec: Rec,
    tally: &mut Tally,
) -> Option<Rec> {
    let max = s.policy.limits().max_hash_bytes;
    let data = match s.fs.services().read_file(path, max.saturating_add(1)) {
        // The host refuses anything but a regular file with one name.
        Some(r) => r.ok()?,
        None => {
            let (data, st) = parent
                .dir(s)?
                .read_file(path.name(), max.saturating_add(1))
                .ok()?;
            // The file as opened: since the walk's look, another name of a file outside
            // may have taken its place (name only, as `look` would say now).
            if !s.policy.links_allowed(st.nlink) {
                return Some(rec);
            }
            data
        }
    };
    tally.bytes += data.len() as u64;
    if data.len() as u64 > max {
        rec.shown = Shown::Size;
        return Some(rec);
    }
    // Size as read: the file may have moved since the stat.
    rec.size = data.len() as u64;
    if s.policy.sniff(path, &data).is_some() {
        // Holds what looks like a secret: name only, as every other tool withholds it
        // (and not counted as hashed: the count would tell that it moved).
        return Some(rec);
    }
    // A digest not of the expected form (never from a working host) tells nothing.
    let Some(digest) = Sha256::parse(&s.fs.services().sha256_hex(&data)) else {
        return Some(rec);
    };
    tally.hashed += 1;
    rec.shown = Shown::Content;
    rec.sha256 = Some(digest);
    Some(rec)
}
