//! `changes_since` answered from a watch's stamps ([`super::watched`]), the watch
//! simulated: a count the test moves at every step and the directories it says changed.
//! Every answer must be what a session without a watch (a scan of the whole tree) gives,
//! and the steps a scan must answer (a subdirectory made or removed, ignore rules changed)
//! must be told apart from those the stamps answer.
#![allow(clippy::unwrap_used)]

use std::fs;
use std::path::Path;
use std::sync::{Arc, Mutex};

use super::*;
use crate::fs::port::DirItem;
use crate::rules::fsx::Fs;
use crate::rules::path::LogicalPath;
use crate::rules::services::StatItem;
use crate::tests::index::Listings;

/// The simulated watch: an exact count, moved by each [`Stamps::stamp`], and the
/// directories each count stamped; with listings that carry each entry's metadata, as a
/// host with a watch lists.
#[derive(Debug)]
pub(super) struct Stamps {
    listings: Listings,
    log: Mutex<Log>,
}

/// The count, the directories stamped at each count, and the last count that stamped
/// everything.
type Log = (u64, Vec<(u64, String)>, u64);

impl Stamps {
    pub(super) fn new(root: &Path) -> Arc<Stamps> {
        Arc::new(Stamps {
            listings: Listings {
                root: root.to_path_buf(),
                plain: Default::default(),
            },
            log: Default::default(),
        })
    }

    /// A change that stamped `dirs` (`None`: everything).
    pub(super) fn stamp(&self, dirs: Option<&[&str]>) {
        let mut log = self.log.lock().unwrap();
        log.0 += 1;
        let n = log.0;
        match dirs {
            Some(dirs) => log.1.extend(dirs.iter().map(|d| (n, d.to_string()))),
            None => log.2 = n,
        }
    }
}

impl crate::rules::services::Services for Stamps {
    fn read_dir(&self, dir: &LogicalPath) -> Option<std::io::Result<Vec<DirItem>>> {
        self.listings.read_dir(dir)
    }

    fn read_dir_stat(&self, dir: &LogicalPath) -> Option<std::io::Result<Vec<StatItem>>> {
        self.listings.read_dir_stat(dir)
    }

    fn tree_changes(&self) -> Option<u64> {
        Some(self.log.lock().unwrap().0)
    }

    fn tree_changed_dirs(&self, since: u64, _start: &LogicalPath) -> Option<Vec<String>> {
        let log = self.log.lock().unwrap();
        (log.2 <= since && since <= log.0).then(|| {
            log.1
                .iter()
                .filter(|(n, _)| *n > since)
                .map(|(_, d)| d.clone())
                .collect()
        })
    }
}

pub(super) fn session(root: &Path, state: &Path, watch: Option<Arc<Stamps>>) -> Session {
    let mut fs = Fs::open(root).unwrap();
    if let Some(w) = watch {
        fs = fs.with_services(w);
    }
    let mut s = Session::new(fs, Policy::from_json("").unwrap());
    s.state_dir = Some(state.to_path_buf());
    s
}

pub(super) fn call(s: &Session, token: &mut Option<String>) -> Vec<Change> {
    call_with(s, token, ChangesSinceArgs::default()).changes
}

/// A call with `args` and the token, which the answer's token replaces.
fn call_with(
    s: &Session,
    token: &mut Option<String>,
    args: ChangesSinceArgs,
) -> ChangesSinceResult {
    let r = changes_since(
        s,
        &mut CallLog::default(),
        &ChangesSinceArgs {
            token: token.clone(),
            ..args
        },
    )
    .unwrap();
    *token = Some(r.token.clone());
    r
}

/// Calls answered from the stamps since each kept snapshot was kept by a whole walk, summed.
pub(super) fn answered(s: &Session) -> u32 {
    s.changes_live
        .lock()
        .unwrap()
        .iter()
        .map(|l| l.answered)
        .sum()
}

/// Sets a file's modification time an hour back, so that it is not racily clean.
pub(super) fn age(root: &Path, path: &str) {
    let f = fs::File::options()
        .write(true)
        .open(root.join(path))
        .unwrap();
    f.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(3600))
        .unwrap();
}

pub(super) fn write(root: &Path, path: &str, text: &str) {
    let p = root.join(path);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

/// A session with the simulated watch (`on`) and one without (`off`) over the same tree,
/// each with its first token (`a`, `b`).
pub(super) struct Pair {
    pub watch: Arc<Stamps>,
    pub on: Session,
    pub off: Session,
    pub a: Option<String>,
    pub b: Option<String>,
}

impl Pair {
    /// The pair over `root`, their state directories in `dir`.
    pub(super) fn new(dir: &Path, root: &Path) -> Pair {
        let watch = Stamps::new(root);
        let on = session(root, &dir.join("on"), Some(watch.clone()));
        let off = session(root, &dir.join("off"), None);
        let (mut a, mut b) = (None, None);
        assert_eq!(call(&on, &mut a), call(&off, &mut b));
        Pair {
            watch,
            on,
            off,
            a,
            b,
        }
    }

    /// The next call of each, with its last token.
    pub(super) fn next(&mut self) -> (ChangesSinceResult, ChangesSinceResult) {
        let args = ChangesSinceArgs::default;
        (
            call_with(&self.on, &mut self.a, args()),
            call_with(&self.off, &mut self.b, args()),
        )
    }
}

#[test]
fn stamped_directories_answer_what_a_whole_scan_does_and_the_rest_falls_back_to_one() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("repo");
    for f in [
        "a/x.txt",
        "a/y.txt",
        "a/b/z.txt",
        "a/b/readme.md",
        "c/w.txt",
        "top.txt",
        "logs/keep.txt",
    ] {
        write(&root, f, &format!("{f}\n"));
    }
    write(&root, ".gitignore", "*.log\nignored/\n");
    write(&root, "ignored/i.txt", "never walked\n");
    let watch = Stamps::new(&root);
    let on = session(&root, &t.path().join("on"), Some(watch.clone()));
    let off = session(&root, &t.path().join("off"), None);
    let (mut a, mut b) = (None, None);
    assert_eq!(call(&on, &mut a), call(&off, &mut b));
    type Step = (
        &'static str,
        Option<&'static [&'static str]>,
        bool,
        fn(&Path),
    );
    // What each step changes, the directories a watch stamps for it, and whether the
    // stamps may answer it.
    let steps: [Step; 19] = [
        ("a file rewritten", Some(&["a"]), true, |r| {
            write(r, "a/x.txt", "changed\n")
        }),
        ("a file made deep", Some(&["a/b"]), true, |r| {
            write(r, "a/b/new.txt", "new\n")
        }),
        ("a file removed", Some(&["c"]), true, |r| {
            fs::remove_file(r.join("c/w.txt")).unwrap()
        }),
        ("a file moved across", Some(&["a", "c"]), true, |r| {
            fs::rename(r.join("a/y.txt"), r.join("c/y2.txt")).unwrap()
        }),
        ("an ignored file made", Some(&[""]), true, |r| {
            write(r, "new.log", "ignored\n")
        }),
        (
            "inside an ignored directory",
            Some(&["ignored"]),
            true,
            |r| write(r, "ignored/j.txt", "never walked\n"),
        ),
        ("nothing at all", Some(&[]), true, |_| {}),
        ("a file at the root", Some(&[""]), true, |r| {
            write(r, "top.txt", "top again\n")
        }),
        // A second name: the watch stamps everything. A write through it, or its removal,
        // is reported to its own directory only, but the other's is listed again too.
        ("a second name made", None, false, |r| {
            fs::hard_link(r.join("a/x.txt"), r.join("c/hl.txt")).unwrap()
        }),
        ("written through it", Some(&["c"]), true, |r| {
            fs::OpenOptions::new()
                .append(true)
                .open(r.join("c/hl.txt"))
                .and_then(|mut f| std::io::Write::write_all(&mut f, b"more\n"))
                .unwrap()
        }),
        ("it removed", Some(&["c"]), true, |r| {
            fs::remove_file(r.join("c/hl.txt")).unwrap()
        }),
        // A scan that finds no file changed still keeps the directories it visited.
        ("an empty directory made", Some(&["c", "c/e"]), false, |r| {
            fs::create_dir(r.join("c/e")).unwrap()
        }),
        ("a file in it", Some(&["c/e"]), true, |r| {
            write(r, "c/e/f.txt", "once empty\n")
        }),
        // Rules that hide a file below, in a directory not stamped.
        ("ignore rules changed", Some(&["a"]), false, |r| {
            write(r, "a/.gitignore", "*.md\n")
        }),
        ("ignore rules hide a directory", Some(&["a"]), false, |r| {
            write(r, "a/.gitignore", "*.md\nb/\n")
        }),
        ("a directory made", Some(&["c", "c/d"]), false, |r| {
            write(r, "c/d/e.txt", "deep\n")
        }),
        ("a directory removed", Some(&["c", "c/d"]), false, |r| {
            fs::remove_dir_all(r.join("c/d")).unwrap()
        }),
        // `a/b` is ignored since the rules above changed: no walk lists it.
        (
            "an ignored directory removed",
            Some(&["a", "a/b"]),
            true,
            |r| fs::remove_dir_all(r.join("a/b")).unwrap(),
        ),
        (
            "a file replaced by a directory",
            Some(&["logs"]),
            false,
            |r| {
                fs::remove_file(r.join("logs/keep.txt")).unwrap();
                write(r, "logs/keep.txt/inner.txt", "now a directory\n");
            },
        ),
    ];
    for (what, dirs, by_stamps, change) in steps {
        change(&root);
        watch.stamp(dirs);
        let before = answered(&on);
        let (got, want) = (call(&on, &mut a), call(&off, &mut b));
        assert_eq!(got, want, "{what}");
        // A scan keeps a new snapshot, whose count starts again at 0.
        let by = answered(&on) == before + 1;
        assert_eq!(by, by_stamps, "{what}: answered from the stamps");
        // Positive controls: the stamps tell what changed, the second name's removal
        // what it did to the first.
        let told = got.iter().map(|c| c.path.as_str()).collect::<Vec<_>>();
        match what {
            "a file rewritten" => assert_eq!(told, ["a/x.txt"]),
            "it removed" => assert_eq!(told, ["a/x.txt", "c/hl.txt"]),
            _ => {}
        }
    }
}

#[test]
fn a_directory_not_stamped_is_carried_over_as_it_was() {
    // The stamps are trusted: a change the watch did not report is not seen, which is why
    // only a host whose watch reports every change offers them (the host's tests check
    // its watch against sessions without one). This shows that the records of a
    // directory not stamped are carried over, not looked at again.
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("repo");
    write(&root, "a/x.txt", "one\n");
    write(&root, "b/y.txt", "two\n");
    age(&root, "a/x.txt");
    let watch = Stamps::new(&root);
    let on = session(&root, &t.path().join("on"), Some(watch.clone()));
    let mut token = None;
    call(&on, &mut token);
    write(&root, "a/x.txt", "one, changed\n");
    write(&root, "b/y.txt", "two, changed\n");
    watch.stamp(Some(&["b"]));
    let got = call(&on, &mut token);
    assert_eq!(
        got.iter().map(|c| c.path.as_str()).collect::<Vec<_>>(),
        ["b/y.txt"]
    );
}

/// Changes a second name of an ignore file or of a link makes are reported to that name's
/// directory only: the directory holding the first name is walked again at every call.
#[test]
fn second_names_of_ignore_files_and_links_are_seen_through() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("repo");
    write(&root, "d/notes.txt", "notes\n");
    write(&root, "d/.gitignore", "*.log\n");
    write(&root, ".cache/keep", "hidden\n");
    write(&root, "e/n.txt", "n\n");
    std::os::unix::fs::symlink("n.txt", root.join("e/l")).unwrap();
    let watch = Stamps::new(&root);
    let on = session(&root, &t.path().join("on"), Some(watch.clone()));
    let off = session(&root, &t.path().join("off"), None);
    let (mut a, mut b) = (None, None);
    assert_eq!(call(&on, &mut a), call(&off, &mut b));
    // Second names in a hidden directory (the watch stamps everything for each).
    fs::hard_link(root.join("d/.gitignore"), root.join(".cache/gi")).unwrap();
    fs::hard_link(root.join("e/l"), root.join(".cache/l")).unwrap();
    watch.stamp(None);
    assert_eq!(call(&on, &mut a), call(&off, &mut b));
    // Rules written through the other name: `d` is walked again, finds its rules changed,
    // and a whole scan answers.
    fs::OpenOptions::new()
        .append(true)
        .open(root.join(".cache/gi"))
        .and_then(|mut f| std::io::Write::write_all(&mut f, b"notes.txt\n"))
        .unwrap();
    watch.stamp(Some(&[".cache"]));
    let got = call(&on, &mut a);
    assert_eq!(got, call(&off, &mut b));
    assert_eq!(
        got.iter().map(|c| c.path.as_str()).collect::<Vec<_>>(),
        ["d/notes.txt"]
    );
    assert_eq!(answered(&on), 0, "a whole scan answered (a new snapshot)");
    // The link's times moved through its other name.
    let touched = std::process::Command::new("touch")
        .args(["-h", "-d", "2001-02-03 04:05:06"])
        .arg(root.join(".cache/l"))
        .status()
        .unwrap();
    assert!(touched.success());
    watch.stamp(Some(&[".cache"]));
    let got = call(&on, &mut a);
    assert_eq!(got, call(&off, &mut b));
    assert_eq!(
        got.iter().map(|c| c.path.as_str()).collect::<Vec<_>>(),
        ["e/l"]
    );
    assert_eq!(answered(&on), 1, "the stamps answered");
}

/// Below a start directory, a change above it (rules, a build file beside it) is not the
/// stamps' to answer; and a spelling of the start the watch does not follow gets no stamps.
#[test]
fn a_walk_below_a_start_falls_back_when_a_directory_above_it_changes() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("repo");
    write(&root, "proj/target/out/o.txt", "output\n");
    write(&root, "proj/target/note.txt", "note\n");
    write(&root, "sub/notes.txt", "notes\n");
    let watch = Stamps::new(&root);
    let on = session(&root, &t.path().join("on"), Some(watch.clone()));
    let off = session(&root, &t.path().join("off"), None);
    for (start, change, stamped) in [
        (
            "sub",
            (|r: &Path| write(r, ".gitignore", "sub/notes.txt\n")) as fn(&Path),
            "",
        ),
        (
            "proj/target",
            |r| write(r, "proj/Cargo.toml", "[package]\n"),
            "proj",
        ),
    ] {
        let args = || ChangesSinceArgs {
            path: Some(start.to_string()),
            ..Default::default()
        };
        let (mut a, mut b) = (None, None);
        call_with(&on, &mut a, args());
        call_with(&off, &mut b, args());
        change(&root);
        watch.stamp(Some(&[stamped]));
        let got = call_with(&on, &mut a, args()).changes;
        assert_eq!(got, call_with(&off, &mut b, args()).changes, "{start}");
        if start == "sub" {
            assert!(!got.is_empty(), "positive control: {start}");
        }
    }
}

/// Each page's token names the snapshot the first page took, at the count read then: a
/// change made between the pages is reported by the next call.
#[test]
fn a_change_between_pages_is_reported_by_the_next_call() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("repo");
    write(&root, "d/x.txt", "x\n");
    write(&root, "e/y.txt", "y\n");
    let watch = Stamps::new(&root);
    let on = session(&root, &t.path().join("on"), Some(watch.clone()));
    let mut first = None;
    call(&on, &mut first);
    for n in ["a.txt", "b.txt"] {
        write(&root, n, "new\n");
    }
    watch.stamp(Some(&[""]));
    let page = |cursor: Option<String>| {
        let mut token = first.clone();
        call_with(
            &on,
            &mut token,
            ChangesSinceArgs {
                max_changes: Some(1),
                cursor,
                ..Default::default()
            },
        )
    };
    let one = page(None);
    assert_eq!(one.changes.len(), 1);
    write(&root, "d/x.txt", "x, rewritten between the pages\n");
    watch.stamp(Some(&["d"]));
    let two = page(one.next_cursor.clone());
    assert_eq!(two.changes.len(), 1);
    assert!(two.next_cursor.is_none());
    write(&root, "e/y.txt", "y, rewritten later\n");
    watch.stamp(Some(&["e"]));
    let mut token = Some(two.token);
    let got = call(&on, &mut token);
    assert_eq!(
        got.iter().map(|c| c.path.as_str()).collect::<Vec<_>>(),
        ["d/x.txt", "e/y.txt"]
    );
}

/// A file written within the timestamp step of the snapshot is read again by the next
/// call, as a whole scan reads it, whether or not the watch stamped its directory: what a
/// call reads does not tell where hidden entries changed.
#[test]
fn a_racily_clean_file_is_read_again_wherever_the_stamps_fall() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("repo");
    write(&root, "d/old.txt", "old\n");
    write(&root, ".cache/keep", "hidden\n");
    age(&root, "d/old.txt");
    let mut p = Pair::new(t.path(), &root);
    write(&root, "d/probe.txt", "probe\n");
    p.watch.stamp(Some(&["d"]));
    let (x, y) = p.next();
    assert_eq!(x.changes, y.changes);
    // A hidden change only: the probe is still within the step of the last snapshot.
    write(&root, ".cache/keep", "hidden, changed\n");
    p.watch.stamp(Some(&[".cache"]));
    let (x, y) = p.next();
    assert_eq!(x.changes, y.changes);
    assert_eq!(x.rehashed, y.rehashed, "the same files read again");
    assert_eq!(y.rehashed, 1, "positive control: the probe is racily clean");
}

/// The same for a file a whole scan found racily clean: the next call, answered from the
/// stamps, reads it again though no stamp fell in its directory.
#[test]
fn a_racily_clean_file_a_whole_scan_took_is_read_again_by_the_stamps() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("repo");
    write(&root, "d/fresh.txt", "fresh\n");
    write(&root, ".cache/keep", "hidden\n");
    let mut p = Pair::new(t.path(), &root);
    write(&root, ".cache/keep", "hidden, changed\n");
    p.watch.stamp(Some(&[".cache"]));
    let (x, y) = p.next();
    assert_eq!(answered(&p.on), 1, "answered from the stamps");
    assert_eq!(x.changes, y.changes);
    assert_eq!(x.rehashed, y.rehashed, "the same files read again");
    assert_eq!(y.rehashed, 1, "positive control: the file is racily clean");
}

/// A file whose modification time lies ahead of the clock stays racily clean: a whole scan
/// reads it at every call, so a call whose watch saw no change reads it too (what a call
/// reads, and whether its token is new, must not tell whether hidden entries changed).
#[test]
fn a_file_racily_clean_for_good_is_read_again_though_the_watch_saw_nothing() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("repo");
    write(&root, "d/ahead.txt", "ahead\n");
    let ahead = std::time::SystemTime::now() + std::time::Duration::from_secs(3600);
    fs::File::options()
        .write(true)
        .open(root.join("d/ahead.txt"))
        .and_then(|f| f.set_modified(ahead))
        .unwrap();
    let mut p = Pair::new(t.path(), &root);
    for _ in 0..2 {
        let (before_a, before_b) = (p.a.clone(), p.b.clone());
        let (x, y) = p.next();
        assert_eq!(x.changes, y.changes);
        assert_eq!(x.rehashed, y.rehashed, "the same files read again");
        assert_eq!(y.rehashed, 1, "positive control: the file is racily clean");
        assert_eq!(p.a != before_a, p.b != before_b, "a new token alike");
    }
}

/// A call whose new snapshot cannot be stored fails, and the session keeps nothing of it:
/// the next call with the same token still reports every change.
#[test]
fn a_snapshot_that_cannot_be_stored_loses_no_change() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("repo");
    for i in 0..16 {
        let p = format!("d/f{i:02}.txt");
        write(&root, &p, "one\n");
        age(&root, &p);
    }
    let mut p = Pair::new(t.path(), &root);
    write(&root, "d/f03.txt", "two\n");
    p.watch.stamp(Some(&["d"]));
    // The store's directory replaced by a file: nothing can be written there.
    let state = t.path().join("on");
    let changes = state.join("changes");
    fs::rename(&changes, state.join("away")).unwrap();
    fs::write(&changes, "not a directory").unwrap();
    let args = ChangesSinceArgs {
        token: p.a.clone(),
        ..Default::default()
    };
    let e = changes_since(&p.on, &mut CallLog::default(), &args).unwrap_err();
    assert_eq!(e.code, crate::error::ErrorCode::IoError, "{}", e.message);
    fs::remove_file(&changes).unwrap();
    fs::rename(state.join("away"), &changes).unwrap();
    let (x, y) = p.next();
    assert_eq!(x.changes, y.changes);
    assert_eq!(
        x.changes
            .iter()
            .map(|c| c.path.as_str())
            .collect::<Vec<_>>(),
        ["d/f03.txt"]
    );
}

/// Two chains of tokens in one session (an agent's own, and in the MCP server's session the
/// watch of its resource subscriptions) keep a snapshot each: a call of either chain is
/// answered from the stamps, not pushed back to a whole scan by the other's calls.
#[test]
fn two_chains_of_tokens_are_both_answered_from_the_stamps() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("repo");
    for f in ["d/x.txt", "e/y.txt"] {
        write(&root, f, "one\n");
        age(&root, f);
    }
    let mut p = Pair::new(t.path(), &root);
    let (mut a2, mut b2) = (None, None);
    assert_eq!(call(&p.on, &mut a2), call(&p.off, &mut b2));
    for step in 0..3 {
        write(&root, "d/x.txt", &format!("step {step}\n"));
        p.watch.stamp(Some(&["d"]));
        let before = answered(&p.on);
        let (x, y) = p.next();
        assert_eq!(x.changes, y.changes, "{step}");
        assert_eq!(x.changes.len(), 1, "positive control: {step}");
        assert_eq!(call(&p.on, &mut a2), call(&p.off, &mut b2), "{step}");
        assert_eq!(answered(&p.on), before + 2, "both from the stamps: {step}");
    }
    // A third chain pushes out one: the session keeps no more than its bound.
    assert_eq!(p.on.changes_live.lock().unwrap().len(), watched::KEPT);
    call(&p.on, &mut None);
    assert_eq!(p.on.changes_live.lock().unwrap().len(), watched::KEPT);
}

/// A session that reads a token's snapshot back from the store and finds the tree as it
/// was keeps the snapshot's bytes as read, not a copy of its records. Its next call
/// decodes them and answers from the watch's stamps, as the session that made the token
/// would.
#[test]
fn a_snapshot_read_back_unchanged_is_kept_as_read_then_answers_from_the_stamps() {
    let dir = tempfile::tempdir().unwrap();
    let (root, state) = (dir.path().join("repo"), dir.path().join("state"));
    for f in ["d0/a.txt", "d0/b.txt", "d1/c.txt"] {
        write(&root, f, f);
        age(&root, f);
    }
    let watch = Stamps::new(&root);
    let maker = session(&root, &state, Some(watch.clone()));
    let mut token = None;
    call(&maker, &mut token);
    let first = token.clone();
    // Another session on the same state directory and watch: nothing held, so the count
    // moved (by a stamp of nothing visible) sends it to read the snapshot back.
    let s = session(&root, &state, Some(watch.clone())).with_cursor_key(maker.cursor_key.clone());
    watch.stamp(Some(&["d1"]));
    assert!(call(&s, &mut token).is_empty());
    assert!(s.changes_live.lock().unwrap()[0].read_back());
    write(&root, "d0/a.txt", "changed\n");
    watch.stamp(Some(&["d0"]));
    let changes = call(&s, &mut token);
    let paths: Vec<&str> = changes.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(paths, ["d0/a.txt"]);
    assert_eq!(answered(&s), 1, "answered from the stamps");
    assert!(!s.changes_live.lock().unwrap()[0].read_back());
    // A whole scan from the first token finds the same.
    let off = session(&root, &state, None).with_cursor_key(maker.cursor_key.clone());
    let mut token = first;
    let scanned = call(&off, &mut token);
    assert_eq!(scanned, changes);
}
