//! Takes a snapshot of the visible tree, reusing what an earlier snapshot knew.
//!
//! The walk is `find_files`'s (same ignore rules, hidden-file choice, classification and
//! read policy): what it never shows is never looked at. For every file it shows, one
//! `stat` without following links; the content is read and hashed only when the file is
//! new, when its size, modification time, status change time or inode moved, or when it
//! is "racily clean": its modification time lies within [`RACY_NS`] of the earlier
//! snapshot's time, so a write in the same timestamp tick as that snapshot could hide
//! behind equal metadata (git's rule). Everything else is trusted to be unchanged.

use std::sync::Arc;

use super::snapshot::{Rec, Shown, Snapshot};
use crate::error::{ToolError, ToolResult};
use crate::fs::port::{Dir, Stat};
use crate::rules::classify::Kind;
use crate::rules::fsx::EntryType;
use crate::rules::path::LogicalPath;
use crate::rules::walk::{walk, walk_budget, Flow, Skips, WalkOptions};
use crate::tools::session::Session;

/// The timestamp granularity assumed of the file system: 2 s, the coarsest in common use
/// (FAT); finer file systems only make a few more files count as racily clean.
pub const RACY_NS: u64 = 2_000_000_000;

/// What a scan did besides the snapshot.
#[derive(Debug, Default)]
pub struct ScanStats {
    /// Files whose content was read and hashed.
    pub hashed: u32,
    /// Bytes read to hash them.
    pub bytes: u64,
    pub skips: Skips,
}

/// A time as nanoseconds since the Unix epoch (`None` before it, or unknown).
pub fn nanos(t: Option<std::time::SystemTime>) -> Option<u64> {
    let d = t?.duration_since(std::time::UNIX_EPOCH).ok()?;
    u64::try_from(d.as_nanos()).ok()
}

/// Now, in nanoseconds since the Unix epoch (0 when the clock is before it).
pub fn now_ns() -> u64 {
    nanos(Some(std::time::SystemTime::now())).unwrap_or(0)
}

/// The directory of a group of files: the walk's held handle, or opened on first need.
struct Parent<'a> {
    path: LogicalPath,
    held: Option<Arc<Dir>>,
    opened: Option<Option<Arc<Dir>>>,
    s: &'a Session,
}

impl Parent<'_> {
    fn dir(&mut self) -> Option<Arc<Dir>> {
        if let Some(d) = &self.held {
            return Some(d.clone());
        }
        let (s, path) = (self.s, &self.path);
        self.opened
            .get_or_insert_with(|| s.fs.open_dir(path).ok())
            .clone()
    }
}

/// Takes a snapshot of the files below `start` that a walk with `opts` shows, reusing the
/// hashes of `old` for files whose metadata did not move.
///
/// # Errors
/// `IO_ERROR` when `start` cannot be read; `LIMIT_EXCEEDED` when the tree has more entries
/// than the policy's `max_walk_entries` (a partial snapshot would report the rest deleted).
pub fn scan(
    s: &Session,
    start: &LogicalPath,
    opts: &WalkOptions,
    old: Option<&Snapshot>,
) -> ToolResult<(Snapshot, ScanStats)> {
    let taken = now_ns();
    let mut stats = ScanStats::default();
    let mut seen = Vec::new();
    let stopped = walk(&s.fs, &s.policy, start, opts, &mut stats.skips, |e| {
        if matches!(e.ty, EntryType::File | EntryType::Symlink) {
            seen.push((e.path.clone(), e.kind, e.dir.clone(), e.stat));
        }
        Flow::Continue
    })?;
    if stopped {
        let stop = walk_budget(&s.policy);
        return Err(ToolError::new(
            crate::error::ErrorCode::LimitExceeded,
            format!(
                "the tree below '{start}' has more than {} entries (the policy's {}); give a smaller path",
                stop.limit, stop.cap
            ),
        ));
    }
    let mut snap = Snapshot {
        taken,
        ..Default::default()
    };
    // Grouped by directory, so that each is looked at once (a walk comes back to a
    // directory after each of its subdirectories); the sort is stable, and compares the
    // parents' text in place (making each parent a path of its own cost a quarter of the
    // whole scan on the Linux tree).
    seen.sort_by(|a, b| parent_of(&a.0).cmp(parent_of(&b.0)));
    let mut rest = seen.as_slice();
    while let Some(first) = rest.first() {
        let parent_text = parent_of(&first.0);
        let n = rest
            .iter()
            .position(|e| parent_of(&e.0) != parent_text)
            .unwrap_or(rest.len());
        let parent_path = first.0.parent();
        let (group, tail) = rest.split_at(n);
        rest = tail;
        let mut parent = Parent {
            path: parent_path,
            held: first.2.clone(),
            opened: None,
            s,
        };
        for (path, kind, _, listed_stat) in group {
            // The walk's own listing with metadata (`with_stat`, where the host lists with
            // metadata), else one look through the held directory.
            let st = match listed_stat {
                Some(st) => Some(*st),
                None => parent
                    .dir()
                    .and_then(|d| d.stat_at(path.name()).ok().flatten()),
            };
            // Gone, or unreadable, since the walk listed it: not part of this snapshot.
            let Some(st) = st else {
                continue;
            };
            let prev = old.and_then(|o| o.files.get(path.as_str()).map(|r| (o.taken, r)));
            if let Some(rec) = look(s, &mut parent, path, *kind, &st, prev, &mut stats) {
                snap.files.insert(path.to_string(), rec);
            }
        }
    }
    Ok((snap, stats))
}

/// The text of `path`'s parent directory (empty at the root).
fn parent_of(path: &LogicalPath) -> &str {
    let text = path.as_str();
    text.rfind('/').map_or("", |i| &text[..i])
}

/// The record of one file; `None` for what is to be left out (a directory or special
/// file swapped in since the walk).
fn look(
    s: &Session,
    parent: &mut Parent,
    path: &LogicalPath,
    kind: Kind,
    st: &Stat,
    prev: Option<(u64, &Rec)>,
    stats: &mut ScanStats,
) -> Option<Rec> {
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
            return Some(rec);
        }
        EntryType::File => {}
        EntryType::Dir | EntryType::Other => return None,
    }
    // A secret by name, or a file another name of which may lie outside: name only.
    if kind == Kind::Secret || !s.policy.links_allowed(st.nlink) {
        return Some(rec);
    }
    // Blocked and not-allowed paths never reach here: the walk leaves them out.
    if let Some((taken, p)) = prev {
        let racy = rec.mtime.is_none_or(|m| m.saturating_add(RACY_NS) >= taken);
        if p.same_metadata(&rec) && !(racy && p.shown == Shown::Content) {
            rec.shown = p.shown;
            rec.sha256 = p.sha256.clone();
            return Some(rec);
        }
    }
    let max = s.policy.limits().max_hash_bytes;
    if st.size > max {
        rec.shown = Shown::Size;
        return Some(rec);
    }
    let data = match s.fs.services().read_file(path, max.saturating_add(1)) {
        Some(r) => r.ok()?,
        None => {
            parent
                .dir()?
                .read_file(path.name(), max.saturating_add(1))
                .ok()?
                .0
        }
    };
    stats.bytes += data.len() as u64;
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
    stats.hashed += 1;
    rec.shown = Shown::Content;
    rec.sha256 = Some(s.fs.services().sha256_hex(&data));
    Some(rec)
}
