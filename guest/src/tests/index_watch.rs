//! The search index with a host watch (`tree-changes`), simulated: a count the test moves
//! with every change it makes, exact when read, and a hook that makes a change inside a
//! given read of the count (a change completed just before that read). A record the
//! index trusts without a look while the count stays the same must have been looked at
//! after the count was read; anything looked at earlier may be older than the count.
#![allow(clippy::unwrap_used)]

use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::index::{json, search, session, settle, Listings};
use crate::api::SearchTextArgs;
use crate::rules::fsx::Fs;
use crate::rules::path::LogicalPath;
use crate::rules::policy::Policy;
use crate::tools::session::Session;

type Hook = Box<dyn FnOnce() + Send>;

/// Listings with metadata, and a count of changes the test keeps exact.
pub(super) struct Watched {
    listings: Listings,
    pub(super) count: AtomicU64,
    reads: AtomicUsize,
    /// Run inside the read of this number (1 for the first), before it answers.
    hook: Mutex<Option<(usize, Hook)>>,
}

impl std::fmt::Debug for Watched {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Watched")
    }
}

impl Watched {
    /// A change the watch counted.
    pub(super) fn changed(&self) {
        self.count.fetch_add(1, Ordering::SeqCst);
    }

    /// Makes `change` (counted) inside the `n`-th read of the count from now on.
    fn at_read(&self, n: usize, change: impl FnOnce() + Send + 'static) {
        let at = self.reads.load(Ordering::SeqCst) + n;
        *self.hook.lock().unwrap() = Some((at, Box::new(change)));
    }
}

impl crate::rules::services::Services for Watched {
    fn read_dir(
        &self,
        dir: &LogicalPath,
    ) -> Option<std::io::Result<Vec<crate::fs::port::DirItem>>> {
        self.listings.read_dir(dir)
    }

    fn read_dir_stat(
        &self,
        dir: &LogicalPath,
    ) -> Option<std::io::Result<Vec<crate::rules::services::StatItem>>> {
        self.listings.read_dir_stat(dir)
    }

    fn tree_changes(&self) -> Option<u64> {
        let n = self.reads.fetch_add(1, Ordering::SeqCst) + 1;
        let mut hook = self.hook.lock().unwrap();
        if hook.as_ref().is_some_and(|(at, _)| *at == n) {
            if let Some((_, change)) = hook.take() {
                change();
                self.changed();
            }
        }
        Some(self.count.load(Ordering::SeqCst))
    }
}

fn watched_session(root: &Path, state: &Path) -> (Session, Arc<Watched>) {
    watched_session_with(root, state, super::index::ON)
}

/// A session with the simulated watch under `policy`.
pub(super) fn watched_session_with(
    root: &Path,
    state: &Path,
    policy: &str,
) -> (Session, Arc<Watched>) {
    let w = Arc::new(Watched {
        listings: Listings {
            root: root.to_path_buf(),
            plain: Default::default(),
        },
        count: AtomicU64::new(0),
        reads: AtomicUsize::new(0),
        hook: Mutex::new(None),
    });
    (watching(&w, root, state, policy), w)
}

/// A new session (another process) under `policy` that the watch `w` serves.
pub(super) fn watching(w: &Arc<Watched>, root: &Path, state: &Path, policy: &str) -> Session {
    let fs = Fs::open(root).unwrap().with_services(w.clone());
    let mut s = Session::new(fs, Policy::from_json(policy).unwrap());
    s.state_dir = Some(state.to_path_buf());
    s
}

fn ask(query: &str) -> SearchTextArgs {
    SearchTextArgs {
        query: query.into(),
        output: Some(crate::api::SearchOutput::Files),
        ..Default::default()
    }
}

/// A tree with `a.txt` in the root and a subdirectory `d`, older than the timestamp step;
/// a session with the simulated watch and a scanning one; one search builds the index.
fn setup() -> (
    tempfile::TempDir,
    [tempfile::TempDir; 2],
    Session,
    Arc<Watched>,
    Session,
) {
    let repo = tempfile::tempdir().unwrap();
    fs::write(repo.path().join("a.txt"), "plain words\n").unwrap();
    fs::create_dir(repo.path().join("d")).unwrap();
    fs::write(repo.path().join("d/b.txt"), "other words\n").unwrap();
    settle();
    let states = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let (on, w) = watched_session(repo.path(), states[0].path());
    let off = session(
        repo.path(),
        states[1].path(),
        r#"{"limits": {"max_index_bytes": 0}}"#,
    );
    let (first, _) = search(&on, ask("needle"));
    assert_eq!(first[0].files_matched, 0);
    // Nothing changed: the replay trusts its records, and reads nothing at all.
    let (again, bytes) = search(&on, ask("needle"));
    assert_eq!(json(&again), json(&search(&off, ask("needle")).0));
    assert_eq!(
        bytes, 0,
        "the count did not let the index trust its records"
    );
    (repo, states, on, w, off)
}

/// A replay that finds a subdirectory changed walks again; the root's listing it took
/// (before the walk's own read of the count) must not confirm records for the walk: a
/// file changed between that listing and the walk's count read would be trusted,
/// unchanged in the index's eyes, by every search after, while the count stays put.
#[test]
fn a_change_just_before_the_walk_reads_the_count_is_not_trusted_away() {
    let (repo, _states, on, w, off) = setup();
    // A change in `d` (counted): the next search's replay lists the root, then finds `d`
    // changed and walks; the walk reads the count, and just before that read `a.txt`
    // gains the needle.
    fs::write(repo.path().join("d/new.txt"), "more words\n").unwrap();
    w.changed();
    let a = repo.path().join("a.txt");
    w.at_read(2, move || {
        fs::write(a, "plain words and a needle\n").unwrap()
    });
    // The search the change raced with may answer either way.
    let _ = search(&on, ask("needle"));
    // Every later search must see it: nothing moved the count since it was made.
    let (got, _) = search(&on, ask("needle"));
    let (want, _) = search(&off, ask("needle"));
    assert_eq!(want[0].files_matched, 1, "the scan finds the needle");
    assert_eq!(json(&got), json(&want));
}

/// The positive control: the same change made before the search began is found.
#[test]
fn a_change_before_the_search_began_is_found() {
    let (repo, _states, on, w, off) = setup();
    fs::write(repo.path().join("d/new.txt"), "more words\n").unwrap();
    fs::write(repo.path().join("a.txt"), "plain words and a needle\n").unwrap();
    w.changed();
    let _ = search(&on, ask("needle"));
    let (got, _) = search(&on, ask("needle"));
    let (want, _) = search(&off, ask("needle"));
    assert_eq!(want[0].files_matched, 1);
    assert_eq!(json(&got), json(&want));
}

/// A replay while nothing changed finds each file's record through the walk's ticket to it
/// (no look-up by path); the tickets are the records' own.
#[test]
fn a_quiet_replay_finds_every_record_by_the_walks_ticket() {
    let (repo, _states, on, w, _off) = setup();
    let count = w.count.load(Ordering::SeqCst);
    let slot = on.index.lock().unwrap();
    let ix = slot.as_ref().unwrap();
    let tree = ix.quiet_tree(false, count).unwrap();
    let mut files = 0;
    for (i, e) in tree.entries.iter().enumerate() {
        if e.ty != crate::rules::fsx::EntryType::File {
            continue;
        }
        files += 1;
        let by_ticket = ix.confirmed_by(tree.ticket(i), tree.generation);
        assert!(by_ticket.is_some(), "{} has no ticket", e.path.as_str());
        assert_eq!(by_ticket, ix.confirmed(e.path.as_str(), tree.generation));
    }
    assert_eq!(files, 2);
    drop(slot);
    // A walk after a change hands out new tickets: the replay after it still reads nothing.
    fs::write(repo.path().join("d/c.txt"), "third words\n").unwrap();
    w.changed();
    settle();
    let _ = search(&on, ask("needle"));
    let (_, bytes) = search(&on, ask("needle"));
    assert_eq!(
        bytes, 0,
        "the replay after a walk did not trust its records"
    );
}
