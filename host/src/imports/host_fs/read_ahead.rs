//! Directory listings read ahead on a thread of their own, so that a walk's system calls
//! (open, `getdents`, with `read-dir-stat` one `stat` per entry) run on the second core
//! while the component classifies the listings it already has.
//!
//! A walk asks for `read-dir` or `read-dir-stat` in pre-order, each directory's entries in
//! byte order of their names (`rules/walk.rs` in the guest). Once a call has asked for a
//! second listing of one kind, a thread lists ahead in the same order: the
//! subdirectories of every listing, the next first. What it read is only ever an answer
//! to the same question asked later *in the same call*: it is made by the same function
//! as a listing made at once (`openat2` beneath the repository, no symlink anywhere,
//! `stat` relative to the held descriptor), after the call began, and it is dropped with
//! the call. A listing the walk does not ask
//! for (a hidden, ignored or blocked directory, or one it passed by) is never shown to
//! the component. A call that has begun to change files stops reading ahead, so that it
//! sees its own changes.
//!
//! When the walk is the faster (`changes_since` reuses its verdicts and only compares
//! names), it asks for the listing the thread is still making: rather than wait, it lists
//! the next directories to come itself meanwhile, each only up to [`HELP_MAX_ENTRIES`]
//! entries (a larger one goes back to the thread), so that both list. Such a listing is
//! made by the thread's own function and kept like the thread's. (A directory that never
//! answers can stall a call that lists it; one the walk helps with may be one it would
//! pass over, which gives nothing to someone who could put such a directory anywhere in
//! the repository.)
//!
//! Bounded: at most [`MAX_LISTINGS`] listings and about [`MAX_ENTRIES`] entries wait to be
//! taken (a directory with more entries is left for the walk to list itself; a listing
//! begun below the bound is kept whole), at most
//! [`MAX_TODO`] directories wait to be listed, what the walk has passed by is let go,
//! and one thread per component instance runs at a time (the thread of a call that
//! ended goes on only to the end of the listing it is making; while one that is stuck
//! there, on a file system that never answers, has not ended, no other starts). The
//! thread lists what the walk may pass over (ignored, blocked or git-shaped directories:
//! the host does not know the policy); nothing of those is ever answered. A thread that
//! filled the bound waits until the walk has taken half of it (or lists a directory
//! itself), then lists on: one wake-up per many directories, not one per directory. A
//! walk that lists for itself while more than half the bound waits lets go of the
//! listings farthest ahead (they are queued again), so that the thread is never held by
//! listings the walk will not take for a long while.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use cap_std::fs::Dir;

use crate::bindings::agent::file_tools::host_fs::{DirEntry, DirEntryStat};
use crate::bindings::agent::file_tools::types::EntryType;

/// An entry of a listing (`read-dir` or `read-dir-stat`).
pub(crate) trait Entry: Send + 'static {
    /// The entry's name when it is a directory (not a symlink to one).
    fn dir_name(&self) -> Option<&str>;
}

impl Entry for DirEntry {
    fn dir_name(&self) -> Option<&str> {
        (self.kind == EntryType::Dir).then_some(self.name.as_deref()?)
    }
}

impl Entry for DirEntryStat {
    fn dir_name(&self) -> Option<&str> {
        (self.stat.kind == EntryType::Dir).then_some(self.name.as_deref()?)
    }
}

/// A listing, as `read-dir` or `read-dir-stat` answers it.
pub(crate) type Listing<E> = Result<Vec<E>, String>;

/// How a listing is made: beneath the held repository, by logical path, refused with
/// [`PAST_BOUND`] past the given count of entries.
pub(crate) type List<E> = fn(&Dir, &str, usize) -> Listing<E>;

/// The refusal of a listing with more entries than asked for.
pub(crate) const PAST_BOUND: &str = "more entries than the read-ahead holds";

/// Whether `listing` was refused for holding more entries than it was asked for.
fn past_bound<E>(listing: &Listing<E>) -> bool {
    matches!(listing, Err(e) if e == PAST_BOUND)
}

/// Listings waiting to be taken, at most.
const MAX_LISTINGS: usize = 512;
/// Entries in the listings waiting to be taken, at most.
const MAX_ENTRIES: usize = 16_384;
/// Entries of a listing the walk makes ahead while it waits for the thread, at most.
const HELP_MAX_ENTRIES: usize = 256;
/// Directories waiting to be listed, at most (below a listing that would pass it, nothing
/// is read ahead).
const MAX_TODO: usize = 4_096;

/// The order in which a walk visits paths: component by component, in byte order (so
/// that a directory's subtree comes right after it, before its next sibling).
fn walk_order(a: &str, b: &str) -> Ordering {
    a.split('/').cmp(b.split('/'))
}

/// The logical path of `name` in the directory `dir` (`""` for the root).
fn child(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// The subdirectories of a listing a walk may enter, last first (so that popping them
/// from a stack visits them in order): named in UTF-8, not hidden.
fn subdirs<E: Entry>(dir: &str, listing: &Listing<E>) -> Vec<String> {
    let Ok(entries) = listing else {
        return Vec::new();
    };
    let mut names: Vec<&str> = entries
        .iter()
        .filter_map(Entry::dir_name)
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort_unstable_by(|a, b| b.cmp(a));
    names.into_iter().map(|n| child(dir, n)).collect()
}

struct State<E> {
    /// Directories to list, the next on top; in walk order from the top down.
    todo: Vec<String>,
    /// Listings made and not yet taken, and how many entries they hold together.
    done: HashMap<String, Listing<E>>,
    entries: usize,
    /// The directory the thread is listing now.
    busy: Option<String>,
    /// The last directory the walk asked for: what comes before it is never asked again.
    floor: Option<String>,
    /// The thread waits for work or room; the walk waits for the listing the thread is
    /// making (each is woken only then: a wake-up is a system call).
    idle: bool,
    waiting: bool,
    /// The thread filled the bound and waits until [`State::wants_thread`] (or until the
    /// walk lists for itself): a wake-up for any other reason puts it back to sleep.
    resting: bool,
    stop: bool,
}

impl<E> Default for State<E> {
    fn default() -> Self {
        State {
            todo: Vec::new(),
            done: HashMap::new(),
            entries: 0,
            busy: None,
            floor: None,
            idle: false,
            waiting: false,
            resting: false,
            stop: false,
        }
    }
}

impl<E> State<E> {
    /// How `path` stands to the last directory the walk asked for (`Greater` before it
    /// asked for any).
    fn to_floor(&self, path: &str) -> Ordering {
        self.floor
            .as_deref()
            .map_or(Ordering::Greater, |f| walk_order(path, f))
    }

    /// Lets go of what the walk has passed: directories to list up to the floor, and,
    /// when the listings fill their bound (or with `all`), those before the floor (the
    /// floor's own is kept for a walk waiting for it).
    fn prune(&mut self, all: bool) {
        while self
            .todo
            .last()
            .is_some_and(|t| self.to_floor(t) != Ordering::Greater)
        {
            self.todo.pop();
        }
        if !all && !self.full() {
            return;
        }
        let Some(floor) = self.floor.take() else {
            return;
        };
        let mut freed = 0;
        self.done.retain(|path, listing| {
            let keep = walk_order(path, &floor) != Ordering::Less;
            if !keep {
                freed += listing.as_ref().map_or(0, Vec::len);
            }
            keep
        });
        self.entries -= freed;
        self.floor = Some(floor);
    }

    /// Whether a waiting thread is to be woken when the walk takes a listing: there is
    /// something to list, and the listings not yet taken have fallen to half their
    /// bound. Woken at every listing the walk takes, a thread that runs ahead would make
    /// one listing and wait again: a wake-up (a system call and two context switches)
    /// per directory. From half, it makes many in a row; the walk still has the other
    /// half to take meanwhile.
    fn wants_thread(&self) -> bool {
        !self.todo.is_empty()
            && self.done.len() <= MAX_LISTINGS / 2
            && self.entries <= MAX_ENTRIES / 2
    }

    fn full(&self) -> bool {
        self.done.len() >= MAX_LISTINGS || self.entries >= MAX_ENTRIES
    }

    /// When more than half the bound waits though the walk had to list for itself (the
    /// listings lie far ahead: made while the walk or the thread listed a directory whose
    /// subtree comes first), lets go of those farthest ahead down to half, so that the
    /// thread, which rests until then, lists what the walk needs next again. (The walk
    /// lists those let go itself when it comes to them.)
    fn let_go_farthest(&mut self) {
        if self.done.len() <= MAX_LISTINGS / 2 && self.entries <= MAX_ENTRIES / 2 {
            return;
        }
        let mut ahead: Vec<String> = self.done.keys().cloned().collect();
        ahead.sort_unstable_by(|a, b| walk_order(b, a));
        for path in ahead {
            if self.done.len() <= MAX_LISTINGS / 2 && self.entries <= MAX_ENTRIES / 2 {
                break;
            }
            if let Some(listing) = self.done.remove(&path) {
                self.entries -= listing.as_ref().map_or(0, Vec::len);
                self.requeue(path);
            }
        }
    }

    /// Puts `path` back among the directories to list, in its place in walk order (the
    /// stack is in walk order from the top down), so that the thread lists it again when
    /// the walk comes near.
    fn requeue(&mut self, path: String) {
        if self.todo.len() >= MAX_TODO {
            return;
        }
        let at = self
            .todo
            .partition_point(|t| walk_order(t, &path) == Ordering::Greater);
        self.todo.insert(at, path);
    }

    /// Whether the walk may list ahead while it waits: only within half the bound.
    fn room_to_help(&self) -> bool {
        self.done.len() < MAX_LISTINGS / 2 && self.entries < MAX_ENTRIES / 2
    }

    /// The next directory to list, taken off the stack, when there is room for its
    /// listing; directories the walk has passed are dropped on the way.
    fn next_to_list(&mut self) -> Option<String> {
        while !self.full() {
            let path = self.todo.pop()?;
            // Passed by the walk, or listed already (a directory let go and queued again
            // may be queued twice).
            if self.to_floor(&path) != Ordering::Less && !self.done.contains_key(&path) {
                return Some(path);
            }
        }
        None
    }

    /// Keeps the listing of `path` made ahead, and queues its subdirectories, unless it
    /// holds more entries than the bound, the walk has passed it, or it is kept already.
    fn keep(&mut self, path: String, listing: Listing<E>)
    where
        E: Entry,
    {
        if past_bound(&listing)
            || self.to_floor(&path) == Ordering::Less
            || self.done.contains_key(&path)
        {
            return;
        }
        let below = subdirs(&path, &listing);
        self.entries += listing.as_ref().map_or(0, Vec::len);
        self.done.insert(path, listing);
        self.queue(below);
    }

    /// Queues `below` to be listed, when the bound leaves room for all of it.
    fn queue(&mut self, below: Vec<String>) {
        if self.todo.len() + below.len() <= MAX_TODO {
            self.todo.extend(below);
        }
    }
}

struct Shared<E> {
    state: Mutex<State<E>>,
    /// Woken when there is work or room for the thread, and when a listing is made.
    changed: Condvar,
}

impl<E> Shared<E> {
    fn lock(&self) -> MutexGuard<'_, State<E>> {
        // A panic while holding the lock leaves plain data: still usable.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Lets go of the lock, waking the other side when `asleep` says it waits.
    fn wake_if(&self, st: MutexGuard<'_, State<E>>, asleep: impl Fn(&State<E>) -> bool) {
        let wake = asleep(&st);
        drop(st);
        if wake {
            self.changed.notify_all();
        }
    }
}

/// The read-ahead of one call; dropping it stops the thread.
struct ReadAhead<E> {
    shared: Arc<Shared<E>>,
    /// The repository and how to list in it, for the walk to list ahead itself while the
    /// thread makes the listing it waits for.
    dir: Arc<Dir>,
    list: List<E>,
}

impl<E> std::fmt::Debug for ReadAhead<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadAhead").finish_non_exhaustive()
    }
}

impl<E: Entry> ReadAhead<E> {
    /// Starts a thread that lists directories beneath `dir` with `list`, unless another
    /// one still `running`; `None` when none is started (the walk then lists everything
    /// itself).
    fn start(dir: Arc<Dir>, list: List<E>, running: &Arc<AtomicBool>) -> Option<ReadAhead<E>> {
        if running.swap(true, AtomicOrdering::AcqRel) {
            return None;
        }
        let shared = Arc::new(Shared {
            state: Mutex::default(),
            changed: Condvar::new(),
        });
        let (worker, flag, root) = (shared.clone(), running.clone(), dir.clone());
        let spawned = std::thread::Builder::new()
            .name("file-tools-read-ahead".into())
            .spawn(move || {
                let _leaving = Leaving(&worker, flag);
                run(&worker, &root, list);
            });
        if spawned.is_err() {
            running.store(false, AtomicOrdering::Release);
            return None;
        }
        Some(ReadAhead { shared, dir, list })
    }

    /// The listing of `path` when it was read ahead (waiting for it if the thread is at
    /// it); `None` when the caller is to list it.
    fn take(&self, path: &str) -> Option<Listing<E>> {
        let mut st = self.shared.lock();
        st.floor = Some(path.to_string());
        let mut helping = true;
        let found = loop {
            if let Some(listing) = st.done.remove(path) {
                st.entries -= listing.as_ref().map_or(0, Vec::len);
                break Some(listing);
            }
            if st.busy.as_deref() != Some(path) {
                break None;
            }
            // The thread is making it: rather than wait, the walk makes the next listing
            // to come meanwhile (when the thread lists slower than the walk takes, both
            // list), within half the bound, so that the thread never waits for room
            // because of it.
            // Its listings are bounded lower than the thread's, so that a large directory
            // (one the walk may never ask for: the host does not know what it ignores)
            // costs it little; such a one is left to the thread.
            if let Some(next) = (helping && st.room_to_help())
                .then(|| st.next_to_list())
                .flatten()
            {
                drop(st);
                let listing = (self.list)(&self.dir, &next, HELP_MAX_ENTRIES);
                st = self.shared.lock();
                if past_bound(&listing) {
                    // Given back, and no more help in this wait.
                    helping = false;
                    if st.to_floor(&next) != Ordering::Less {
                        st.todo.push(next);
                    }
                } else {
                    st.keep(next, listing);
                }
                continue;
            }
            st.waiting = true;
            st = self
                .shared
                .changed
                .wait(st)
                .unwrap_or_else(|p| p.into_inner());
            st.waiting = false;
        };
        st.prune(false);
        self.shared.wake_if(st, |st| st.idle && st.wants_thread());
        found
    }

    /// Reads ahead below `path`, which the caller has just listed, into `below` (its
    /// subdirectories, last first).
    ///
    /// The walk lists for itself only when the thread had nothing for it: whatever
    /// listings wait now lie before `path` (a subtree the walk passed over) or below a
    /// listing the thread could not follow. All of the first are let go, and the thread
    /// is woken whatever the rest are: waiting for half of them to be taken, it could
    /// wait for the rest of the call.
    fn follow(&self, path: &str, below: Vec<String>) {
        let mut st = self.shared.lock();
        st.floor = Some(path.to_string());
        if let Some(twice) = st.done.remove(path) {
            st.entries -= twice.as_ref().map_or(0, Vec::len);
        }
        st.prune(true);
        st.let_go_farthest();
        st.queue(below);
        st.resting = false;
        self.shared.wake_if(st, |st| st.idle);
    }
}

/// The read-aheads of one call, one for each kind of listing.
#[derive(Debug, Default)]
pub(crate) struct Walks {
    pub(crate) plain: Listings<DirEntry>,
    pub(crate) with_stat: Listings<DirEntryStat>,
}

impl Walks {
    /// The read-aheads of a new call of the instance whose threads `running` tells of.
    pub(crate) fn new(running: Arc<AtomicBool>) -> Walks {
        let mut w = Walks::default();
        w.plain.running = running.clone();
        w.with_stat.running = running;
        w
    }

    /// Stops reading ahead for the rest of the call (see [`Listings::stop`]).
    pub(crate) fn stop(&mut self) {
        self.plain.stop();
        self.with_stat.stop();
    }
}

/// The listings of one call: read ahead from its second listing on (a call that lists one
/// directory, as `list_dir` does, starts no thread), until it begins to change files.
#[derive(Debug)]
pub(crate) struct Listings<E> {
    /// The first listing's path and subdirectories, until a second comes.
    first: Option<(String, Vec<String>)>,
    ahead: Option<ReadAhead<E>>,
    /// No more reading ahead in this call.
    off: bool,
    /// Set while a thread of this component instance reads ahead (kept across calls).
    running: Arc<AtomicBool>,
}

impl<E> Default for Listings<E> {
    fn default() -> Self {
        Listings {
            first: None,
            ahead: None,
            off: false,
            running: Arc::default(),
        }
    }
}

impl<E: Entry> Listings<E> {
    /// The listing of `path` beneath `dir`: read ahead, or made now by `list` (and then
    /// the walk is followed from it).
    pub(crate) fn list(&mut self, dir: &Arc<Dir>, path: &str, list: List<E>) -> Listing<E> {
        if let Some(listing) = self.take(path) {
            return listing;
        }
        let listing = list(dir, path, usize::MAX);
        self.listed(dir, path, &listing, list);
        listing
    }

    /// The listing of `path` when it was read ahead.
    fn take(&self, path: &str) -> Option<Listing<E>> {
        self.ahead.as_ref()?.take(path)
    }

    /// Notes that `path` was listed as `listing` (beneath `dir`, by `list`), and reads
    /// ahead from the second listing on.
    fn listed(&mut self, dir: &Arc<Dir>, path: &str, listing: &Listing<E>, list: List<E>) {
        if self.off {
            return;
        }
        let below = subdirs(path, listing);
        if self.ahead.is_none() {
            let Some(first) = self.first.take() else {
                self.first = Some((path.to_string(), below));
                return;
            };
            let Some(ahead) = ReadAhead::start(dir.clone(), list, &self.running) else {
                self.off = true;
                return;
            };
            ahead.follow(&first.0, first.1);
            self.ahead = Some(ahead);
        }
        if let Some(ahead) = &self.ahead {
            ahead.follow(path, below);
        }
    }

    /// Stops reading ahead for the rest of the call (it has begun to change files: later
    /// listings must show its changes).
    pub(crate) fn stop(&mut self) {
        self.off = true;
        self.first = None;
        self.ahead = None;
    }
}

impl<E> Drop for ReadAhead<E> {
    fn drop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.changed.notify_all();
    }
}

/// The thread: lists the directory on top of the stack while there is room, until
/// stopped.
fn run<E: Entry>(shared: &Shared<E>, dir: &Dir, list: List<E>) {
    loop {
        let mut st = shared.lock();
        while !st.stop && (st.todo.is_empty() || st.full() || (st.resting && !st.wants_thread())) {
            st.resting |= st.full();
            st.idle = true;
            st = shared.changed.wait(st).unwrap_or_else(|p| p.into_inner());
            st.idle = false;
        }
        st.resting = false;
        if st.stop {
            return;
        }
        let Some(path) = st.next_to_list() else {
            continue;
        };
        st.busy = Some(path.clone());
        drop(st);
        let listing = list(dir, &path, MAX_ENTRIES);
        let mut st = shared.lock();
        st.busy = None;
        st.keep(path, listing);
        shared.wake_if(st, |st| st.waiting);
    }
}

/// The thread's way out, a panic's included: it stops, a walk waiting for the listing
/// it was making lists for itself, and another thread may start.
struct Leaving<'a, E>(&'a Shared<E>, Arc<AtomicBool>);

impl<E> Drop for Leaving<'_, E> {
    fn drop(&mut self) {
        let mut st = self.0.lock();
        st.busy = None;
        st.stop = true;
        drop(st);
        self.0.changed.notify_all();
        self.1.store(false, AtomicOrdering::Release);
    }
}

#[cfg(test)]
mod tests;
