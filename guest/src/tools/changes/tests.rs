#![allow(clippy::unwrap_used)]

use std::fs;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use super::record::Recorder;
use super::scan::{scan, shown, ScanStats, RACY_NS};
use super::snapshot::Shown;
use super::*;
use crate::rules::fsx::Fs;
use crate::rules::path::LogicalPath;
use crate::rules::walk::{walk_with, Flow, Skips};

fn session(root: &Path, policy: &str) -> Session {
    Session::new(Fs::open(root).unwrap(), Policy::from_json(policy).unwrap())
}

/// Sets a file's modification time an hour back, so that it is not racily clean.
fn age(path: &Path) {
    let f = fs::File::options().write(true).open(path).unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(3600))
        .unwrap();
}

fn call(s: &Session, token: Option<&str>) -> ChangesSinceResult {
    changes_since(
        s,
        &mut CallLog::default(),
        &ChangesSinceArgs {
            token: token.map(str::to_string),
            ..Default::default()
        },
    )
    .unwrap()
}

fn seen(r: &ChangesSinceResult) -> Vec<(String, ChangeKind)> {
    r.changes
        .iter()
        .map(|c| (c.path.clone(), c.change))
        .collect()
}

/// The walk options of a whole scan: hidden files left out, ignore rules on.
fn whole(with_stat: bool) -> WalkOptions {
    WalkOptions {
        include_hidden: false,
        respect_ignore: true,
        max_depth: usize::MAX,
        shard: None,
        with_stat,
    }
}

/// A recorder fed every file a whole walk of the repository shows, not yet finished.
fn walked<'o>(s: &Session, old: Option<&'o Snapshot>) -> Recorder<'o, String> {
    let mut recorder = Recorder::new(old);
    let root = LogicalPath::root();
    let mut skips = Skips::default();
    walk_with(
        &s.fs,
        &s.policy,
        &root,
        &whole(true),
        &mut skips,
        None,
        |e| {
            if let Some(file) = shown(e) {
                recorder.take(s, file);
            }
            Flow::Continue
        },
    )
    .unwrap();
    recorder
}

#[test]
fn only_visible_changes_are_reported() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path();
    for d in ["src", "private", "build"] {
        fs::create_dir(root.join(d)).unwrap();
    }
    fs::write(root.join(".gitignore"), "build/\n").unwrap();
    for f in [
        "src/a.rs",
        "src/b.rs",
        "src/gone.rs",
        "src/old.rs",
        "private/p.txt",
        "build/o.txt",
        ".env",
    ] {
        fs::write(root.join(f), format!("{f}\n")).unwrap();
    }
    let s = session(root, r#"{"read": {"block": ["private/**"]}}"#);
    let first = call(&s, None);
    assert!(first.changes.is_empty());
    fs::write(root.join("src/a.rs"), "changed\n").unwrap();
    fs::remove_file(root.join("src/gone.rs")).unwrap();
    fs::rename(root.join("src/old.rs"), root.join("src/new.rs")).unwrap();
    fs::write(root.join("src/c.rs"), "new\n").unwrap();
    // Beside each visible change, one under a blocked, an ignored and a secret path.
    fs::write(root.join("private/p.txt"), "changed\n").unwrap();
    fs::write(root.join("private/q.txt"), "new\n").unwrap();
    fs::write(root.join("build/o.txt"), "changed\n").unwrap();
    fs::write(root.join(".env"), "TOKEN=changed\n").unwrap();
    let r = call(&s, Some(&first.token));
    assert_eq!(
        seen(&r),
        vec![
            ("src/a.rs".to_string(), ChangeKind::Modified),
            ("src/c.rs".to_string(), ChangeKind::Created),
            ("src/gone.rs".to_string(), ChangeKind::Deleted),
            ("src/new.rs".to_string(), ChangeKind::Created),
            ("src/old.rs".to_string(), ChangeKind::Deleted),
        ]
    );
    let a = &r.changes[0];
    assert_eq!(a.size, Some(8));
    assert_eq!(
        a.sha256.as_deref(),
        Some(crate::fs::hash::sha256_hex(b"changed\n").as_str())
    );
    assert_eq!((r.created, r.modified, r.deleted), (2, 1, 2));
    let text = serde_json::to_string(&r).unwrap();
    assert!(
        !text.contains("private") && !text.contains("o.txt"),
        "{text}"
    );
    // The new token sees nothing more.
    assert!(call(&s, Some(&r.token)).changes.is_empty());
}

#[test]
fn a_secret_shows_its_name_coming_and_going_but_never_a_modification() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path();
    fs::write(root.join("id_rsa"), "key one\n").unwrap();
    fs::write(root.join("notes.txt"), "plain\n").unwrap();
    let s = session(root, "{}");
    let first = call(&s, None);
    fs::write(root.join("id_rsa"), "key two, longer\n").unwrap();
    // Content that looks like a secret, in a file whose name does not say so.
    fs::write(
        root.join("notes.txt"),
        "-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----\n",
    )
    .unwrap();
    fs::write(root.join("server.pem"), "new secret\n").unwrap();
    let r = call(&s, Some(&first.token));
    // notes.txt turned into a secret: modified, with neither size nor hash.
    let notes = r.changes.iter().find(|c| c.path == "notes.txt").unwrap();
    assert_eq!((notes.size, &notes.sha256), (None, &None));
    assert!(
        !r.changes.iter().any(|c| c.path == "id_rsa"),
        "{:?}",
        r.changes
    );
    let pem = r.changes.iter().find(|c| c.path == "server.pem").unwrap();
    assert_eq!(
        (pem.change, pem.size, &pem.sha256),
        (ChangeKind::Created, None, &None)
    );
    // Modified again while still a secret: not told.
    fs::write(
        root.join("notes.txt"),
        "-----BEGIN OPENSSH PRIVATE KEY-----\nabcdef\n-----END OPENSSH PRIVATE KEY-----\n",
    )
    .unwrap();
    let quiet = call(&s, Some(&r.token));
    assert!(quiet.changes.is_empty());
    // Not even the count of files read, or a new token, tells that it moved.
    assert_eq!(quiet.rehashed, 0);
    assert_eq!(quiet.token, r.token);
}

#[test]
fn an_unchanged_tree_hashes_nothing_and_keeps_its_token() {
    let t = tempfile::tempdir().unwrap();
    for i in 0..20 {
        let p = t.path().join(format!("f{i}.txt"));
        fs::write(&p, format!("{i}\n")).unwrap();
        age(&p);
    }
    let s = session(t.path(), "{}");
    let first = call(&s, None);
    assert_eq!(first.rehashed, 20);
    let again = call(&s, Some(&first.token));
    assert_eq!((again.rehashed, again.changes.len()), (0, 0));
    assert_eq!(again.token, first.token);
    // A touch moves the time, not the content: hashed again, not reported.
    fs::File::options()
        .write(true)
        .open(t.path().join("f3.txt"))
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_secs(60))
        .unwrap();
    let touched = call(&s, Some(&first.token));
    assert_eq!((touched.rehashed, touched.changes.len()), (1, 0));
}

/// Names that sort before `/` beside a directory of the same stem: the walk visits `a/`'s
/// files before `a-b`, the snapshot keeps byte order, and the two must still meet.
#[test]
fn names_sorting_before_a_slash_meet_their_earlier_records() {
    let t = tempfile::tempdir().unwrap();
    fs::create_dir_all(t.path().join("a/b")).unwrap();
    let files = ["a/x", "a/b/y", "a-b", "a.c", "a0", "a b"];
    for f in files {
        let p = t.path().join(f);
        fs::write(&p, format!("{f}\n")).unwrap();
        age(&p);
    }
    let s = session(t.path(), "{}");
    let first = call(&s, None);
    assert_eq!(first.rehashed, files.len() as u32);
    let again = call(&s, Some(&first.token));
    assert_eq!((again.rehashed, again.changes.len()), (0, 0));
    assert_eq!(again.token, first.token);
    fs::write(t.path().join("a/x"), "changed\n").unwrap();
    let edited = call(&s, Some(&first.token));
    assert_eq!(
        seen(&edited),
        vec![("a/x".to_string(), ChangeKind::Modified)]
    );
    assert_eq!(edited.rehashed, 1);
    // The walk's listing with and without metadata gives the same snapshot.
    let root = crate::rules::path::LogicalPath::root();
    let (listed, _) = scan::<String>(&s, &root, &whole(true), None, None).unwrap();
    let (looked, _) = scan::<String>(&s, &root, &whole(false), None, None).unwrap();
    let paths = |snap: &Snapshot| {
        snap.files
            .iter()
            .map(|(p, _)| p.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(paths(&listed), ["a b", "a-b", "a.c", "a/b/y", "a/x", "a0"]);
    assert_eq!(paths(&looked), paths(&listed));
    // Recorded as the walk goes against the earlier snapshot: each file met its earlier
    // record (only `a/x`, written within a timestamp tick of it, is read again), and the
    // records still come in path order.
    let (rescanned, stats) = scan(&s, &root, &whole(true), Some(&listed), None).unwrap();
    assert_eq!(paths(&rescanned), paths(&listed));
    assert_eq!((stats.hashed, stats.same_as_old), (1, true));
}

#[test]
fn a_racily_clean_file_is_hashed_again() {
    let t = tempfile::tempdir().unwrap();
    let p = t.path().join("f.txt");
    fs::write(&p, "one\n").unwrap();
    let s = session(t.path(), "{}");
    let opts = whole(false);
    let root = crate::rules::path::LogicalPath::root();
    let (mut snap, _) = scan::<String>(&s, &root, &opts, None, None).unwrap();
    // The same metadata with other content, as a write in the snapshot's own timestamp
    // tick would leave it.
    let (_, rec) = snap.files.iter_mut().find(|(p, _)| p == "f.txt").unwrap();
    rec.sha256 = snapshot::Sha256::parse(&crate::fs::hash::sha256_hex(b"two\n"));
    let mtime = rec.mtime.unwrap();
    snap.taken = mtime + RACY_NS / 2;
    let (new, stats) = scan(&s, &root, &opts, Some(&snap), None).unwrap();
    assert_eq!(stats.hashed, 1);
    assert_eq!(snapshot::diff(&snap, &new).len(), 1);
    // Taken well after the file's time: its metadata is trusted.
    snap.taken = mtime + 3 * RACY_NS;
    let (_, stats) = scan(&s, &root, &opts, Some(&snap), None).unwrap();
    assert_eq!(stats.hashed, 0);
}

#[test]
fn tokens_from_elsewhere_are_refused() {
    let t = tempfile::tempdir().unwrap();
    let u = tempfile::tempdir().unwrap();
    fs::write(t.path().join("a.txt"), "a\n").unwrap();
    let key = crate::tools::cursor::CursorKey::new([5; 32]);
    let s = session(t.path(), "{}").with_cursor_key(key.clone());
    let other_repo = session(u.path(), "{}").with_cursor_key(key.clone());
    let other_policy = session(t.path(), r#"{"allow_hardlinks": true}"#).with_cursor_key(key);
    let token = call(&s, None).token;
    let refuse = |s: &Session, tok: &str, a: ChangesSinceArgs| {
        changes_since(
            s,
            &mut CallLog::default(),
            &ChangesSinceArgs {
                token: Some(tok.into()),
                ..a
            },
        )
        .unwrap_err()
    };
    let e = refuse(&other_repo, &token, Default::default());
    assert_eq!(e.reason.as_deref(), Some("token"));
    assert!(e.message.contains("another repository"), "{}", e.message);
    let e = refuse(&other_policy, &token, Default::default());
    assert_eq!(e.reason.as_deref(), Some("token"));
    let hidden = ChangesSinceArgs {
        include_hidden: Some(true),
        ..Default::default()
    };
    assert_eq!(refuse(&s, &token, hidden).reason.as_deref(), Some("token"));
    let mut forged = token.clone();
    forged.replace_range(10..12, "00");
    assert_eq!(
        refuse(&s, &forged, Default::default()).reason.as_deref(),
        Some("token")
    );
    // The positive control: the token itself works in its own session.
    assert!(call(&s, Some(&token)).changes.is_empty());
    // Without a state directory the refusal says why a token may not last.
    assert!(e_no_state(&other_repo, &token).contains("no state directory"));
    let state = tempfile::tempdir().unwrap();
    let kept = session(u.path(), "{}").with_state_dir(state.path());
    assert!(!e_no_state(&kept, &token).contains("no state directory"));
}

fn e_no_state(s: &Session, token: &str) -> String {
    changes_since(
        s,
        &mut CallLog::default(),
        &ChangesSinceArgs {
            token: Some(token.into()),
            ..Default::default()
        },
    )
    .unwrap_err()
    .message
}

#[test]
fn pages_add_up_to_the_whole_difference() {
    let t = tempfile::tempdir().unwrap();
    let s = session(t.path(), "{}");
    let first = call(&s, None);
    for i in 0..23 {
        fs::write(t.path().join(format!("f{i:02}.txt")), "x\n").unwrap();
    }
    let page = |cursor: Option<String>| {
        changes_since(
            &s,
            &mut CallLog::default(),
            &ChangesSinceArgs {
                token: Some(first.token.clone()),
                max_changes: Some(5),
                cursor,
                ..Default::default()
            },
        )
        .unwrap()
    };
    let mut all = Vec::new();
    let mut cursor = None;
    let mut pages = 0;
    loop {
        let r = page(cursor);
        pages += 1;
        assert_eq!(r.created, 23);
        all.extend(r.changes.iter().map(|c| c.path.clone()));
        match r.next_cursor {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    assert_eq!(pages, 5);
    let want: Vec<String> = (0..23).map(|i| format!("f{i:02}.txt")).collect();
    assert_eq!(all, want);
}

#[test]
fn a_hard_link_or_a_fifo_tells_nothing_of_what_it_leads_to() {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("repo");
    fs::create_dir(&repo).unwrap();
    let outside = t.path().join("outside.txt");
    fs::write(&outside, "outside one\n").unwrap();
    fs::write(repo.join("plain.txt"), "plain\n").unwrap();
    let s = session(&repo, "{}");
    let first = call(&s, None);
    fs::hard_link(&outside, repo.join("link.txt")).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(repo.join("pipe"))
        .status()
        .unwrap();
    assert!(made.success());
    let r = call(&s, Some(&first.token));
    // The hard link appears by name only; the FIFO not at all (and is never opened).
    assert_eq!(
        seen(&r),
        vec![("link.txt".to_string(), ChangeKind::Created)]
    );
    assert_eq!((r.changes[0].size, &r.changes[0].sha256), (None, &None));
    // The outside file changes through its other name: not told. The plain file beside
    // it, changed too, is (the positive control).
    fs::write(&outside, "outside two, longer\n").unwrap();
    fs::write(repo.join("plain.txt"), "plain, changed\n").unwrap();
    let again = call(&s, Some(&r.token));
    assert_eq!(
        seen(&again),
        vec![("plain.txt".to_string(), ChangeKind::Modified)]
    );
}

/// A snapshot whose walk memo is refused whole (bound to another build of the rules, as
/// a token kept across an upgrade is, or damaged) does not stay the unchanged tree's: the
/// call stores a new one with its own walk's memo, so that the next call reuses verdicts
/// again. The answer still reports nothing, and a snapshot with a usable memo keeps its
/// name (the control).
#[test]
fn a_refused_memo_is_replaced_even_where_nothing_changed() {
    let t = tempfile::tempdir().unwrap();
    fs::write(t.path().join(".gitignore"), "*.log\n").unwrap();
    for name in ["a.rs", "b.rs", "c.log"] {
        let p = t.path().join(name);
        fs::write(&p, name).unwrap();
        age(&p);
    }
    let s = session(t.path(), "{}");
    call(&s, None);
    let name = s.changes_live.lock().unwrap()[0].name.clone();
    let store = Store::new(s.state_dir.as_deref(), &s.changes_memory, s.fs.services());
    let first = store.load(&name).unwrap();
    let damaged = store
        .put(Arc::new(first.snapshot().unwrap().encode(b"no memo")))
        .unwrap();
    assert_ne!(damaged, name);
    let start = LogicalPath::root();
    let opts = whole(true);
    let scope = serde_json::to_string(&Scope {
        path: "",
        include_hidden: false,
        respect_ignore: true,
    })
    .unwrap();
    let (to, found) = rescan(
        &s,
        &store,
        (Some(&damaged), scan::now_ns()),
        &start,
        &opts,
        &scope,
    )
    .unwrap();
    assert_eq!(found.changes.map(|c| c.len()), Some(0));
    assert_ne!(to, damaged, "a snapshot with a refused memo was kept");
    assert_eq!(store.load(&to).unwrap().memo(), first.memo());
    let (again, _) = rescan(
        &s,
        &store,
        (Some(&to), scan::now_ns()),
        &start,
        &opts,
        &scope,
    )
    .unwrap();
    assert_eq!(again, to);
}

/// A file whose metadata answers is recorded as the walk shows it; one whose content is to
/// be read is read only when the recorder finishes (the scan finishes it once the walk is
/// known to fit its bound, so a tree past the bound costs no reads).
#[test]
fn contents_are_read_when_the_recorder_finishes() {
    let t = tempfile::tempdir().unwrap();
    for f in ["kept.txt", "read.txt"] {
        fs::write(t.path().join(f), format!("{f}\n")).unwrap();
        age(&t.path().join(f));
    }
    let s = session(t.path(), "{}");
    let root = LogicalPath::root();
    let (earlier, _) = scan::<String>(&s, &root, &whole(true), None, None).unwrap();
    fs::write(t.path().join("read.txt"), "other\n").unwrap();
    let recorder = walked(&s, Some(&earlier));
    // Both go after the walk: the one answered by its metadata was recorded already, the
    // other is not read until now, and is gone.
    fs::remove_file(t.path().join("kept.txt")).unwrap();
    fs::remove_file(t.path().join("read.txt")).unwrap();
    let mut stats = ScanStats::default();
    let files = recorder.finish(&s, &mut stats);
    let paths: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(paths, ["kept.txt"]);
    assert_eq!(stats.hashed, 0);
}

/// Where the component reads through the port (a host without batched reads), a file
/// replaced between the walk's look and its read by another name of a file outside is
/// recorded by name only: what the outside file holds is neither hashed nor counted.
#[test]
fn a_file_swapped_for_a_hard_link_before_its_read_is_recorded_by_name_only() {
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("credentials"), "outside\n").unwrap();
    for swap in [false, true] {
        let t = tempfile::tempdir().unwrap();
        fs::write(t.path().join("x.txt"), "x\n").unwrap();
        let s = session(t.path(), "{}");
        let recorder = walked(&s, None);
        if swap {
            let link = t.path().join("link");
            fs::hard_link(outside.path().join("credentials"), &link).unwrap();
            fs::rename(&link, t.path().join("x.txt")).unwrap();
        }
        let mut stats = ScanStats::default();
        let files = recorder.finish(&s, &mut stats);
        assert_eq!(files.len(), 1, "swap {swap}");
        let rec = files[0].1;
        if swap {
            assert_eq!(
                (rec.shown, rec.sha256, stats.hashed, stats.bytes),
                (Shown::Name, None, 0, 0)
            );
        } else {
            // The control: the same file left alone is read and hashed.
            assert_eq!((rec.shown, stats.hashed), (Shown::Content, 1));
        }
    }
}
