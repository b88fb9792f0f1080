//! State hygiene: what file-tools keeps beside a repository (baseline blobs, audit diff
//! artifacts) is readable by its owner only, belongs to one repository (not to a path),
//! and `session reset` removes only what file-tools made; a directory the read rules
//! partly hide shows no time that moves with its hidden entries.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::json;

use crate::support::*;
use file_tools_host::{JsonLinesSink, Session};

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o7777
}

fn set_mode(p: &Path, m: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
}

/// Every file and directory below `dir` (itself included), with its mode.
fn modes(dir: &Path) -> Vec<(PathBuf, bool, u32)> {
    let mut out = vec![(dir.to_path_buf(), true, mode(dir))];
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if std::fs::symlink_metadata(&p).unwrap().is_dir() {
            out.extend(modes(&p));
        } else {
            out.push((p.clone(), false, mode(&p)));
        }
    }
    out
}

/// No one but the owner reaches anything below `dir`: directories 0700, files 0600 or
/// stricter.
fn assert_owner_only(dir: &Path) {
    for (p, is_dir, m) in modes(dir) {
        if is_dir {
            assert_eq!(m, 0o700, "{} is {m:o}", p.display());
        } else {
            assert_eq!(m & 0o077, 0, "{} is {m:o}", p.display());
        }
    }
}

fn writable(repo: &Path, state: &Path) -> Session {
    Session::builder(runtime())
        .repo(repo)
        .writable(true)
        .state_dir(state)
        .build()
        .unwrap()
}

#[test]
fn a_private_files_baseline_copy_is_readable_by_its_owner_only() {
    let fx = Fixture::new();
    let tmp = tempfile::tempdir().unwrap();
    // A state directory that already exists, open to everyone: it is tightened.
    let state = tmp.path().join("state");
    std::fs::create_dir(&state).unwrap();
    set_mode(&state, 0o755);
    fx.write("notes.txt", b"private words\n");
    set_mode(&fx.repo.join("notes.txt"), 0o600);
    let mut s = writable(&fx.repo, &state);
    call(
        &mut s,
        "edit_file",
        json!({"path": "notes.txt", "edits": [{"old_text": "words", "new_text": "things"}]}),
    )
    .unwrap();
    call(&mut s, "changes_since", json!({})).unwrap();
    // Positive control: the original content was copied into the state directory, and
    // that copy is what revert brings back.
    let copies: Vec<_> = modes(&state)
        .into_iter()
        .filter(|(p, d, _)| !d && std::fs::read(p).unwrap() == b"private words\n")
        .collect();
    assert_eq!(copies.len(), 1, "{:?}", modes(&state));
    assert_owner_only(&state);
    call(&mut s, "revert", json!({"paths": ["notes.txt"]})).unwrap();
    assert_eq!(
        std::fs::read(fx.repo.join("notes.txt")).unwrap(),
        b"private words\n"
    );
    // The temporary state directory of a session that names none is the owner's alone.
    let t = fx.session();
    let mut t = t;
    call(
        &mut t,
        "edit_file",
        json!({"path": "notes.txt", "edits": [{"old_text": "words", "new_text": "again"}]}),
    )
    .unwrap();
    assert_owner_only(t.state_dir().unwrap());
}

#[test]
fn a_state_directory_of_another_user_is_refused() {
    // Only root can make a directory another user owns; elsewhere the check is the
    // ownership comparison itself, which this cannot exercise.
    let fx = Fixture::new();
    let tmp = tempfile::tempdir().unwrap();
    if !running_as_root() {
        // Positive control for non-root runs: the user's own directory is taken.
        let mut s = writable(&fx.repo, &tmp.path().join("mine"));
        call(&mut s, "read_file", json!({"path": "src/main.rs"})).unwrap();
        return;
    }
    let state = tmp.path().join("theirs");
    std::fs::create_dir(&state).unwrap();
    std::os::unix::fs::chown(&state, Some(65534), Some(65534)).unwrap();
    let e = Session::builder(runtime())
        .repo(&fx.repo)
        .state_dir(&state)
        .build()
        .unwrap_err()
        .to_string();
    assert!(e.contains("belongs to another user"), "{e}");
}

fn running_as_root() -> bool {
    std::fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
        .unwrap_or(false)
}

#[test]
fn audit_diff_artifacts_are_readable_by_their_owner_only() {
    let fx = Fixture::new();
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("audit.jsonl");
    fx.write("notes.txt", b"private words\n");
    set_mode(&fx.repo.join("notes.txt"), 0o600);
    let mut s = Session::builder(runtime())
        .repo(&fx.repo)
        .writable(true)
        .audit_sink(Arc::new(JsonLinesSink::open(&log).unwrap()))
        .build()
        .unwrap();
    call(
        &mut s,
        "edit_file",
        json!({"path": "notes.txt", "edits": [{"old_text": "words", "new_text": "things"}]}),
    )
    .unwrap();
    let artifacts = file_tools_host::audit_log::artifacts_dir(&log);
    // Positive control: the diff, with the file's old content, is there.
    let stored: Vec<_> = modes(&artifacts)
        .into_iter()
        .filter(|(p, d, _)| {
            !d && std::fs::read_to_string(p)
                .unwrap()
                .contains("-private words")
        })
        .collect();
    assert_eq!(stored.len(), 1, "{:?}", modes(&artifacts));
    assert_owner_only(&artifacts);
}

#[test]
fn a_baseline_belongs_to_its_repository_not_to_its_path() {
    let tmp = tempfile::tempdir().unwrap();
    let (first, moved, state) = (
        tmp.path().join("repo"),
        tmp.path().join("moved"),
        tmp.path().join("state"),
    );
    write(&first.join("a.txt"), b"first, original\n");
    let mut s = writable(&first, &state);
    call(
        &mut s,
        "edit_file",
        json!({"path": "a.txt", "edits": [{"old_text": "original", "new_text": "changed"}]}),
    )
    .unwrap();
    drop(s);
    std::fs::rename(&first, &moved).unwrap();
    write(&first.join("a.txt"), b"second repository\n");
    let e = Session::builder(runtime())
        .repo(&first)
        .writable(true)
        .state_dir(&state)
        .build()
        .unwrap_err()
        .to_string();
    assert!(e.contains("another repository"), "{e}");
    assert!(e.contains("session reset"), "{e}");
    assert_eq!(
        std::fs::read(first.join("a.txt")).unwrap(),
        b"second repository\n"
    );
    // Positive control: the repository it belongs to, under its new name, reverts.
    let mut s = writable(&moved, &state);
    call(&mut s, "revert", json!({"paths": ["a.txt"]})).unwrap();
    assert_eq!(
        std::fs::read(moved.join("a.txt")).unwrap(),
        b"first, original\n"
    );
}

#[test]
fn a_session_whose_repository_was_replaced_under_it_stops() {
    let tmp = tempfile::tempdir().unwrap();
    let (first, moved, state) = (
        tmp.path().join("repo"),
        tmp.path().join("moved"),
        tmp.path().join("state"),
    );
    write(&first.join("a.txt"), b"first, original\n");
    let open = || {
        Session::builder(runtime())
            .repo(&first)
            .writable(true)
            .state_dir(&state)
            .fresh_instance_per_call(true)
            .build()
            .unwrap()
    };
    let mut s = open();
    call(
        &mut s,
        "edit_file",
        json!({"path": "a.txt", "edits": [{"old_text": "original", "new_text": "changed"}]}),
    )
    .unwrap();
    // Positive control: the same repository, a new instance per call, still reverts.
    call(&mut s, "revert", json!({"paths": ["a.txt"]})).unwrap();
    assert_eq!(
        std::fs::read(first.join("a.txt")).unwrap(),
        b"first, original\n"
    );
    call(
        &mut s,
        "edit_file",
        json!({"path": "a.txt", "edits": [{"old_text": "original", "new_text": "changed"}]}),
    )
    .unwrap();
    std::fs::rename(&first, &moved).unwrap();
    write(&first.join("a.txt"), b"second repository\n");
    let e = call(&mut s, "revert", json!({"paths": ["a.txt"]})).unwrap_err();
    assert!(
        e.message.contains("no longer the directory"),
        "{}",
        e.message
    );
    assert_eq!(
        std::fs::read(first.join("a.txt")).unwrap(),
        b"second repository\n"
    );
}

#[test]
fn session_reset_removes_only_what_file_tools_made() {
    let fx = Fixture::new();
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let (repo, st) = (fx.repo.to_str().unwrap(), state.to_str().unwrap());
    let with = |args: &[&str]| {
        let mut all = vec!["--repo", repo, "--state-dir", st];
        all.extend_from_slice(args);
        crate::cli::cli(&all, None)
    };
    let (out, _) = with(&[
        "call",
        "edit_file",
        r#"{"path":"src/main.rs","edits":[{"old_text":"hello","new_text":"bye"}]}"#,
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    with(&["call", "changes_since", "{}"]);
    // Files of the user's own beside the session's, at the top and in a subdirectory.
    std::fs::write(state.join("mine.txt"), b"keep me\n").unwrap();
    std::fs::write(state.join("blobs").join("mine.txt"), b"keep me too\n").unwrap();
    let (out, v) = with(&["session", "reset"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(std::fs::read(state.join("mine.txt")).unwrap(), b"keep me\n");
    assert_eq!(
        std::fs::read(state.join("blobs/mine.txt")).unwrap(),
        b"keep me too\n"
    );
    assert_eq!(
        v["result"]["kept"],
        json!(["blobs/mine.txt", "mine.txt"]),
        "{v}"
    );
    // Positive control: the session's own state is gone (nothing left to revert).
    assert!(!state.join("index.json").exists());
    let (_, v) = with(&["call", "diff_workspace", "{}"]);
    assert_eq!(v["result"]["files"], json!([]), "{v}");
    // Without foreign files the directory goes as a whole.
    std::fs::remove_file(state.join("mine.txt")).unwrap();
    std::fs::remove_file(state.join("blobs/mine.txt")).unwrap();
    let (out, v) = with(&["session", "reset"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(!state.exists(), "{v}");
}

#[test]
fn a_hidden_entry_moves_no_directory_time() {
    let fx = Fixture::new();
    fx.write("private/a.txt", b"hidden\n");
    let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000);
    let set_old = |p: &Path| {
        std::fs::File::open(p).unwrap().set_modified(old).unwrap();
    };
    set_old(&fx.repo.join("private"));
    let policy = json!({"read": {"block": ["private/**"]}});
    let mut s = fx.session_with(policy.clone(), true, Default::default());
    let look = |s: &mut Session| {
        let list = call(s, "list_dir", json!({"path": "."})).unwrap();
        let private = list["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["path"] == "private")
            .cloned()
            .unwrap();
        let info = call(s, "file_info", json!({"path": "private"})).unwrap();
        (private, info["modified"].clone())
    };
    let before = look(&mut s);
    fx.write("private/b.txt", b"also hidden\n");
    assert_eq!(look(&mut s), before);
    // Positive control: a file's time is still shown, and without a rule that hides
    // anything a directory shows its own.
    let info = call(&mut s, "file_info", json!({"path": "src/main.rs"})).unwrap();
    assert!(info["modified"].is_string(), "{info}");
    let mut open = fx.session();
    let info = call(&mut open, "file_info", json!({"path": "private"})).unwrap();
    assert!(info["modified"].is_string(), "{info}");
}
