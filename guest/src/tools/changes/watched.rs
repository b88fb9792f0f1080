//! `changes_since` where the host's watch says which directories changed: only those are
//! listed again, the rest of the snapshot is carried over.
//!
//! The session keeps its newest snapshot in memory ([`Live`]) with the directories its
//! walk visited ([`Tree`]), and the newest of one other chain of tokens ([`KEPT`]). A call
//! whose token names a kept snapshot asks the watch which directories a change touched
//! since the token's count (`host-fs.tree-changed-dirs`: an entry made, removed, renamed,
//! written or changed in its metadata stamps the directory holding it). A directory no
//! stamp touched lists as it did, with the same metadata for every entry, so its records
//! in the snapshot still hold. Each stamped directory the walk had visited is walked again,
//! one level deep, with the walk's own rules; its files are looked at and hashed as a scan
//! would ([`super::record::records`]). So is every directory holding a file with other
//! names, at every call (a write through another name is reported to that name's directory
//! only), and every one holding a file a scan would read again as racily clean (what a call
//! reads must not tell where hidden entries changed).
//!
//! A scan of the whole tree is made instead (the caller's) whenever the answer could
//! differ from one, that is when a directory walked again:
//! - now holds other subdirectories than the walk visited there (one made, removed, newly
//!   ignored or newly shown), since their subtrees were never walked;
//! - has other ignore rules or another scope than its memo recorded (its `.gitignore`
//!   changed: the subtrees below would be judged again), or was taken for a repository;
//! - cannot be read;
//!
//! and when the watch cannot say where every change landed, the token's snapshot is not
//! the one kept, the clock went back since it was taken, or the tree would now pass the
//! walk's entry limit.
//!
//! The new snapshot is the kept one with the records of the directories walked again put
//! in its place (in place when no path came or went), and is stored as a delta against
//! the whole snapshot the kept one's chain started from ([`super::delta`]): a call that
//! found a few changes writes a few records, not the tree.

use std::cmp::Ordering;
use std::sync::{Arc, Mutex};

use super::delta::{self, Chain};
use super::record::records;
use super::scan::{now_ns, racily_clean, shown, ScanStats, Seen};
use super::snapshot::{diff, Rec, Snapshot};
use super::store::{Store, Stored};
use super::tree::{DirInfo, Tree};
use crate::api::Change;
use crate::error::ToolResult;
use crate::rules::path::LogicalPath;
use crate::rules::walk::{walk_with, Flow, Skips, WalkOptions};
use crate::rules::walk_memo::{self, WalkMemo};
use crate::text::bytes;
use crate::tools::session::Session;

/// The snapshots a session keeps, the one used last at the end.
pub type Shared = Arc<Mutex<Vec<Live>>>;

/// How many snapshots a session keeps, those stored or answered from last: the newest of
/// two chains of tokens, as an agent's own calls and, in the MCP server's session, the
/// watch of its resource subscriptions make (each call of one chain would otherwise push
/// out the other's). A third chain pushes out the one used longest ago.
pub const KEPT: usize = 2;

/// A snapshot a session stored, as it stored it.
#[derive(Debug)]
pub struct Live {
    /// Its name in the store.
    pub name: String,
    /// What the token binds besides the tool, root and policy (the path and the walk's
    /// options), as JSON.
    pub scope: String,
    /// The walk's memo stored with it (its base's, for a delta).
    pub memo: Arc<Vec<u8>>,
    /// Its records (read once, not at every call).
    records: Records,
    /// What it differs by from the whole snapshot it is stored against.
    pub chain: Chain,
    /// The paths of its racily clean files (see [`racy`]).
    pub racy: Vec<Arc<str>>,
    /// The directories its walk visited.
    pub tree: Tree,
    /// Calls answered from the watch's stamps since the session kept the snapshot of a
    /// whole walk.
    #[cfg(test)]
    pub answered: u32,
}

impl Live {
    /// Whether its records are still the bytes read back (see [`Records`]).
    #[cfg(test)]
    pub fn read_back(&self) -> bool {
        matches!(self.records, Records::Stored(_))
    }
}

/// A kept snapshot's records: decoded, or the bytes they decode from. A snapshot read back
/// from the store and found to hold still is kept as it was read: a process that answers
/// one call (the CLI) never copies its records for a next call that does not come.
#[derive(Debug)]
enum Records {
    Decoded(Snapshot<Arc<str>>),
    Stored(Stored),
}

impl Records {
    /// The records, decoded on first need; `None` when the bytes do not read (they were
    /// checked against their name when read back: not expected).
    fn decoded(&mut self) -> Option<&mut Snapshot<Arc<str>>> {
        if let Records::Stored(st) = self {
            let decoded = owned(&st.snapshot().ok()?);
            *self = Records::Decoded(decoded);
        }
        match self {
            Records::Decoded(snap) => Some(snap),
            Records::Stored(_) => None,
        }
    }
}

/// A copy of `snap` whose paths the session can keep.
fn owned<P: AsRef<str>>(snap: &Snapshot<P>) -> Snapshot<Arc<str>> {
    Snapshot {
        taken: snap.taken,
        files: snap
            .files
            .iter()
            .map(|(p, r)| (Arc::from(p.as_ref()), *r))
            .collect(),
    }
}

/// What a call answered from the watch's stamps.
#[derive(Debug)]
pub struct Outcome {
    /// The name of the snapshot the new token names.
    pub to: String,
    /// Every change since the token, in path order.
    pub changes: Vec<Change>,
    /// Files read and hashed, and the bytes read.
    pub hashed: u32,
    pub bytes: u64,
}

/// A snapshot as the session keeps it: its name, records, memo and chain, and the name of
/// the kept snapshot it was taken against (which it takes the place of).
#[derive(Debug)]
pub struct Kept<'a, P> {
    pub name: &'a str,
    pub replaces: Option<&'a str>,
    pub snap: &'a Snapshot<P>,
    pub memo: Arc<Vec<u8>>,
    pub chain: Chain,
}

/// Keeps `k` as the session's newest snapshot (in place of the one it was taken against,
/// and of the oldest kept beyond [`KEPT`]), taken by a walk that visited `tree` (the
/// records are copied unless the session keeps that snapshot already).
pub fn keep<P: AsRef<str>>(s: &Session, k: Kept<'_, P>, scope: &str, tree: Tree) {
    let Ok(mut lives) = s.changes_live.lock() else {
        return;
    };
    let Some(tree) = renew(&mut lives, k.name, scope, tree) else {
        return;
    };
    let snap = owned(k.snap);
    let live = Live {
        name: k.name.to_string(),
        scope: scope.to_string(),
        memo: k.memo,
        racy: racy(&snap),
        records: Records::Decoded(snap),
        chain: k.chain,
        tree,
        #[cfg(test)]
        answered: 0,
    };
    place(&mut lives, live, k.replaces);
}

/// A snapshot read back from the store and found to hold still, to be kept as read (see
/// [`Records`]): its bytes, its racily clean files, its walk's memo and its chain.
#[derive(Debug)]
pub struct ReadBack {
    pub stored: Stored,
    pub racy: Vec<Arc<str>>,
    pub memo: Arc<Vec<u8>>,
    pub chain: Chain,
}

/// [`keep`] for a snapshot read back (which replaces none).
pub fn keep_read_back(s: &Session, r: ReadBack, scope: &str, tree: Tree) {
    let Ok(mut lives) = s.changes_live.lock() else {
        return;
    };
    let Some(tree) = renew(&mut lives, r.stored.name(), scope, tree) else {
        return;
    };
    let live = Live {
        name: r.stored.name().to_string(),
        scope: scope.to_string(),
        memo: r.memo,
        racy: r.racy,
        chain: r.chain,
        records: Records::Stored(r.stored),
        tree,
        #[cfg(test)]
        answered: 0,
    };
    place(&mut lives, live, None);
}

/// Makes the kept snapshot `name` of `scope` the newest, its walk's tree `tree`; gives
/// `tree` back when the session does not keep it.
fn renew(lives: &mut Vec<Live>, name: &str, scope: &str, tree: Tree) -> Option<Tree> {
    let Some(i) = lives
        .iter()
        .position(|l| l.name == name && l.scope == scope)
    else {
        return Some(tree);
    };
    let mut l = lives.remove(i);
    l.tree = tree;
    #[cfg(test)]
    {
        l.answered = 0;
    }
    lives.push(l);
    None
}

/// Adds `live` as the newest kept snapshot, in place of the one of its scope named
/// `replaces` and of the oldest beyond [`KEPT`].
fn place(lives: &mut Vec<Live>, live: Live, replaces: Option<&str>) {
    lives.retain(|l| Some(l.name.as_str()) != replaces || l.scope != live.scope);
    lives.push(live);
    if lives.len() > KEPT {
        lives.remove(0);
    }
}

/// The kept snapshot named `name`.
fn find<'a>(lives: &'a [Live], name: &str) -> Option<&'a Live> {
    lives.iter().find(|l| l.name == name)
}

/// Whether no file of the snapshot `name` is racily clean, when the session keeps it.
pub fn settled(s: &Session, name: &str) -> Option<bool> {
    let lives = s.changes_live.lock().ok()?;
    find(&lives, name).map(|l| l.racy.is_empty())
}

/// A copy of a snapshot the session keeps.
#[derive(Debug)]
pub struct Held {
    pub snap: Snapshot<Arc<str>>,
    pub memo: Arc<Vec<u8>>,
    pub chain: Chain,
}

/// The records, memo and chain of the snapshot `name` when the session keeps it (no read of
/// the store needed).
pub fn kept(s: &Session, name: &str) -> Option<Held> {
    let mut lives = s.changes_live.lock().ok()?;
    let l = lives.iter_mut().find(|l| l.name == name)?;
    Some(Held {
        snap: l.records.decoded()?.clone(),
        memo: l.memo.clone(),
        chain: l.chain.clone(),
    })
}

/// What changed below `start` (the directory `scope` binds) since the token naming the
/// snapshot `from`, taken at the watch's count `since`, answered by walking again only the
/// directories the watch stamped; `None` when a scan of the whole tree must answer instead
/// (see the module's comment).
///
/// # Errors
/// `IO_ERROR` when the new snapshot cannot be stored.
pub fn since(
    s: &Session,
    store: &Store<'_>,
    (from, since): (&str, u64),
    scope: &str,
    start: &LogicalPath,
    opts: &WalkOptions,
) -> ToolResult<Option<Outcome>> {
    let Ok(mut lives) = s.changes_live.lock() else {
        return Ok(None);
    };
    let Some(i) = lives
        .iter()
        .position(|l| l.name == from && l.scope == scope && !l.tree.fragile)
    else {
        return Ok(None);
    };
    let mut live = lives.remove(i);
    let out = walk_stamped(s, store, &mut live, (from, since), start, opts);
    // A snapshot that could not be stored leaves the session holding nothing of this
    // call: its copy is no longer the token's snapshot, and the next call reads that back
    // from the store.
    if out.is_ok() {
        lives.push(live);
    }
    out
}

/// [`since`] for the kept snapshot `live`, which it updates (and leaves in an unknown
/// state when it fails).
fn walk_stamped(
    s: &Session,
    store: &Store<'_>,
    live: &mut Live,
    (from, since): (&str, u64),
    start: &LogicalPath,
    opts: &WalkOptions,
) -> ToolResult<Option<Outcome>> {
    let Some(stamped) = s.fs.services().tree_changed_dirs(since, start) else {
        return Ok(None);
    };
    // A directory above the start holds ignore rules and build files that apply below it.
    let above = |d: &str| {
        d.len() < start.as_str().len()
            && LogicalPath::parse_dir(d).is_ok_and(|d| start.starts_with(&d))
    };
    if stamped.iter().any(|d| above(d)) {
        return Ok(None);
    }
    // Files hashed within the timestamp step of the snapshot ("racily clean"): a whole
    // scan reads them again whatever changed, and so does this call (what it reads must
    // not depend on what the stamps say of hidden entries).
    let taken = now_ns();
    let Some(old) = live.records.decoded() else {
        return Ok(None);
    };
    if taken < old.taken {
        // The clock went back: files the snapshot's time left behind may be racy again.
        return Ok(None);
    }
    let racy_dirs = live.racy.iter().map(|p| crate::rules::path::parent_of(p));
    // The stamped directories the walk visited (the others it never lists), those holding
    // a file with other names, and those holding a racily clean file, in order.
    let mut dirs: Vec<String> = stamped
        .into_iter()
        .filter(|d| live.tree.get(d).is_some())
        .chain(live.tree.linked().map(str::to_string))
        .chain(racy_dirs.map(str::to_string))
        .collect();
    dirs.sort_unstable();
    dirs.dedup();
    if dirs.is_empty() {
        #[cfg(test)]
        {
            live.answered += 1;
        }
        return Ok(Some(Outcome {
            to: from.to_string(),
            changes: Vec::new(),
            hashed: 0,
            bytes: 0,
        }));
    }
    let held = live.memo.clone();
    let memo = held.as_slice();
    let binding = walk_memo::binding(&s.policy, opts.include_hidden, opts.respect_ignore);
    // The memo's verdicts for the directories walked again (the others are read past).
    let wanted = |p: &[u8]| {
        dirs.binary_search_by(|d| bytes::cmp(d.as_bytes(), p))
            .is_ok()
    };
    let mut walk_memo = WalkMemo::new_for(&binding, Some(memo), wanted);
    let one_level = WalkOptions {
        max_depth: 1,
        ..opts.clone()
    };
    let mut seen: Vec<Seen> = Vec::new();
    let mut infos = Vec::with_capacity(dirs.len());
    let mut total = live.tree.total();
    for d in &dirs {
        let Ok(dir) = LogicalPath::parse_dir(d) else {
            return Ok(None);
        };
        let mut info = DirInfo::default();
        let walked = walk_with(
            &s.fs,
            &s.policy,
            &dir,
            &one_level,
            &mut Skips::default(),
            Some(&mut walk_memo),
            |e| {
                info.visited(e);
                seen.extend(shown(e));
                Flow::Continue
            },
        );
        let before = live.tree.get(d);
        match walked {
            Ok(false) if before.is_some_and(|b| b.subdirs == info.subdirs) => {}
            _ => return Ok(None),
        }
        total = (total + u64::from(info.entries))
            .saturating_sub(before.map_or(0, |b| u64::from(b.entries)));
        infos.push(info);
    }
    if walk_memo.fresh > 0 || total > s.policy.limits().max_walk_entries {
        return Ok(None);
    }
    // Ignore files with other names, in a directory walked again (listed again at every
    // call from now on), or above the start (no call may carry records over then).
    for d in &walk_memo.linked_rules {
        match dirs.binary_search(d) {
            Ok(i) => infos[i].linked = true,
            Err(_) if live.tree.get(d).is_some() => live.tree.linked_rules(std::slice::from_ref(d)),
            Err(_) => return Ok(None),
        }
    }
    // The earlier records of the files directly in those directories, by index.
    let mut gone: Vec<usize> = dirs.iter().flat_map(|d| direct(&old.files, d)).collect();
    gone.sort_unstable();
    gone.dedup();
    let before = Snapshot {
        taken: old.taken,
        files: gone
            .iter()
            .map(|&i| (old.files[i].0.as_ref(), old.files[i].1))
            .collect::<Vec<(&str, Rec)>>(),
    };
    let mut stats = ScanStats::default();
    let now = Snapshot {
        taken,
        files: records(s, seen, Some(&before), &mut stats),
    };
    let changes = diff(&before, &now);
    let same = stats.same_as_old && stats.hashed == 0 && before.files.len() == now.files.len();
    let to = if same {
        // Nothing visible moved: the token's snapshot still holds.
        from.to_string()
    } else {
        let moved: Vec<(Arc<str>, Option<Rec>)> = delta::between(&before.files, &now.files)
            .into_iter()
            .map(|(p, r)| (Arc::from(p), r))
            .collect();
        let files = std::mem::take(&mut old.files);
        let snap = Snapshot {
            taken,
            files: update(files, &moved),
        };
        let mut chain = std::mem::take(&mut live.chain);
        chain.add(moved);
        let to = chain.store(store, &snap, memo)?;
        live.name = to.clone();
        *old = snap;
        live.chain = chain;
        // Every racily clean file was in a directory walked again: those of the new
        // snapshot are among the records just taken.
        live.racy = racy(&now);
        to
    };
    for (d, info) in dirs.iter().zip(infos) {
        live.tree.replace(d, info);
    }
    #[cfg(test)]
    {
        live.answered += 1;
    }
    Ok(Some(Outcome {
        to,
        changes,
        hashed: stats.hashed,
        bytes: stats.bytes,
    }))
}

/// The paths of the files of `snap` a scan would read again as racily clean (see
/// [`racily_clean`]).
pub fn racy<P: AsRef<str>>(snap: &Snapshot<P>) -> Vec<Arc<str>> {
    snap.files
        .iter()
        .filter(|(_, r)| racily_clean(r, snap.taken))
        .map(|(p, _)| Arc::from(p.as_ref()))
        .collect()
}

/// The indices of the records of `files` (in path order) directly in the directory `dir`.
fn direct(files: &[(Arc<str>, Rec)], dir: &str) -> Vec<usize> {
    fn below<'a>(p: &'a str, dir: &str) -> Option<&'a str> {
        if dir.is_empty() {
            Some(p)
        } else {
            p.strip_prefix(dir).and_then(|r| r.strip_prefix('/'))
        }
    }
    // The paths below `dir` are those from `dir/` up to `dir0` ('0' follows '/').
    let start = if dir.is_empty() {
        0
    } else {
        let key = format!("{dir}/");
        files.partition_point(|(p, _)| bytes::cmp(p.as_bytes(), key.as_bytes()) == Ordering::Less)
    };
    (start..files.len())
        .map_while(|i| below(&files[i].0, dir).map(|rest| (i, rest)))
        .filter(|(_, rest)| !rest.contains('/'))
        .map(|(i, _)| i)
        .collect()
}

/// The records of `files` (in path order) with `moved` put in (see [`delta::apply`]); in
/// place when every entry replaces a record at a path `files` holds (no copy of the rest).
fn update(
    mut files: Vec<(Arc<str>, Rec)>,
    moved: &[(Arc<str>, Option<Rec>)],
) -> Vec<(Arc<str>, Rec)> {
    let at = |p: &str, files: &[(Arc<str>, Rec)]| {
        files
            .binary_search_by(|(q, _)| bytes::cmp(q.as_bytes(), p.as_bytes()))
            .ok()
    };
    let places: Option<Vec<(usize, Rec)>> = moved
        .iter()
        .map(|(p, r)| Some((at(p, &files)?, (*r)?)))
        .collect();
    match places {
        Some(places) => {
            for (i, r) in places {
                files[i].1 = r;
            }
            files
        }
        None => delta::apply(files, moved.iter().cloned()),
    }
}
