//! How a search uses the index ([`crate::tools::index`]): for each file the walk shows,
//! a look at its metadata (one host call per directory where the host lists with
//! metadata); when the index's record answers for exactly that metadata, the file is
//! passed over as a scan would have ended with it — binary, too large, or searched
//! without a match because it lacks a trigram every match needs, or holds a secret —
//! and otherwise read as a scan reads it and recorded again.
//!
//! A search of the whole tree also replays the last whole walk when its directories are
//! unchanged ([`crate::tools::index::tree`]), and records the walk when it walks.

use std::sync::Arc;

use crate::fs::port::{Dir, Stat};
use crate::rules::path::LogicalPath;
use crate::rules::walk::{Tape, WalkEntry};
use crate::text::keyhash::KeyMap;
use crate::text::trigram::{Filter, Scratch, Trigram};
use crate::tools::changes::scan::now_ns;
use crate::tools::index::tree::{DirCheck, Shown, Tree, IGNORE_FILES};
use crate::tools::index::{file, Identity, Index, Rec, Ticket, What};
use crate::tools::session::Session;

/// How the index ends a file without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Answer {
    Binary,
    TooLarge,
    /// Searched, nothing to show: it lacks a trigram of the query, or holds a secret.
    NoMatch,
}

/// A look at one file before it is read.
#[derive(Debug, Clone, Copy)]
pub(super) struct Look {
    pub id: Identity,
    /// When the look was taken (before the metadata was read).
    taken: u64,
    nlink: u64,
}

/// Metadata of one directory's entries, and when it was read.
struct Listing {
    taken: u64,
    stats: Option<KeyMap<String, Stat>>,
}

/// The index as one search uses it.
pub(super) struct Indexed {
    index: Index,
    /// Trigrams every match holds; empty when the query offers none.
    need: Vec<Trigram>,
    dirs: KeyMap<String, Listing>,
    scratch: Option<Box<Scratch>>,
    max_weight: u64,
    /// The walk being recorded for replay, when this search walks the whole tree.
    recording: Option<Recording>,
    /// The generation that records this search confirms get.
    confirming: Option<u64>,
    /// The tickets of the records this search confirms, by place in the walk it records
    /// or the replay that confirms ([`Tree::tickets`]).
    tickets: Vec<Ticket>,
    /// The place in that walk of the entry being searched.
    at: Option<usize>,
    /// Set when nothing changed since the replayed walk (the host watch's count): records
    /// of this generation answer without a look.
    trusted: Option<u64>,
    /// When a replay of this search began and the count it read (before any listing it
    /// took): a walk that follows a failed replay keeps those listings, so it is as old
    /// as they are.
    began: Option<(u64, Option<u64>)>,
    /// For an index builder: how often it saves what it has recorded (ns), and when it
    /// last did (or began).
    checkpoint: Option<(u64, u64)>,
}

/// A whole walk as it runs.
struct Recording {
    tree: Tree,
    tape: Tape,
    /// Directories the walk entered, in order (the root is `tree.dirs[0]`).
    entered: Vec<LogicalPath>,
}

impl std::fmt::Debug for Indexed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Indexed")
            .field("files", &self.index.len())
            .field("need", &self.need.len())
            .finish()
    }
}

impl Indexed {
    /// The index of `s` for a search needing `need`, or `None` when the policy turns the
    /// index off. `whole_tree`: the walk starts at the root and shows every file a search
    /// may read (no shard), so files it does not show are gone.
    /// `root`: the root's identity, as the search found it.
    pub(super) fn open(
        s: &Session,
        root: crate::fs::port::FileId,
        need: Vec<Trigram>,
        whole_tree: bool,
    ) -> Option<Self> {
        let max_weight = s.policy.limits().max_index_bytes;
        if max_weight == 0 {
            return None;
        }
        let binding = Index::binding(root, &s.policy.search_fingerprint());
        let kept = s.index.lock().ok()?.take();
        let mut index = match kept {
            Some(ix) if ix.bound_to() == binding => ix,
            _ => {
                let index_dir = s.index_dir();
                let index_dir = index_dir.as_deref();
                match index_dir.and_then(|d| file::load(d, &binding, s.fs.services(), max_weight)) {
                    Some(ix) => ix,
                    // The host builds the index beside the calls: scan until it is saved.
                    None if !s.index_builder && index_dir.is_some_and(file::building_elsewhere) => {
                        return None
                    }
                    None => Index::new(binding),
                }
            }
        };
        if whole_tree {
            index.start_marking();
        }
        Some(Indexed {
            index,
            need,
            dirs: KeyMap::default(),
            scratch: None,
            max_weight,
            recording: None,
            confirming: None,
            tickets: Vec::new(),
            at: None,
            trusted: None,
            began: None,
            checkpoint: s
                .index_builder
                .then_some(s.index_checkpoint_ns)
                .flatten()
                .map(|every| (every, now_ns())),
        })
    }

    /// Lists `dir` with metadata now, unless this search already did.
    fn enter_dir(&mut self, s: &Session, dir: &LogicalPath) {
        if self.dirs.contains_key(dir.as_str()) {
            return;
        }
        let taken = now_ns();
        let stats = s.fs.services().read_dir_stat(dir).and_then(|r| {
            let items = r.ok()?;
            Some(
                items
                    .into_iter()
                    .filter_map(|(n, st)| Some((n.ok()?, st)))
                    .collect(),
            )
        });
        self.dirs.insert(dir.to_string(), Listing { taken, stats });
    }

    /// The identity of `name` in `dir`'s listing: `None` when absent or unlisted.
    fn listed(&self, dir: &str, name: &str) -> Option<Identity> {
        let st = self.dirs.get(dir)?.stats.as_ref()?.get(name)?;
        Some(Identity::of(st))
    }

    /// The ignore files of `dir` as listed; `None` when the host lists no metadata.
    fn ignores_of(&self, dir: &LogicalPath) -> Option<[Option<Identity>; 2]> {
        let stats = self.dirs.get(dir.as_str())?.stats.as_ref()?;
        Some(IGNORE_FILES.map(|n| stats.get(n).map(Identity::of)))
    }

    /// The identity of directory `dir` (the root: its own metadata, looked at now).
    fn dir_identity(&self, s: &Session, dir: &LogicalPath) -> Option<Identity> {
        if dir.is_root() {
            return s.fs.root().stat().ok().map(|st| Identity::of(&st));
        }
        let parent = dir.parent();
        self.listed(parent.as_str(), dir.name())
    }

    /// The last whole walk with this choice of hidden entries, when everything it depends
    /// on is unchanged (the listings it looks at are kept for the files' own looks).
    pub(super) fn replayable(&mut self, s: &Session, include_hidden: bool) -> Option<Tree> {
        let began = now_ns();
        let changes = s.fs.services().tree_changes();
        self.began = Some((began, changes));
        let mut tree = self.index.take_tree(include_hidden)?;
        if changes.is_some() && changes == tree.changes {
            // Nothing below the repository changed since the walk: no look at all.
            self.trusted = Some(tree.generation);
            self.index.stop_marking();
            return Some(tree);
        }
        // Looked at directory by directory: the records this replay confirms get a new
        // generation, which later replays may trust while the count stays at `changes`.
        tree.changes = changes;
        tree.generation = self.index.next_generation();
        self.confirming = Some(tree.generation);
        let root_now = self.dir_identity(s, &LogicalPath::root());
        let mut ok = tree
            .dirs
            .first()
            .is_some_and(|r| tree.unchanged(&Some(r.id), &root_now));
        for d in &tree.dirs {
            if !ok {
                break;
            }
            self.enter_dir(s, &d.path);
            let id_ok =
                d.path.is_root() || tree.unchanged(&Some(d.id), &self.dir_identity(s, &d.path));
            ok = id_ok
                && self
                    .ignores_of(&d.path)
                    .is_some_and(|now| (0..2).all(|i| tree.unchanged(&d.ignores[i], &now[i])));
        }
        if ok {
            // Nothing moved: the files are the last walk's, so none is to be forgotten.
            self.index.stop_marking();
        }
        ok.then_some(tree)
    }

    /// Keeps `tree` for the next search (with the tickets of the records this replay
    /// confirmed, when it confirmed).
    pub(super) fn put_back(&mut self, mut tree: Tree) {
        if self.confirming == Some(tree.generation) {
            tree.tickets = std::mem::take(&mut self.tickets);
        }
        self.index.put_tree(tree);
    }

    /// Says that the replay is at entry `i` of its walk.
    pub(super) fn visiting(&mut self, i: usize) {
        self.at = Some(i);
    }

    /// Keeps `ticket` as that of the entry being searched, when this search confirms.
    fn keep_ticket(&mut self, ticket: Ticket) {
        let (Some(i), Some(_)) = (self.at, self.confirming) else {
            return;
        };
        if self.tickets.len() <= i {
            self.tickets.resize(i + 1, Ticket::NONE);
        }
        self.tickets[i] = ticket;
    }

    /// Starts recording a whole walk; returns the tape its skips go to.
    pub(super) fn record_walk(&mut self, s: &Session, include_hidden: bool) -> Option<Tape> {
        // After a failed replay, its listings (taken after its read of the count) serve
        // the walk: the walk is dated, and its count read, from before them, so that a
        // change between a listing and a later read of the count cannot be trusted away.
        let (taken, changes) = match self.began {
            Some(b) => b,
            None => (now_ns(), s.fs.services().tree_changes()),
        };
        let generation = self.index.next_generation();
        self.confirming = Some(generation);
        self.tickets.clear();
        self.at = None;
        let root = LogicalPath::root();
        let root_id = self.dir_identity(s, &root)?;
        self.enter_dir(s, &root);
        let ignores = self.ignores_of(&root)?;
        let tape = Tape::default();
        self.recording = Some(Recording {
            tree: Tree {
                include_hidden,
                taken,
                dirs: vec![DirCheck {
                    path: root,
                    id: root_id,
                    ignores,
                }],
                entries: Vec::new(),
                marks: Vec::new(),
                tickets: Vec::new(),
                tape: Vec::new(),
                budget_stopped: false,
                changes,
                generation,
            },
            tape: tape.clone(),
            entered: Vec::new(),
        });
        Some(tape)
    }

    /// Notes one entry the walk shows (before the walk lists it, when a directory).
    pub(super) fn note(&mut self, s: &Session, e: &WalkEntry) {
        if e.ty == crate::rules::fsx::EntryType::File {
            self.saw(&e.path);
        }
        let Some(rec) = &mut self.recording else {
            return;
        };
        self.at = Some(rec.tree.entries.len());
        rec.tree.marks.push(rec.tape.borrow().len() as u32);
        rec.tree.entries.push(Shown {
            path: e.path.clone(),
            ty: e.ty,
            kind: e.kind,
        });
        if e.ty == crate::rules::fsx::EntryType::Dir {
            rec.entered.push(e.path.clone());
            self.enter_dir(s, &e.path);
        }
    }

    /// Ends the recording: keeps the tree when the walk ran to its end (or to the walk
    /// budget), with every directory's identity known.
    pub(super) fn end_walk(&mut self, whole: bool, budget_stopped: bool) {
        let Some(mut rec) = self.recording.take() else {
            return;
        };
        if !whole {
            return;
        }
        rec.tree.budget_stopped = budget_stopped;
        rec.tree.tape = rec.tape.borrow().clone();
        rec.tree.tickets = std::mem::take(&mut self.tickets);
        for dir in rec.entered {
            let parent = dir.parent();
            let (Some(id), Some(ignores)) = (
                self.listed(parent.as_str(), dir.name()),
                self.ignores_of(&dir),
            ) else {
                return;
            };
            rec.tree.dirs.push(DirCheck {
                path: dir,
                id,
                ignores,
            });
        }
        self.index.put_tree(rec.tree);
    }

    /// Notes that the walk showed `path` (whatever then becomes of it): in a search of the
    /// whole tree, its record is marked ([`Index::mark_seen`]).
    pub(super) fn saw(&mut self, path: &LogicalPath) {
        self.index.mark_seen(path.as_str());
    }

    /// Looks at `path` (through `held`, its parent, when the host lists no metadata).
    pub(super) fn look(
        &mut self,
        s: &Session,
        path: &LogicalPath,
        held: Option<&Arc<Dir>>,
    ) -> Option<Look> {
        let parent_text = path.parent_str();
        if !self.dirs.contains_key(parent_text) {
            self.enter_dir(s, &path.parent());
        }
        let listing = self.dirs.get(parent_text)?;
        let (taken, st) = match &listing.stats {
            Some(m) => (listing.taken, *m.get(path.name())?),
            None => {
                let taken = now_ns();
                let opened;
                let dir = match held {
                    Some(d) => d.as_ref(),
                    None => {
                        opened = s.fs.open_dir(&path.parent()).ok()?;
                        &opened
                    }
                };
                (taken, dir.stat_at(path.name()).ok()??)
            }
        };
        st.is_file().then(|| Look {
            id: Identity::of(&st),
            taken,
            nlink: st.nlink,
        })
    }

    /// When nothing changed since the replayed walk and it confirmed the record of
    /// `path`: `Some` of how the record ends the file (`None`: it is to be read). `None`
    /// when the file is to be looked at.
    pub(super) fn trusted(&self, path: &LogicalPath) -> Option<Option<Answer>> {
        let what = self.index.confirmed(path.as_str(), self.trusted?)?;
        Some(end(&self.need, what))
    }

    /// [`Indexed::trusted`] for the file whose record the replayed walk holds `ticket` to.
    pub(super) fn trusted_by(&self, ticket: Ticket) -> Option<Option<Answer>> {
        let what = self.index.confirmed_by(ticket, self.trusted?)?;
        Some(end(&self.need, what))
    }

    /// How the index ends the file `path` that looks like `look`, if it can.
    pub(super) fn answer(
        &mut self,
        s: &Session,
        path: &LogicalPath,
        look: &Look,
    ) -> Option<Answer> {
        if !s.policy.links_allowed(look.nlink) {
            return None;
        }
        let confirming = self.confirming;
        let (what, ticket) = self
            .index
            .lookup_confirm(path.as_str(), &look.id, confirming)?;
        let answer = end(&self.need, what);
        if confirming.is_some() {
            self.keep_ticket(ticket);
        }
        answer
    }

    /// Records what a read of `path` (`len` bytes) found, when the read is of the state
    /// `look` describes. `what` is computed only when a record is wanted.
    pub(super) fn record(
        &mut self,
        s: &Session,
        path: &LogicalPath,
        look: &Look,
        len: u64,
        what: &mut dyn FnMut(&mut Scratch) -> What,
    ) {
        if !s.policy.links_allowed(look.nlink) {
            return;
        }
        let generation = self.confirming.unwrap_or(0);
        let found = self
            .index
            .lookup_confirm(path.as_str(), &look.id, Some(generation));
        if let Some((_, t)) = found {
            self.keep_ticket(t);
            return;
        }
        // Read whole as it was looked at, or cut at the policy's limit of a file that was
        // over it when looked at; anything else moved in between and is not recorded.
        let whole = len == look.id.size;
        let too_large = len > s.policy.limits().max_search_file_bytes
            && look.id.size > s.policy.limits().max_search_file_bytes;
        if !whole && !too_large {
            return;
        }
        let scratch = self.scratch.get_or_insert_with(Box::default);
        let rec = Rec {
            id: look.id,
            taken: look.taken,
            what: what(scratch),
            generation,
        };
        if let Some(t) = self.index.record(path.as_str(), rec, self.max_weight) {
            self.keep_ticket(t);
            self.checkpoint(s);
        }
    }

    /// An index builder saves what it has recorded every so often during its walk, so
    /// that a build which a call's limit ends keeps its work: the next call loads it and
    /// reads only the files it lacks. Each record stands alone (it answers only for the
    /// file state it was made from), so a part of the index is as sound as the whole.
    fn checkpoint(&mut self, s: &Session) {
        let Some((every, last)) = self.checkpoint else {
            return;
        };
        if now_ns().saturating_sub(last) < every {
            return;
        }
        let Some(dir) = s.index_dir() else {
            return;
        };
        file::save(&mut self.index, &dir, s.fs.services());
        // From the end of the save: one that takes longer than the interval does not
        // make the next record save again at once.
        self.checkpoint = Some((every, now_ns()));
    }

    /// Puts the index back into the session, forgetting files a whole walk did not show
    /// when `complete`, and saves it when enough changed.
    pub(super) fn close(mut self, s: &Session, complete: bool) {
        if complete {
            self.index.forget_unmarked();
        } else {
            self.index.stop_marking();
        }
        if let Some(dir) = s.index_dir() {
            if self.index.worth_saving(s.index_builder) {
                file::save(&mut self.index, &dir, s.fs.services());
            }
        }
        if let Ok(mut slot) = s.index.lock() {
            *slot = Some(self.index);
        }
    }
}

/// How a record ends its file for a query needing the trigrams `need`, if it does.
fn end(need: &[Trigram], what: &What) -> Option<Answer> {
    match what {
        What::Binary => Some(Answer::Binary),
        What::TooLarge => Some(Answer::TooLarge),
        What::Secret => Some(Answer::NoMatch),
        What::Text(f) => (!need.is_empty() && !f.may_hold_all(need)).then_some(Answer::NoMatch),
    }
}

/// The record of readable text `buf` of `path`.
pub(super) fn text_record(
    s: &Session,
    path: &LogicalPath,
    buf: &[u8],
    scratch: &mut Scratch,
) -> What {
    if s.policy.sniffs(path) && crate::rules::sniff::secret_in(buf).is_some() {
        What::Secret
    } else {
        What::Text(Filter::of(buf, scratch))
    }
}
