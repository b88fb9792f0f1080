//! The tickets a recorded walk holds to its files' records, against the scan, with the
//! simulated watch: random searches of a tree with hidden files, alternating between the
//! two walks the index keeps (hidden entries shown or not), stopped early by small
//! `max_matches` pages, while the tree changes between searches (each change counted)
//! and the count sometimes moves with no change at all (a replay that looks at every
//! directory and confirms again). Variants bound the index so tightly that records are
//! refused and forgotten and their slots taken by other paths, cut the walk at its
//! budget, or start a new session that loads the index from disk. Every answer must be
//! the scan's, and after every search each ticket of a walk the watch still vouches for
//! must find nothing, or the very record a look-up by its entry's path finds.
#![allow(clippy::unwrap_used)]

use std::fs;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::index::{json, search, session, settle, text, Rng};
use super::index_watch::{watched_session_with, watching, Watched};
use crate::api::{SearchOutput, SearchTextArgs, SearchTextResult};
use crate::rules::fsx::EntryType;
use crate::tools::session::Session;

/// A rare word some changes plant, so that searches find something now and then.
const NEEDLE: &str = "needlezq";

const DIRS: [&str; 4] = ["d0", "d1", "d2", ".hid"];

fn build(r: &mut Rng, root: &Path) {
    for d in DIRS {
        fs::create_dir(root.join(d)).unwrap();
        for f in 0..6 {
            let lines = 3 + r.below(30);
            fs::write(root.join(format!("{d}/f{f}.txt")), text(r, lines)).unwrap();
        }
        fs::write(root.join(format!("{d}/.h.txt")), text(r, 5)).unwrap();
    }
    fs::write(root.join("d1/n.txt"), format!("a {NEEDLE} here\n")).unwrap();
    fs::write(root.join(".hid/n.txt"), format!("hidden {NEEDLE}\n")).unwrap();
    fs::write(root.join("d2/.gitignore"), "*.log\n").unwrap();
    fs::write(root.join("d2/x.log"), format!("{NEEDLE} ignored\n")).unwrap();
}

/// Files of `dir`, in a fixed order.
fn files_in(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file() && !p.ends_with(".gitignore"))
        .collect();
    v.sort();
    v
}

/// One change to the tree (the caller counts it).
fn mutate(r: &mut Rng, root: &Path, step: usize) {
    let dir = root.join(DIRS[r.below(DIRS.len())]);
    let names = files_in(&dir);
    if names.is_empty() {
        fs::write(dir.join(format!("new{step}.txt")), text(r, 4)).unwrap();
        return;
    }
    let victim = &names[r.below(names.len())];
    match r.below(9) {
        // In place: the directory keeps its identity, so the next replay confirms.
        0 => {
            let mut f = fs::OpenOptions::new().append(true).open(victim).unwrap();
            std::io::Write::write_all(&mut f, format!("then {NEEDLE}\n").as_bytes()).unwrap();
        }
        1 => {
            super::index::rewrite_keeping_size_and_mtime(victim, text(r, 10).into_bytes());
        }
        2 => fs::write(victim, b"alpha\0binary now").unwrap(),
        3 => {
            let lines = 2 + r.below(40);
            fs::write(victim, text(r, lines)).unwrap()
        }
        // The directory changes: the next replay fails, and a walk follows.
        4 => fs::write(dir.join(format!("new{step}.txt")), text(r, 4)).unwrap(),
        5 => fs::remove_file(victim).unwrap(),
        6 => {
            let to = root.join(format!("{}/m{step}.txt", DIRS[r.below(DIRS.len())]));
            fs::rename(victim, to).unwrap();
        }
        7 => {
            // Another file takes the victim's name (a record's path, new content).
            let other = &names[r.below(names.len())];
            if other != victim {
                fs::rename(other, victim).unwrap();
            }
        }
        _ => fs::write(dir.join(format!(".n{step}.txt")), format!("{NEEDLE}\n")).unwrap(),
    }
}

fn query(r: &mut Rng) -> SearchTextArgs {
    let w = r.word();
    let query = match r.below(5) {
        0 | 1 => NEEDLE.to_string(),
        2 => w[..3].to_string(),
        _ => w,
    };
    SearchTextArgs {
        query,
        include_hidden: Some(r.below(2) == 0),
        max_matches: [None, Some(1), Some(2), Some(5)][r.below(4)],
        output: Some(
            [
                SearchOutput::Matches,
                SearchOutput::Files,
                SearchOutput::Count,
            ][r.below(3)],
        ),
        case_insensitive: Some(r.below(4) == 0),
        ..Default::default()
    }
}

fn comparable(mut pages: Vec<SearchTextResult>) -> serde_json::Value {
    // Cursors are bound to the policy, which differs in `max_index_bytes`.
    for p in &mut pages {
        p.next_cursor = None;
    }
    json(&pages)
}

/// After a search: each ticket of a walk the watch still vouches for finds nothing, or
/// exactly the record a look-up by its entry's path finds. The number of tickets that
/// found a record.
fn check_tickets(on: &Session, w: &Watched) -> usize {
    let count = w.count.load(Ordering::SeqCst);
    let slot = on.index.lock().unwrap();
    let Some(ix) = slot.as_ref() else {
        return 0;
    };
    let mut found = 0;
    for hidden in [false, true] {
        let Some(tree) = ix.quiet_tree(hidden, count) else {
            continue;
        };
        assert!(tree.tickets.len() <= tree.entries.len());
        for (i, e) in tree.entries.iter().enumerate() {
            let by_ticket = ix.confirmed_by(tree.ticket(i), tree.generation);
            if e.ty != EntryType::File {
                assert_eq!(by_ticket, None, "{} is no file", e.path.as_str());
                continue;
            }
            if let Some(what) = by_ticket {
                let by_path = ix.confirmed(e.path.as_str(), tree.generation);
                assert!(
                    by_path.is_some_and(|p| std::ptr::eq(p, what)),
                    "the ticket of {} finds another record",
                    e.path.as_str()
                );
                found += 1;
            }
        }
    }
    found
}

/// What one run saw, for the positive controls.
#[derive(Default, Debug)]
struct Seen {
    /// Searches the scan answered with a match in a hidden file, and in another.
    hidden_hits: usize,
    plain_hits: usize,
    /// Searches the indexed session answered reading less than the scan read.
    spared: usize,
    /// The most records the index held after a search.
    records: usize,
    /// Tickets that found their record after a search.
    tickets: usize,
    /// Searches cut by `max_matches`.
    cut: usize,
}

/// `limits`: the policy's limits besides `max_index_bytes`; `index_bytes`: its bound;
/// `reload`: now and then the indexed session is replaced by a new one (on the same
/// watch and state directory) that loads the index from disk.
fn run(limits: &str, index_bytes: u64, reload: bool, steps: usize) -> Seen {
    let seed = super::index::clock_seed();
    let mut r = Rng(seed);
    let repo = tempfile::tempdir().unwrap();
    let (st_on, st_off) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    build(&mut r, repo.path());
    let sep = if limits.is_empty() { "" } else { ", " };
    let policy_on = format!(r#"{{"limits": {{{limits}{sep}"max_index_bytes": {index_bytes}}}}}"#);
    let policy_off = format!(r#"{{"limits": {{{limits}{sep}"max_index_bytes": 0}}}}"#);
    let (mut on, w) = watched_session_with(repo.path(), st_on.path(), &policy_on);
    let off = session(repo.path(), st_off.path(), &policy_off);
    let w: Arc<Watched> = w;
    let mut seen = Seen::default();
    settle();
    for step in 0..steps {
        if step == steps / 2 {
            // Older than the timestamp step again: records answer by a look too.
            settle();
        }
        let a = query(&mut r);
        let (got, got_bytes) = search(&on, a.clone());
        let (want, want_bytes) = search(&off, a.clone());
        if want.iter().any(|p| p.truncated) {
            seen.cut += 1;
        }
        let paths = want.iter().flat_map(|p| {
            p.files
                .iter()
                .map(|f| f.path.clone())
                .chain(p.matches.iter().map(|m| m.path.clone()))
        });
        let (hidden, plain): (Vec<String>, Vec<String>) =
            paths.partition(|p| p.split('/').any(|c| c.starts_with('.')));
        seen.hidden_hits += usize::from(!hidden.is_empty());
        seen.plain_hits += usize::from(!plain.is_empty());
        if got_bytes < want_bytes {
            seen.spared += 1;
        }
        assert_eq!(
            comparable(got),
            comparable(want),
            "seed {seed}, step {step}: {a:?}"
        );
        seen.tickets += check_tickets(&on, &w);
        let held = on.index.lock().unwrap().as_ref().map_or(0, |ix| ix.len());
        seen.records = seen.records.max(held);
        match r.below(10) {
            0..=2 => {
                mutate(&mut r, repo.path(), step);
                w.changed();
            }
            // The count moves with nothing changed: a replay that confirms again.
            3 => w.changed(),
            4 if reload => on = watching(&w, repo.path(), st_on.path(), &policy_on),
            _ => {}
        }
    }
    eprintln!("{seen:?}");
    seen
}

/// The positive controls every run must pass: the scan found matches in hidden files and
/// in others, searches were cut by their pages, the index spared reads, and tickets found
/// records.
fn controls(seen: &Seen) {
    assert!(seen.hidden_hits > 0 && seen.plain_hits > 0, "{seen:?}");
    assert!(seen.cut > 0, "{seen:?}");
    assert!(seen.spared > 0, "the index never spared a read: {seen:?}");
    assert!(seen.tickets > 0, "no ticket found its record: {seen:?}");
}

#[test]
fn tickets_answer_as_the_scan_across_both_walks_and_early_stops() {
    let seen = run("", 99_999_999, false, 160);
    controls(&seen);
    assert!(seen.records > 25, "{seen:?}");
}

/// A bound that holds a handful of records: most are refused (and their paths forgotten),
/// the others forgotten as files go, and the freed slots taken by other paths.
#[test]
fn tickets_answer_as_the_scan_when_the_bound_refuses_and_forgets_records() {
    let seen = run("", 1_200, false, 160);
    controls(&seen);
    assert!(seen.records < 15, "the bound held too much: {seen:?}");
}

/// The walk stops at its budget (every walk, and so every replay).
#[test]
fn tickets_answer_as_the_scan_when_the_walk_stops_at_its_budget() {
    let seen = run(r#""max_walk_entries": 20"#, 99_999_999, false, 120);
    assert!(seen.cut > 0);
    controls(&seen);
}

/// A new session now and then, loading the index (without its walks) from disk.
#[test]
fn tickets_answer_as_the_scan_across_sessions_that_load_the_index() {
    controls(&run("", 99_999_999, true, 160));
}

/// A replay that confirms (the count moved, no directory did) and is cut by its page
/// holds tickets only for the files it reached; the replay after
/// it, while the count stays, must still look at the files past the cut and find what a
/// change made before the count moved put in them.
#[test]
fn a_confirming_replay_cut_by_its_page_vouches_only_for_what_it_reached() {
    let repo = tempfile::tempdir().unwrap();
    let (st_on, st_off) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for f in 0..20 {
        let body = if f < 2 { NEEDLE } else { "plain words" };
        fs::write(
            repo.path().join(format!("f{f:02}.txt")),
            format!("{body}\n"),
        )
        .unwrap();
    }
    settle();
    let (on, w) = watched_session_with(repo.path(), st_on.path(), super::index::ON);
    let off = session(
        repo.path(),
        st_off.path(),
        r#"{"limits": {"max_index_bytes": 0}}"#,
    );
    let ask = |max_matches| SearchTextArgs {
        query: NEEDLE.into(),
        max_matches,
        ..Default::default()
    };
    // The walk: every file recorded and confirmed.
    let (first, _) = search(&on, ask(None));
    assert_eq!(first[0].files_matched, 2);
    // The last file gains the needle in place (its directory keeps its identity).
    let last = repo.path().join("f19.txt");
    let mut f = fs::OpenOptions::new().append(true).open(&last).unwrap();
    std::io::Write::write_all(&mut f, format!("{NEEDLE}\n").as_bytes()).unwrap();
    drop(f);
    w.changed();
    // One page of one match: the replay confirms, and stops at the second file (the
    // match past the page).
    let mut log = crate::audit::CallLog::default();
    let page = crate::tools::search::search_text(&on, &mut log, &ask(Some(1))).unwrap();
    assert!(page.truncated, "{page:?}");
    let cut = {
        let slot = on.index.lock().unwrap();
        let ix = slot.as_ref().unwrap();
        let count = w.count.load(Ordering::SeqCst);
        let tree = ix
            .quiet_tree(false, count)
            .expect("the replay kept its walk");
        (tree.tickets.len(), tree.entries.len())
    };
    // While the count stays: the whole answer, as the scan gives it.
    let (got, _) = search(&on, ask(None));
    let (want, _) = search(&off, ask(None));
    assert_eq!(want[0].files_matched, 3, "the scan finds the needle put in");
    assert_eq!(comparable(got), comparable(want));
    assert!(
        cut.0 < cut.1,
        "the cut replay holds tickets past its cut: {cut:?}"
    );
    assert!(check_tickets(&on, &w) > 0);
}
