//! The search index: for each file a search has read, what it was (size, times, inode)
//! and what a search needs to know of it without reading it again — the trigrams its
//! text may hold ([`crate::text::trigram::Filter`]), or that it was binary, too large, or
//! held a secret.
//!
//! The index only ever spares a read. A file is passed over on its word only when the
//! file's metadata, looked at during the very call, is what the record was made from,
//! and that metadata is older than the record by more than the coarsest timestamp step
//! ([`RACY_NS`], git's "racily clean" rule); anything else is read as a scan reads it, and
//! recorded again. So a search answers exactly what a scan answers: the walk, the policy,
//! the classification by name and every count are the scan's own.
//!
//! What goes in is only what a search read under the policy in force: never a file the
//! read policy hides, a secret by name, git internals, or a file the ignore rules leave
//! out; a file whose content holds a secret is recorded as [`What::Secret`], without its
//! trigrams. The index is bound to the repository (its root's identity), the policy and
//! the format ([`Index::binding`]); it lives in the instance's memory and, when the host
//! mounts a state directory, in `index/` there ([`file`]), where a damaged, foreign or
//! outdated file is refused and replaced.

pub mod file;
pub mod records;
#[cfg(test)]
mod tests;
pub mod tree;

use std::sync::{Arc, Mutex};

pub use records::Ticket;

use crate::fs::port::Stat;
use crate::text::trigram::Filter;

use crate::tools::changes::scan::nanos;
/// The timestamp step assumed of the file system: the same as `changes_since` assumes.
pub use crate::tools::changes::scan::RACY_NS;

/// The index of one instance, shared by its calls; `None` until the first search.
pub type Shared = Arc<Mutex<Option<Index>>>;

/// Runs `f` over [`Index::quiet_tree`] of the session's index in memory, when the policy
/// turns the index on, the host runs a watch, and the index is bound to the root whose
/// identity is `root` and to the session's policy.
pub fn with_quiet_tree<R>(
    s: &crate::tools::session::Session,
    root: crate::fs::port::FileId,
    include_hidden: bool,
    f: impl FnOnce(&tree::Tree) -> R,
) -> Option<R> {
    if s.policy.limits().max_index_bytes == 0 {
        return None;
    }
    let changes = s.fs.services().tree_changes()?;
    let slot = s.index.lock().ok()?;
    let ix = slot
        .as_ref()
        .filter(|ix| ix.bound_to() == Index::binding(root, &s.policy.search_fingerprint()))?;
    ix.quiet_tree(include_hidden, changes).map(f)
}

/// What identifies one state of a file: any write moves its size or its times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    pub size: u64,
    /// Modification time, nanoseconds since the Unix epoch.
    pub mtime: Option<u64>,
    /// Status change time (moves with every write, and cannot be set back by a user).
    pub ctime: Option<u64>,
    pub inode: Option<u64>,
}

impl Identity {
    /// The identity a look at a file tells.
    pub fn of(st: &Stat) -> Self {
        Identity {
            size: st.size,
            mtime: nanos(st.modified),
            ctime: nanos(st.changed),
            inode: st.inode,
        }
    }

    /// Whether a write could have left these times unchanged after `taken`: a time
    /// missing, or within [`RACY_NS`] of it.
    pub fn racy(&self, taken: u64) -> bool {
        let newest = match (self.mtime, self.ctime) {
            (Some(m), Some(c)) => m.max(c),
            (Some(m), None) => m,
            _ => return true,
        };
        newest.saturating_add(RACY_NS) >= taken
    }
}

/// What a search needs to know of a file's content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum What {
    /// Text searched as its bytes: the trigrams it may hold.
    Text(Filter),
    /// Passed over as binary.
    Binary,
    /// Over the policy's size for searches.
    TooLarge,
    /// Holds what looks like a secret: searched, never answered from.
    Secret,
}

/// One file's record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rec {
    pub id: Identity,
    /// When the metadata was looked at, before the content was read (ns since the epoch).
    pub taken: u64,
    pub what: What,
    /// The walk that last confirmed the record ([`tree::Tree::generation`]); 0 when none
    /// did in this instance. Not stored on disk.
    pub generation: u64,
}

impl Rec {
    /// Whether the record tells what a file that now looks like `id` holds.
    pub fn answers_for(&self, id: &Identity) -> bool {
        self.id == *id && !id.racy(self.taken)
    }

    /// Bytes the record takes in memory and on disk, roughly.
    fn weight(&self, path: &str) -> u64 {
        let filter = match &self.what {
            What::Text(f) => f.words().len() * 8,
            _ => 0,
        };
        (path.len() + filter + 64) as u64
    }
}

/// The records of one repository under one policy.
#[derive(Debug)]
pub struct Index {
    binding: String,
    files: records::Records,
    /// Sum of the records' weights.
    weight: u64,
    /// Records added, replaced or removed since the index was loaded or saved.
    dirty: usize,
    /// The last whole walks (one per choice of hidden entries), in memory only.
    trees: Vec<tree::Tree>,
    /// The newest walk generation handed out.
    generation: u64,
    /// While a walk of the whole tree marks the records of the files it shows
    /// ([`Index::start_marking`]): its mark. 0 otherwise.
    marking: u64,
}

impl Index {
    /// The binding of an index to a repository root's identity and a policy (its
    /// [`crate::rules::policy::Policy::search_fingerprint`]): an index made for anything
    /// else is not used.
    pub fn binding(root: crate::fs::port::FileId, policy_fingerprint: &str) -> String {
        let text = format!(
            "file-tools index {}\n{} {}\n{policy_fingerprint}",
            file::FORMAT,
            root.0,
            root.1
        );
        crate::fs::hash::sha256_hex(text.as_bytes())
    }

    /// An empty index bound as [`Index::binding`] says.
    pub fn new(binding: String) -> Self {
        Index {
            binding,
            files: records::Records::default(),
            weight: 0,
            dirty: 0,
            trees: Vec::new(),
            generation: 0,
            marking: 0,
        }
    }

    pub fn bound_to(&self) -> &str {
        &self.binding
    }

    /// The record of `path`, if it answers for a file that now looks like `id` (the tests'
    /// reference for [`Index::lookup_confirm`]).
    #[cfg(test)]
    pub fn lookup(&self, path: &str, id: &Identity) -> Option<&What> {
        self.files
            .get(path)
            .filter(|r| r.answers_for(id))
            .map(|r| &r.what)
    }

    /// [`Index::lookup`], and when `generation` is given, [`Index::confirm`] of the record
    /// found, with one look-up of the path: what the record tells, and its ticket.
    pub fn lookup_confirm(
        &mut self,
        path: &str,
        id: &Identity,
        generation: Option<u64>,
    ) -> Option<(&What, Ticket)> {
        let (r, ticket) = self.files.get_mut(path)?;
        if !r.answers_for(id) {
            return None;
        }
        if let Some(g) = generation {
            r.generation = g;
        }
        Some((&r.what, ticket))
    }

    /// Records `path`, unless that would take the index over `max_weight` bytes; the
    /// record's ticket.
    pub fn record(&mut self, path: &str, rec: Rec, max_weight: u64) -> Option<Ticket> {
        let add = rec.weight(path);
        let old = self.files.get(path).map_or(0, |r| r.weight(path));
        if self.weight - old + add > max_weight {
            self.remove(path);
            return None;
        }
        self.dirty += 1;
        Some(self.put(path, rec))
    }

    /// Puts `rec` as the record of `path` (replacing any) and keeps the weight true; no
    /// bound (an index file's records are bounded by the file's size) and no count of the
    /// change. The record's ticket.
    fn put(&mut self, path: &str, rec: Rec) -> Ticket {
        let add = rec.weight(path);
        let (ticket, old) = self.files.insert(path, rec);
        self.weight = self.weight + add - old.map_or(0, |o| o.weight(path));
        if self.marking != 0 {
            self.files.mark_by_ticket(ticket, self.marking);
        }
        ticket
    }

    /// A new walk generation.
    pub fn next_generation(&mut self) -> u64 {
        self.generation += 1;
        self.generation
    }

    /// Marks the record of `path` as confirmed by walk `generation`; its ticket (the
    /// tests' reference for [`Index::lookup_confirm`]).
    #[cfg(test)]
    pub fn confirm(&mut self, path: &str, generation: u64) -> Option<Ticket> {
        let (r, ticket) = self.files.get_mut(path)?;
        r.generation = generation;
        Some(ticket)
    }

    /// The record of `path` when walk `generation` confirmed it.
    pub fn confirmed(&self, path: &str, generation: u64) -> Option<&What> {
        self.files
            .get(path)
            .filter(|r| r.generation == generation)
            .map(|r| &r.what)
    }

    /// The record `ticket` holds when walk `generation` confirmed it: what
    /// [`Index::confirmed`] answers for the ticket's path, without a look-up by path.
    pub fn confirmed_by(&self, ticket: Ticket, generation: u64) -> Option<&What> {
        self.files
            .by_ticket(ticket)
            .filter(|r| r.generation == generation)
            .map(|r| &r.what)
    }

    /// Forgets `path`.
    pub fn remove(&mut self, path: &str) {
        if let Some(r) = self.files.remove(path) {
            self.weight -= r.weight(path);
            self.dirty += 1;
        }
    }

    /// Begins marking the records of the files a walk of the whole tree shows
    /// ([`Index::mark_seen`]; a record put meanwhile is marked too), so that
    /// [`Index::forget_unmarked`] can forget the files it did not show.
    pub fn start_marking(&mut self) {
        self.marking = self.next_generation();
    }

    /// Ends marking without forgetting anything (the walk did not see the whole tree).
    pub fn stop_marking(&mut self) {
        self.marking = 0;
    }

    /// Notes that the walk being marked showed `path`.
    pub fn mark_seen(&mut self, path: &str) {
        if self.marking != 0 {
            self.files.mark(path, self.marking);
        }
    }

    /// Forgets every file the walk being marked did not show (gone from the tree), and
    /// ends the marking.
    pub fn forget_unmarked(&mut self) {
        if self.marking == 0 {
            return;
        }
        let (mut weight, mut dirty) = (0, 0);
        self.files.retain_marked(self.marking, |path, rec| {
            weight += rec.weight(path);
            dirty += 1;
        });
        self.weight -= weight;
        self.dirty += dirty;
        self.marking = 0;
    }

    /// Takes out the last whole walk with this choice of hidden entries.
    pub fn take_tree(&mut self, include_hidden: bool) -> Option<tree::Tree> {
        let i = self
            .trees
            .iter()
            .position(|t| t.include_hidden == include_hidden)?;
        Some(self.trees.swap_remove(i))
    }

    /// The last whole walk with this choice of hidden entries, when the host's watch has
    /// counted no change below the repository since before it began (`changes`, the count
    /// read now): what a walk would show now, without a look at anything.
    pub fn quiet_tree(&self, include_hidden: bool, changes: u64) -> Option<&tree::Tree> {
        self.trees
            .iter()
            .find(|t| t.include_hidden == include_hidden && t.changes == Some(changes))
    }

    /// Keeps `tree` as the last whole walk with its choice of hidden entries.
    pub fn put_tree(&mut self, tree: tree::Tree) {
        self.trees
            .retain(|t| t.include_hidden != tree.include_hidden);
        self.trees.push(tree);
    }

    /// Every path with its record, in no particular order.
    pub fn records(&self) -> impl Iterator<Item = (&str, &Rec)> {
        self.files.iter()
    }

    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.len() == 0
    }

    /// Bytes the index takes, roughly (what the policy's `max_index_bytes` bounds).
    pub fn weight(&self) -> u64 {
        self.weight
    }

    /// Whether enough changed since the last save for a save to be worth its cost: a
    /// sixteenth of the records and at least 32, or anything when the index is under
    /// 1 MiB (cheap to write), or anything at all for a `builder` (an index build keeps
    /// every record it made: what it leaves unsaved, every later session reads again).
    pub fn worth_saving(&self, builder: bool) -> bool {
        self.dirty > 0
            && (builder || self.dirty >= 32.max(self.files.len() / 16) || self.weight < 1 << 20)
    }
}
