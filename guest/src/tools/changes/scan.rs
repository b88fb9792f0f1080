//! Takes a snapshot of the visible tree, reusing what an earlier snapshot knew.
//!
//! The walk is `find_files`'s (same ignore rules, hidden-file choice, classification and
//! read policy): what it never shows is never looked at. For every file it shows, one
//! `stat` without following links; the content is read and hashed only when the file is
//! new, when its size, modification time, status change time or inode moved, or when it
//! is "racily clean": its modification time lies within [`RACY_NS`] of the earlier
//! snapshot's time, so a write in the same timestamp tick as that snapshot could hide
//! behind equal metadata (git's rule). Everything else is trusted to be unchanged.
//!
//! The walk keeps a memo of what it decided for each entry (hidden, ignored, its
//! classification) and reuses the earlier scan's where a directory's scope and ignore
//! rules are unchanged ([`crate::rules::walk_memo`]): an entry's name is compared, not
//! judged again.

use std::sync::Arc;

use super::record::Recorder;
use super::snapshot::{Rec, Shown, Snapshot};
pub use super::tree::Tree;
use crate::error::{ToolError, ToolResult};
use crate::fs::port::{Dir, Stat};
use crate::rules::classify::Kind;
use crate::rules::fsx::EntryType;
use crate::rules::path::LogicalPath;
use crate::rules::walk::{
    prelist, walk_budget, walk_listed, Flow, Prelisted, Skips, WalkEntry, WalkOptions,
};
use crate::rules::walk_memo::{self, WalkMemo};
use crate::tools::session::Session;

/// The timestamp granularity assumed of the file system: 2 s, the coarsest in common use
/// (FAT); finer file systems only make a few more files count as racily clean.
pub const RACY_NS: u64 = 2_000_000_000;

/// Whether a scan against a snapshot taken at `taken` reads the file of record `r` again
/// though its metadata did not move: it was hashed, and its modification time is unknown
/// or within [`RACY_NS`] of `taken` (a write in the same timestamp tick could hide
/// behind equal metadata).
pub fn racily_clean(r: &Rec, taken: u64) -> bool {
    r.shown == Shown::Content && r.mtime.is_none_or(|m| m.saturating_add(RACY_NS) >= taken)
}

/// What a scan did besides the snapshot.
#[derive(Debug, Default)]
pub struct ScanStats {
    /// Files whose content was read and hashed.
    pub hashed: u32,
    /// Bytes read to hash them.
    pub bytes: u64,
    pub skips: Skips,
    /// The walk's memo, to keep with the snapshot for the next scan.
    pub memo: Vec<u8>,
    /// Entries whose verdict came from the earlier scan's memo.
    pub reused: u64,
    /// The earlier scan's memo was refused whole (see [`WalkMemo::refused`]): this scan's
    /// is to be kept in its place even where the snapshot is the same.
    pub memo_refused: bool,
    /// The snapshot tells what the earlier one did (see [`Snapshot::same_visible`]):
    /// the same files, equal records but for name-only ones' metadata.
    pub same_as_old: bool,
    /// The directories the walk visited (see [`Tree`]).
    pub tree: Tree,
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

/// The start of a scan, listed before the scan ([`ahead`]).
pub struct Ahead {
    /// The snapshot's time: no metadata the snapshot records is older.
    taken: u64,
    first: Prelisted,
}

/// Lists `start` for a scan with `opts` to come, whose snapshot's time is `taken` (read
/// before anything of the tree was listed in the call: a host may answer the scan's walk
/// with listings read ahead for an earlier walk of the same call). With `early`, for a
/// caller with other work first (reading the earlier snapshot back from the store): a
/// host that reads listings ahead reads the tree below meanwhile (see [`prelist`]).
pub fn ahead(
    s: &Session,
    start: &LogicalPath,
    opts: &WalkOptions,
    early: bool,
    taken: u64,
) -> Ahead {
    Ahead {
        taken,
        first: prelist(&s.fs, start, opts, early),
    }
}

/// Takes a snapshot of the files below `start` that a walk with `opts` shows, reusing the
/// hashes of `old` for files whose metadata did not move and the verdicts of the walk's
/// `memo` kept with it.
///
/// # Errors
/// `IO_ERROR` when `start` cannot be read; `LIMIT_EXCEEDED` when the tree has more entries
/// than the policy's `max_walk_entries` (a partial snapshot would report the rest deleted).
#[cfg(test)]
pub fn scan<P: AsRef<str>>(
    s: &Session,
    start: &LogicalPath,
    opts: &WalkOptions,
    old: Option<&Snapshot<P>>,
    memo: Option<&[u8]>,
) -> ToolResult<(Snapshot, ScanStats)> {
    scan_from(s, ahead(s, start, opts, false, now_ns()), opts, old, memo)
}

/// [`scan`] from the start listed by [`ahead`].
///
/// # Errors
/// As [`scan`].
pub fn scan_from<P: AsRef<str>>(
    s: &Session,
    Ahead { taken, first }: Ahead,
    opts: &WalkOptions,
    old: Option<&Snapshot<P>>,
    memo: Option<&[u8]>,
) -> ToolResult<(Snapshot, ScanStats)> {
    let start = first.start().clone();
    let mut stats = ScanStats::default();
    // Each file is looked at as the walk shows it (mostly a comparison of metadata with
    // the earlier record), beside the host's listings; contents are read once the walk is
    // known to fit the policy's bound.
    let mut recorder = Recorder::new(old);
    let mut tree = Tree::new(start.as_str());
    let binding = walk_memo::binding(&s.policy, opts.include_hidden, opts.respect_ignore);
    let mut walk_memo = WalkMemo::new(&binding, memo);
    let stopped = walk_listed(
        &s.fs,
        &s.policy,
        first,
        opts,
        &mut stats.skips,
        Some(&mut walk_memo),
        |e| {
            tree.visited(e);
            if let Some(file) = shown(e) {
                recorder.take(s, file);
            }
            Flow::Continue
        },
    )?;
    stats.reused = walk_memo.reused;
    stats.memo_refused = walk_memo.refused;
    tree.linked_rules(&walk_memo.linked_rules);
    stats.memo = walk_memo.into_bytes();
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
    stats.tree = tree;
    let files = recorder.finish(s, &mut stats);
    // Every file met an equal earlier record, and as many as there were: the same files.
    stats.same_as_old &= old.is_some_and(|o| o.files.len() == files.len());
    Ok((Snapshot { taken, files }, stats))
}

/// A file a walk showed: its path, classification, the held directory holding it (walks
/// through the port only) and its metadata from the listing (where the host lists with
/// metadata).
pub type Seen = (LogicalPath, Kind, Option<Arc<Dir>>, Option<Stat>);

/// `e` as a snapshot takes it, when it is a file or a link (a snapshot holds no directory
/// or special file).
pub fn shown(e: &WalkEntry) -> Option<Seen> {
    matches!(e.ty, EntryType::File | EntryType::Symlink)
        .then(|| (e.path.clone(), e.kind, e.dir.clone(), e.stat))
}
