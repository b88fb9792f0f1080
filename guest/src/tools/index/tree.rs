//! The tree as the last whole walk from the root showed it, and the metadata that proves
//! it unchanged, so that a search can replay the walk instead of listing and classifying
//! every entry again.
//!
//! What a walk shows depends on the names in the directories it enters (each entry is
//! classified by its path and type), on the ignore files in them, and on the policy (bound
//! into the index). A directory's names change only with its modification and status
//! change times, so the replay is used only when every directory the walk entered still
//! has the identity its parent listed (the root: its own), every `.gitignore` and
//! `.ignore` in them is the file it was (or still absent), and all of that metadata was
//! older than the walk by more than [`super::RACY_NS`]. Anything else walks again. The
//! metadata of each directory was looked at before the walk listed it, so a change made
//! while the walk ran shows as a change next time.
//!
//! Where the host runs a watch (`host-fs.tree-changes`), a replay while its count has not
//! moved since the walk looks at nothing at all: no directory, no file's metadata; files
//! whose records the walk confirmed are answered from them.
//!
//! Kept in the instance's memory only: a new process walks once, then replays.

use super::{Identity, Ticket};
use crate::fs::port::EntryType;
use crate::rules::classify::Kind;
use crate::rules::path::LogicalPath;
use crate::rules::walk::{Flow, Skips};

/// One entry the walk showed.
#[derive(Debug, Clone)]
pub struct Shown {
    pub path: LogicalPath,
    pub ty: EntryType,
    pub kind: Kind,
}

/// A directory the walk entered, as it was.
#[derive(Debug, Clone)]
pub struct DirCheck {
    pub path: LogicalPath,
    /// Its identity: as its parent listed it (the root: its own metadata).
    pub id: Identity,
    /// Its `.gitignore` and `.ignore`, when present.
    pub ignores: [Option<Identity>; 2],
}

/// The ignore files the walk reads in each directory, in [`DirCheck::ignores`] order.
pub const IGNORE_FILES: [&str; 2] = [".gitignore", ".ignore"];

/// A whole walk from the root, replayable.
#[derive(Debug, Clone)]
pub struct Tree {
    /// The walk's choice of hidden entries (the other options are fixed for the index:
    /// the whole tree, ignore rules honoured, no shard).
    pub include_hidden: bool,
    /// When the walk began (ns since the epoch): every identity above was looked at after.
    pub taken: u64,
    /// The root first, then every directory the walk entered, in walk order.
    pub dirs: Vec<DirCheck>,
    /// What the walk showed, in order.
    pub entries: Vec<Shown>,
    /// For each entry, how many skips the walk had counted before showing it.
    pub marks: Vec<u32>,
    /// For each entry, the ticket of the file's record that this walk (or the last replay
    /// that looked at every directory) confirmed ([`Ticket::NONE`] when none; may be
    /// shorter than `entries`).
    pub tickets: Vec<Ticket>,
    /// Every skip the walk counted, in order.
    pub tape: Vec<&'static str>,
    /// The walk stopped at the policy's `max_walk_entries`.
    pub budget_stopped: bool,
    /// The host watch's count of changes, read before the walk began (`None` without a
    /// watch): while it stays the same, the walk and every record it confirmed hold.
    pub changes: Option<u64>,
    /// The mark of the records this walk (or the last replay that looked at every
    /// directory) confirmed: only those are trusted without a look.
    pub generation: u64,
}

impl Tree {
    /// The ticket of entry `i`'s record.
    pub fn ticket(&self, i: usize) -> Ticket {
        self.tickets.get(i).copied().unwrap_or(Ticket::NONE)
    }

    /// Whether an identity looked at now shows the directory or ignore file unchanged
    /// since the walk, with no write hidden in the same timestamp step.
    pub fn unchanged(&self, then: &Option<Identity>, now: &Option<Identity>) -> bool {
        match (then, now) {
            (None, None) => true,
            (Some(a), Some(b)) => a == b && !a.racy(self.taken),
            _ => false,
        }
    }

    /// Shows `visit` the walk's entries again, in its order, each skip the walk counted
    /// added to `skips` where the walk counted it, with its place in [`Tree::entries`].
    /// True when it stopped early, as [`crate::rules::walk::walk`] answers: `visit` said
    /// stop, or the walk ran out of its budget.
    pub fn replay(&self, skips: &mut Skips, mut visit: impl FnMut(usize, &Shown) -> Flow) -> bool {
        let mut counted = 0usize;
        for (i, (shown, &mark)) in self.entries.iter().zip(&self.marks).enumerate() {
            let mark = mark as usize;
            for r in self.tape.get(counted..mark).unwrap_or(&[]) {
                skips.add(r);
            }
            counted = counted.max(mark);
            if visit(i, shown) == Flow::Stop {
                return true;
            }
        }
        for r in self.tape.get(counted..).unwrap_or(&[]) {
            skips.add(r);
        }
        self.budget_stopped
    }
}
