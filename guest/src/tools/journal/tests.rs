//! Recovery of records a killed call left, natively: forward when committed, back when
//! not, only under the lock, and never through a link.
#![allow(clippy::unwrap_used)]

use std::fs;

use super::*;
use crate::fs::hash::sha256_hex;
use crate::rules::fsx::Fs;
use crate::rules::policy::Policy;

struct Fixture {
    _t: tempfile::TempDir,
    repo: PathBuf,
    state: PathBuf,
}

fn fixture() -> Fixture {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("repo");
    let state = t.path().join("state");
    fs::create_dir_all(repo.join("d")).unwrap();
    fs::create_dir_all(&state).unwrap();
    fs::write(repo.join("d/a.txt"), "old a\n").unwrap();
    fs::write(repo.join("d/b.txt"), "old b\n").unwrap();
    fs::write(repo.join("gone.txt"), "old gone\n").unwrap();
    Fixture { repo, state, _t: t }
}

fn session(f: &Fixture) -> Session {
    Session::new(Fs::open(&f.repo).unwrap(), Policy::from_json("").unwrap())
        .with_state_dir(&f.state)
}

fn step(dir: &str, name: &str, temp: &str, old: Option<&str>, new: Option<&str>) -> Step {
    Step {
        dir: dir.into(),
        name: name.into(),
        temp: temp.into(),
        old: old.map(|o| sha256_hex(o.as_bytes())),
        new: new.map(|n| sha256_hex(n.as_bytes())),
    }
}

/// A record left as a killed call leaves it: renamed to `state`, temporary files written.
fn leave(f: &Fixture, steps: Vec<Step>, state: &str, temps: &[(&str, &str)]) {
    let j = Journal::begin(&f.state, steps).unwrap();
    for (path, content) in temps {
        fs::write(f.repo.join(path), content).unwrap();
    }
    if state != OPEN {
        fs::rename(j.path(OPEN), j.path(state)).unwrap();
    }
}

fn read(f: &Fixture, p: &str) -> String {
    fs::read_to_string(f.repo.join(p)).unwrap_or_else(|_| "<absent>".into())
}

fn records(f: &Fixture) -> usize {
    fs::read_dir(f.state.join(TXN_DIR))
        .map(|d| d.count())
        .unwrap_or(0)
}

fn two_file_change() -> Vec<Step> {
    vec![
        step(
            "d",
            "a.txt",
            ".a.txt.ft-tmp-1",
            Some("old a\n"),
            Some("new a\n"),
        ),
        step(
            "d",
            "b.txt",
            ".b.txt.ft-tmp-2",
            Some("old b\n"),
            Some("new b\n"),
        ),
        step(
            "",
            "gone.txt",
            ".gone.txt.ft-tmp-3",
            Some("old gone\n"),
            None,
        ),
    ]
}

#[test]
fn a_committed_record_is_rolled_forward() {
    let f = fixture();
    // Killed after the first rename: a.txt is new, b.txt's temporary file waits.
    fs::write(f.repo.join("d/a.txt"), "new a\n").unwrap();
    leave(
        &f,
        two_file_change(),
        COMMIT,
        &[("d/.b.txt.ft-tmp-2", "new b\n")],
    );
    recover(&session(&f), true);
    assert_eq!(read(&f, "d/a.txt"), "new a\n");
    assert_eq!(read(&f, "d/b.txt"), "new b\n");
    assert_eq!(read(&f, "gone.txt"), "<absent>");
    assert!(!f.repo.join("d/.b.txt.ft-tmp-2").exists());
    assert_eq!(records(&f), 0);
}

#[test]
fn an_open_record_is_rolled_back() {
    let f = fixture();
    leave(
        &f,
        two_file_change(),
        OPEN,
        &[
            ("d/.a.txt.ft-tmp-1", "new a\n"),
            ("d/.b.txt.ft-tmp-2", "new"),
        ],
    );
    recover(&session(&f), true);
    assert_eq!(read(&f, "d/a.txt"), "old a\n");
    assert_eq!(read(&f, "d/b.txt"), "old b\n");
    assert_eq!(read(&f, "gone.txt"), "old gone\n");
    assert!(crate::rules::path::is_temp_name(".a.txt.ft-tmp-1"));
    assert_eq!(fs::read_dir(f.repo.join("d")).unwrap().count(), 2);
    assert_eq!(records(&f), 0);
}

#[test]
fn a_roll_forward_keeps_what_another_writer_put_there_and_drops_an_incomplete_temp() {
    let f = fixture();
    fs::write(f.repo.join("d/a.txt"), "someone else\n").unwrap();
    leave(
        &f,
        two_file_change(),
        COMMIT,
        &[
            ("d/.a.txt.ft-tmp-1", "new a\n"),
            ("d/.b.txt.ft-tmp-2", "new"),
        ],
    );
    recover(&session(&f), true);
    assert_eq!(read(&f, "d/a.txt"), "someone else\n");
    assert_eq!(read(&f, "d/b.txt"), "old b\n");
    assert_eq!(fs::read_dir(f.repo.join("d")).unwrap().count(), 2);
}

#[test]
fn only_the_lock_holder_recovers() {
    let f = fixture();
    leave(
        &f,
        two_file_change(),
        OPEN,
        &[("d/.a.txt.ft-tmp-1", "new a\n")],
    );
    let s = session(&f).with_lock_token("mine");
    // No holder, or another session's token: the record may be a live call's.
    recover(&s, true);
    fs::write(f.state.join(TXN_DIR).join(HOLDER), "theirs").unwrap();
    recover(&s, false);
    assert!(f.repo.join("d/.a.txt.ft-tmp-1").exists());
    assert_eq!(records(&f), 2);
    // Without a token, only a call that changes files recovers.
    recover(&session(&f), false);
    assert_eq!(records(&f), 2);
    // Positive control: the holder's own token.
    fs::write(f.state.join(TXN_DIR).join(HOLDER), "mine").unwrap();
    recover(&s, false);
    assert!(!f.repo.join("d/.a.txt.ft-tmp-1").exists());
    assert_eq!(records(&f), 1);
}

#[cfg(unix)]
#[test]
fn recovery_never_follows_a_link_nor_touches_names_that_are_not_temporary() {
    let f = fixture();
    let outside = f.repo.parent().unwrap().join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join(".x.ft-tmp-9"), "keep").unwrap();
    fs::write(outside.join("x"), "keep").unwrap();
    std::os::unix::fs::symlink(&outside, f.repo.join("link")).unwrap();
    leave(
        &f,
        vec![
            step("link", "x", ".x.ft-tmp-9", Some("keep"), None),
            step("d", "a.txt", "b.txt", Some("old a\n"), Some("old b\n")),
            step("../outside", "x", ".x.ft-tmp-9", Some("keep"), None),
        ],
        COMMIT,
        &[],
    );
    recover(&session(&f), true);
    assert_eq!(
        fs::read_to_string(outside.join(".x.ft-tmp-9")).unwrap(),
        "keep"
    );
    assert_eq!(fs::read_to_string(outside.join("x")).unwrap(), "keep");
    assert_eq!(read(&f, "d/a.txt"), "old a\n");
    assert_eq!(read(&f, "d/b.txt"), "old b\n");
}

#[test]
fn a_change_through_the_tools_leaves_no_record() {
    let f = fixture();
    let s = session(&f);
    let mut log = crate::audit::CallLog::default();
    let changes = vec![
        crate::tools::txn::Change::new(
            LogicalPath::parse("d/a.txt").unwrap(),
            "d/a.txt".into(),
            Some(b"old a\n".to_vec()),
            Some(b"new a\n".to_vec()),
        ),
        crate::tools::txn::Change::new(
            LogicalPath::parse("d/new/c.txt").unwrap(),
            "d/new/c.txt".into(),
            None,
            Some(b"c\n".to_vec()),
        ),
    ];
    crate::tools::txn::commit(&s, &mut log, changes, false, Vec::new()).unwrap();
    assert_eq!(read(&f, "d/a.txt"), "new a\n");
    assert_eq!(read(&f, "d/new/c.txt"), "c\n");
    assert_eq!(records(&f), 0);
}

#[test]
fn a_read_only_session_leaves_the_record_to_a_writable_one() {
    let f = fixture();
    leave(
        &f,
        two_file_change(),
        OPEN,
        &[("d/.a.txt.ft-tmp-1", "new a\n")],
    );
    let ro = Session::new(
        Fs::open(&f.repo).unwrap(),
        Policy::from_json(r#"{"read_only":true}"#).unwrap(),
    )
    .with_state_dir(&f.state);
    recover(&ro, true);
    assert!(f.repo.join("d/.a.txt.ft-tmp-1").exists());
    assert_eq!(records(&f), 1);
    recover(&session(&f), true);
    assert!(!f.repo.join("d/.a.txt.ft-tmp-1").exists());
    assert_eq!(records(&f), 0);
}
