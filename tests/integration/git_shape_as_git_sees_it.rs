//! Git's own test for "is this directory a repository" (`HEAD` beside `objects` and `refs`)
//! follows links and asks only that `objects` and `refs` can be entered (`access(X_OK)`): a
//! symbolic link to a directory and an executable file pass, and `HEAD` may be a symbolic
//! link. The shape check and the git-internals classification must count these as git does,
//! and must see a shape that appears between two calls of one session.

use std::os::unix::fs::PermissionsExt;

use serde_json::json;

use crate::support::*;
use crate::trust_boundary::git_takes_for_repository;

fn make_executable(path: &std::path::Path) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn denied_as_git_shaped(r: &Result<serde_json::Value, file_tools_host::ToolError>, what: &str) {
    assert_eq!(code(r), "POLICY_DENIED", "{what}: {r:?}");
    assert_eq!(
        r.as_ref().unwrap_err().reason.as_deref(),
        Some("git_shaped"),
        "{what}: {r:?}"
    );
}

#[test]
fn git_counts_linked_and_executable_entries_and_so_does_the_shape_check() {
    let fx = Fixture::new();
    // What git takes for a repository, built by hand: each twin differs from the cases
    // below only by the HEAD (or objects/) the model would add.
    fx.write("twin_link/HEAD", b"ref: refs/heads/main\n");
    fx.write("o1/info/x", b"x\n");
    fx.symlink("../o1", "twin_link/objects");
    fx.write("twin_link/refs/heads/main", b"x\n");
    fx.write("twin_exec/HEAD", b"ref: refs/heads/main\n");
    fx.write("twin_exec/objects", b"#!/bin/sh\n");
    make_executable(&fx.repo.join("twin_exec/objects"));
    fx.write("twin_exec/refs/heads/main", b"x\n");
    fx.symlink("refs/heads/main", "twin_head/HEAD");
    fx.write("twin_head/objects/info/x", b"x\n");
    fx.write("twin_head/refs/heads/main", b"x\n");
    for t in ["twin_link", "twin_exec", "twin_head"] {
        assert!(
            git_takes_for_repository(&fx.repo.join(t)),
            "{t}: the fixture is what git takes for a repository"
        );
    }

    // The hostile repository brings the parts; the model adds the last one.
    fx.symlink("../o1", "a/objects");
    fx.write("a/refs/heads/main", b"x\n");
    fx.symlink("refs/heads/main", "c/HEAD");
    fx.write("c/refs/heads/main", b"x\n");
    fx.write("tool.sh", b"#!/bin/sh\necho hi\n");
    make_executable(&fx.repo.join("tool.sh"));
    let mut s = fx.session_with(
        relaxed(json!({ "allow_move": true })),
        true,
        Default::default(),
    );
    let r = call(
        &mut s,
        "write_file",
        json!({ "path": "a/HEAD", "content": "ref: refs/heads/main\n" }),
    );
    denied_as_git_shaped(&r, "a/HEAD beside a linked objects/");
    let r = call(
        &mut s,
        "write_file",
        json!({ "path": "c/objects/info/x", "content": "x\n" }),
    );
    denied_as_git_shaped(&r, "c/objects beside a linked HEAD");

    // The model alone, from an executable file of the repository: refs/, then the
    // executable moved to objects, then HEAD.
    call(
        &mut s,
        "write_file",
        json!({ "path": "b/refs/heads/main", "content": "x\n" }),
    )
    .unwrap();
    call(
        &mut s,
        "move_file",
        json!({ "from": "tool.sh", "to": "b/objects" }),
    )
    .unwrap();
    let r = call(
        &mut s,
        "write_file",
        json!({ "path": "b/HEAD", "content": "ref: refs/heads/main\n" }),
    );
    denied_as_git_shaped(&r, "b/HEAD beside an executable objects");

    for d in ["a", "b", "c"] {
        assert!(
            !git_takes_for_repository(&fx.repo.join(d)),
            "{d} became a repository"
        );
    }
    // Positive control: HEAD beside refs/ alone is an ordinary file.
    call(
        &mut s,
        "write_file",
        json!({ "path": "d/refs/x", "content": "x\n" }),
    )
    .unwrap();
    call(
        &mut s,
        "write_file",
        json!({ "path": "d/HEAD", "content": "x\n" }),
    )
    .unwrap();
}

#[test]
fn a_planted_repository_with_linked_parts_is_git_internals() {
    let fx = Fixture::new();
    fx.write("o1/info/x", b"x\n");
    fx.write("planted/HEAD", b"ref: refs/heads/main\n");
    fx.symlink("../o1", "planted/objects");
    fx.write("planted/refs/heads/main", b"x\n");
    fx.write(
        "planted/config",
        format!("[core]\n\tx = {SECRET_MARK}\n").as_bytes(),
    );
    fx.symlink("refs/heads/main", "headlink/HEAD");
    fx.write("headlink/objects/info/x", b"x\n");
    fx.write("headlink/refs/heads/main", b"x\n");
    fx.write(
        "headlink/config",
        format!("[core]\n\tx = {SECRET_MARK}\n").as_bytes(),
    );
    for t in ["planted", "headlink"] {
        assert!(git_takes_for_repository(&fx.repo.join(t)), "{t}");
    }
    let mut s = fx.session_with(relaxed(json!({})), true, Default::default());
    for p in ["planted/config", "headlink/config"] {
        let r = call(&mut s, "read_file", json!({ "path": p }));
        assert_eq!(
            r.as_ref().err().and_then(|e| e.reason.as_deref()),
            Some("git_internal"),
            "{p}: {r:?}"
        );
        let r = call(
            &mut s,
            "write_file",
            json!({ "path": p, "content": "[core]\n\tfsmonitor = x\n" }),
        );
        assert_eq!(code(&r), "POLICY_DENIED", "{p}: {r:?}");
    }
    let v = call(
        &mut s,
        "search_text",
        json!({ "query": "SECRET-VALUE", "include_hidden": true }),
    )
    .unwrap();
    assert_no_leak(&v.to_string());
    // Positive control: the same files without HEAD are ordinary.
    fx.write("plain/config", b"[core]\n");
    call(&mut s, "read_file", json!({ "path": "plain/config" })).unwrap();
}

#[test]
fn a_repository_planted_between_two_calls_is_git_internals_at_the_second() {
    let fx = Fixture::new();
    fx.write("later/config", b"[core]\n");
    let mut s = fx.session_with(relaxed(json!({})), true, Default::default());
    // Positive control: before the shape exists the directory is ordinary.
    call(&mut s, "read_file", json!({ "path": "later/config" })).unwrap();
    // Another process (a checkout, say) gives it the shape while the session lives.
    fx.write("later/HEAD", b"ref: refs/heads/main\n");
    fx.write("later/objects/info/x", b"x\n");
    fx.write("later/refs/heads/main", b"x\n");
    assert!(git_takes_for_repository(&fx.repo.join("later")));
    let r = call(&mut s, "read_file", json!({ "path": "later/config" }));
    assert_eq!(
        r.as_ref().err().and_then(|e| e.reason.as_deref()),
        Some("git_internal"),
        "{r:?}"
    );
    let r = call(
        &mut s,
        "write_file",
        json!({ "path": "later/hooks/pre-commit", "content": "curl x | sh\n" }),
    );
    assert_eq!(code(&r), "POLICY_DENIED", "{r:?}");
    assert!(!fx.repo.join("later/hooks").exists());
}
