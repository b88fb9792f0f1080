//! write_file, append_file, delete_file, move_file through the component: every refusal
//! leaves the whole tree (repository and sentinels) byte-identical.

use serde_json::{json, Value};

use crate::support::*;

fn read(fx: &Fixture, p: &str) -> Vec<u8> {
    std::fs::read(fx.repo.join(p)).unwrap()
}

#[test]
fn write_creates_replaces_and_reports_hashes_and_diff() {
    let fx = Fixture::new();
    let mut s = fx.session();
    let v = call(
        &mut s,
        "write_file",
        json!({ "path": "new/deep/file.txt", "content": "one\n", "mode": "create" }),
    )
    .unwrap();
    assert_eq!(read(&fx, "new/deep/file.txt"), b"one\n");
    assert_eq!(v["changes"][0]["action"], "create");
    assert_eq!(v["changes"][0]["sha256_after"], sha256(b"one\n"));
    assert!(v["diff"]
        .as_str()
        .unwrap()
        .contains("+++ b/new/deep/file.txt\n@@ -0,0 +1 @@\n+one\n"));
    let old = read(&fx, "src/main.rs");
    let v = call(&mut s, "write_file", json!({ "path": "src/main.rs", "content": "fn main() {}\n", "mode": "replace", "expected_sha256": sha256(&old) })).unwrap();
    assert_eq!(v["changes"][0]["sha256_before"], sha256(&old));
    assert_eq!(read(&fx, "src/main.rs"), b"fn main() {}\n");
    let ev = fx.events();
    let last = ev.last().unwrap();
    assert_eq!(last.paths_written, ["src/main.rs"]);
    assert_eq!(
        last.files[0].sha256_before.as_deref(),
        Some(sha256(&old).as_str())
    );
    assert_eq!(
        last.files[0].sha256_after.as_deref(),
        Some(sha256(b"fn main() {}\n").as_str())
    );
    assert!(last.insertions >= 1 && last.deletions >= 1);
}

/// Large buffers are hashed by the host (`host-fs.sha256`); small ones in the component.
/// Both must give the real sha256, and an edit with the large file's hash must succeed.
#[test]
fn large_and_small_files_report_the_same_hashes_as_sha256() {
    let fx = Fixture::new();
    let mut s = fx.session();
    let big: String = (0..20_000).map(|i| format!("line {i}\n")).collect();
    let v = call(
        &mut s,
        "write_file",
        json!({ "path": "big.txt", "content": big, "mode": "create" }),
    )
    .unwrap();
    assert_eq!(v["changes"][0]["sha256_after"], sha256(big.as_bytes()));
    let edited = big.replacen("line 10000\n", "line ten thousand\n", 1);
    let v = call(
        &mut s,
        "edit_file",
        json!({ "path": "big.txt", "edits": [{ "old_text": "line 10000\n", "new_text": "line ten thousand\n" }], "expected_sha256": sha256(big.as_bytes()) }),
    )
    .unwrap();
    assert_eq!(v["changes"][0]["sha256_before"], sha256(big.as_bytes()));
    assert_eq!(v["changes"][0]["sha256_after"], sha256(edited.as_bytes()));
    assert_eq!(read(&fx, "big.txt"), edited.as_bytes());
    let diff = v["diff"].as_str().unwrap();
    let changed: Vec<&str> = diff
        .lines()
        .filter(|l| l.starts_with("-line") || l.starts_with("+line"))
        .collect();
    assert_eq!(changed, ["-line 10000", "+line ten thousand"], "{diff}");
    let e = call(
        &mut s,
        "edit_file",
        json!({ "path": "big.txt", "edits": [{ "old_text": "line 1\n", "new_text": "x\n" }], "expected_sha256": sha256(big.as_bytes()) }),
    )
    .unwrap_err();
    assert_eq!(file_tools_host::code_name(e.code), "WRITE_CONFLICT");
}

#[test]
fn stale_writes_are_write_conflicts_with_the_current_hash() {
    let fx = Fixture::new();
    let mut s = fx.session();
    let before = fx.snapshot();
    let stale = sha256(b"something else");
    let e = call(
        &mut s,
        "write_file",
        json!({ "path": "src/main.rs", "content": "x", "expected_sha256": stale }),
    )
    .unwrap_err();
    assert_eq!(file_tools_host::code_name(e.code), "WRITE_CONFLICT");
    assert_eq!(
        e.detail("current_sha256"),
        Some(sha256(&read(&fx, "src/main.rs")).as_str())
    );
    assert!(e.message.contains("re-read"));
    assert_eq!(fx.snapshot(), before);
}

#[test]
fn every_refused_mutation_leaves_the_tree_byte_identical() {
    let fx = Fixture::new();
    #[cfg(unix)]
    {
        fx.symlink("../outside/secret.txt", "out_link");
        fx.symlink("missing/target.txt", "dangling");
        fx.symlink("../outside", "out_dir");
        std::fs::hard_link(fx.repo.join("README.md"), fx.repo.join("README.hard")).unwrap();
    }
    let mut s = fx.session();
    let before = fx.snapshot();
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "write_file",
            json!({ "path": "../outside/secret.txt", "content": "x" }),
            "PATH_REJECTED",
        ),
        (
            "write_file",
            json!({ "path": "/etc/passwd", "content": "x" }),
            "PATH_REJECTED",
        ),
        (
            "write_file",
            json!({ "path": "out_link", "content": "x" }),
            "PATH_REJECTED",
        ),
        (
            "write_file",
            json!({ "path": "out_dir/new.txt", "content": "x" }),
            "PATH_REJECTED",
        ),
        (
            "write_file",
            json!({ "path": "dangling", "content": "x" }),
            "PATH_REJECTED",
        ),
        (
            "write_file",
            json!({ "path": ".env", "content": "x" }),
            "POLICY_DENIED",
        ),
        (
            "write_file",
            json!({ "path": "config/new.pem", "content": "x" }),
            "POLICY_DENIED",
        ),
        (
            "write_file",
            json!({ "path": ".git/config", "content": "x" }),
            "POLICY_DENIED",
        ),
        (
            "write_file",
            json!({ "path": ".git/hooks/pre-commit", "content": "x" }),
            "POLICY_DENIED",
        ),
        (
            "write_file",
            json!({ "path": "target/debug/out.txt", "content": "x" }),
            "POLICY_DENIED",
        ),
        (
            "write_file",
            json!({ "path": "vendor/lib/v.rs", "content": "x" }),
            "POLICY_DENIED",
        ),
        (
            "write_file",
            json!({ "path": "Cargo.lock", "content": "x" }),
            "POLICY_DENIED",
        ),
        (
            "write_file",
            json!({ "path": "README.hard", "content": "x" }),
            "POLICY_DENIED",
        ),
        (
            "write_file",
            json!({ "path": "pom.xml", "content": "x", "mode": "create" }),
            "ALREADY_EXISTS",
        ),
        (
            "write_file",
            json!({ "path": "nope.md", "content": "x", "mode": "replace" }),
            "NOT_FOUND",
        ),
        (
            "write_file",
            json!({ "path": "src", "content": "x" }),
            "NOT_A_FILE",
        ),
        (
            "write_file",
            json!({ "path": "pom.xml", "content": "x", "expected_sha256": "zz" }),
            "INVALID_INPUT",
        ),
        (
            "write_file",
            json!({ "path": "big.txt", "content": "x".repeat(9 << 20) }),
            "LIMIT_EXCEEDED",
        ),
        (
            "write_file",
            json!({ "path": "README.md/child", "content": "x" }),
            "NOT_FOUND",
        ),
        (
            "append_file",
            json!({ "path": "data.bin", "content": "x" }),
            "UNSUPPORTED_BINARY",
        ),
        (
            "append_file",
            json!({ "path": ".env", "content": "x" }),
            "POLICY_DENIED",
        ),
        ("delete_file", json!({ "path": "src" }), "NOT_A_FILE"),
        ("delete_file", json!({ "path": "nope.txt" }), "NOT_FOUND"),
        ("delete_file", json!({ "path": ".env" }), "POLICY_DENIED"),
        ("delete_file", json!({ "path": "out_link" }), "NOT_A_FILE"),
        (
            "delete_file",
            json!({ "path": "pom.xml", "expected_sha256": sha256(b"other") }),
            "WRITE_CONFLICT",
        ),
        (
            "move_file",
            json!({ "from": "README.md", "to": "README2.md" }),
            "POLICY_DENIED",
        ),
        (
            "edit_file",
            json!({ "path": "src/lib.rs", "edits": [{ "old_text": "nothing like this", "new_text": "x" }] }),
            "EDIT_NO_MATCH",
        ),
        (
            "edit_file",
            json!({ "path": "src/lib.rs", "edits": [{ "old_text": "i32", "new_text": "i64" }] }),
            "EDIT_AMBIGUOUS",
        ),
        (
            "edit_file",
            json!({ "path": "src/lib.rs", "edits": [{ "old_text": "a + b", "new_text": "b + a" }, { "old_text": "missing", "new_text": "x" }] }),
            "EDIT_NO_MATCH",
        ),
        (
            "apply_patch",
            json!({ "patch": "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1 +1 @@\n-nope\n+x\n" }),
            "PATCH_CONFLICT",
        ),
        (
            "apply_patch",
            json!({ "patch": "--- a/../outside/secret.txt\n+++ b/../outside/secret.txt\n@@ -1 +1 @@\n-x\n+y\n" }),
            "PATH_REJECTED",
        ),
        (
            "apply_patch",
            json!({ "patch": "garbage" }),
            "PATCH_PARSE_ERROR",
        ),
        ("revert", json!({ "paths": ["README.md"] }), "INVALID_INPUT"),
    ];
    for (tool, args, want) in cases {
        let r = call(&mut s, tool, args.clone());
        assert_eq!(code(&r), want, "{tool} {args}");
        assert_eq!(fx.snapshot(), before, "{tool} {args} changed the tree");
    }
    // Every call, refused or not, produced exactly one audit event.
    assert_eq!(fx.events().len(), 34);
}

#[test]
fn read_only_sessions_refuse_every_mutation() {
    let fx = Fixture::new();
    let mut s = fx.session_with(json!({}), false, Default::default());
    let before = fx.snapshot();
    for (tool, args) in [
        ("write_file", json!({ "path": "a.txt", "content": "x" })),
        (
            "edit_file",
            json!({ "path": "src/lib.rs", "edits": [{ "old_text": "a + b", "new_text": "b" }] }),
        ),
        (
            "append_file",
            json!({ "path": "README.md", "content": "x" }),
        ),
        ("delete_file", json!({ "path": "README.md" })),
        (
            "apply_patch",
            json!({ "patch": "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+x\n" }),
        ),
    ] {
        let e = call(&mut s, tool, args).unwrap_err();
        assert_eq!(e.reason.as_deref(), Some("read_only"), "{tool}");
    }
    let tools = s.describe().unwrap();
    assert!(!tools.to_string().contains("\"write_file\""));
    assert_eq!(fx.snapshot(), before);
}

#[test]
fn crlf_and_bom_are_kept_by_writes_and_appends() {
    let fx = Fixture::new();
    let mut s = fx.session_with(relaxed(json!({})), true, Default::default());
    call(
        &mut s,
        "write_file",
        json!({ "path": "crlf.txt", "content": "uno\ndos\n" }),
    )
    .unwrap();
    assert_eq!(read(&fx, "crlf.txt"), b"uno\r\ndos\r\n");
    call(
        &mut s,
        "append_file",
        json!({ "path": "crlf.txt", "content": "tres\n" }),
    )
    .unwrap();
    assert_eq!(read(&fx, "crlf.txt"), b"uno\r\ndos\r\ntres\r\n");
    call(
        &mut s,
        "write_file",
        json!({ "path": "bom.txt", "content": "new\n" }),
    )
    .unwrap();
    assert_eq!(read(&fx, "bom.txt"), "\u{feff}new\n".as_bytes());
}

#[test]
fn append_and_delete() {
    let fx = Fixture::new();
    let mut s = fx.session();
    call(
        &mut s,
        "append_file",
        json!({ "path": "README.md", "content": "more\n" }),
    )
    .unwrap();
    assert_eq!(
        read(&fx, "README.md"),
        b"# demo\nA small repository.\nmore\n"
    );
    call(
        &mut s,
        "append_file",
        json!({ "path": "notes/new.txt", "content": "first\n" }),
    )
    .unwrap();
    assert_eq!(read(&fx, "notes/new.txt"), b"first\n");
    let sha = sha256(&read(&fx, "pom.xml"));
    let v = call(
        &mut s,
        "delete_file",
        json!({ "path": "pom.xml", "expected_sha256": sha }),
    )
    .unwrap();
    assert_eq!(v["changes"][0]["action"], "delete");
    assert!(!fx.repo.join("pom.xml").exists());
}

#[test]
fn dry_runs_change_nothing() {
    let fx = Fixture::new();
    let mut s = fx.session_with(relaxed(json!({})), true, Default::default());
    let before = fx.snapshot();
    let v = call(
        &mut s,
        "write_file",
        json!({ "path": "src/main.rs", "content": "x\n", "dry_run": true }),
    )
    .unwrap();
    assert_eq!(v["dry_run"], true);
    assert!(v["diff"].as_str().unwrap().contains("+x"));
    call(&mut s, "edit_file", json!({ "path": "src/lib.rs", "edits": [{ "old_text": "a - b", "new_text": "b - a" }], "dry_run": true })).unwrap();
    call(
        &mut s,
        "delete_file",
        json!({ "path": "README.md", "dry_run": true }),
    )
    .unwrap();
    call(
        &mut s,
        "apply_patch",
        json!({ "patch": "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+x\n", "dry_run": true }),
    )
    .unwrap();
    assert_eq!(fx.snapshot(), before);
    let d = call(&mut s, "diff_workspace", json!({})).unwrap();
    assert_eq!(d["files"], json!([]));
}

#[test]
fn moves_need_the_policy_and_never_overwrite_unasked() {
    let fx = Fixture::new();
    let mut s = fx.session_with(json!({ "allow_move": true }), true, Default::default());
    let v = call(
        &mut s,
        "move_file",
        json!({ "from": "docs/guide.md", "to": "manual/guide.md" }),
    )
    .unwrap();
    assert!(!fx.repo.join("docs/guide.md").exists());
    assert_eq!(
        read(&fx, "manual/guide.md"),
        b"Use add() to add.\nUse sub() to subtract.\n"
    );
    assert!(v["diff"]
        .as_str()
        .unwrap()
        .contains("rename from docs/guide.md\nrename to manual/guide.md"));
    let actions: Vec<&str> = v["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["move_from", "move_to"]);
    let before = fx.snapshot();
    assert_eq!(
        code(&call(
            &mut s,
            "move_file",
            json!({ "from": "manual/guide.md", "to": "README.md" })
        )),
        "ALREADY_EXISTS"
    );
    assert_eq!(
        code(&call(
            &mut s,
            "move_file",
            json!({ "from": "manual/guide.md", "to": ".env" })
        )),
        "POLICY_DENIED"
    );
    assert_eq!(
        code(&call(
            &mut s,
            "move_file",
            json!({ "from": "manual/guide.md", "to": "../outside/x" })
        )),
        "PATH_REJECTED"
    );
    assert_eq!(
        code(&call(
            &mut s,
            "move_file",
            json!({ "from": "manual/guide.md", "to": "manual/../manual/guide.md" })
        )),
        "INVALID_INPUT"
    );
    assert_eq!(fx.snapshot(), before);
    let readme = sha256(&read(&fx, "README.md"));
    call(
        &mut s,
        "move_file",
        json!({ "from": "manual/guide.md", "to": "README.md", "destination_sha256": readme }),
    )
    .unwrap();
    assert_eq!(
        read(&fx, "README.md"),
        b"Use add() to add.\nUse sub() to subtract.\n"
    );
}

#[test]
fn policy_can_require_expected_sha256() {
    let fx = Fixture::new();
    let mut s = fx.session_with(
        json!({ "require_expected_sha256": true }),
        true,
        Default::default(),
    );
    let e = call(
        &mut s,
        "write_file",
        json!({ "path": "README.md", "content": "x" }),
    )
    .unwrap_err();
    assert_eq!(e.reason.as_deref(), Some("sha_required"));
    assert!(
        e.detail("current_sha256").is_none(),
        "the refusal must not hand out the hash"
    );
    // Creating a new file needs no hash.
    call(
        &mut s,
        "write_file",
        json!({ "path": "fresh.txt", "content": "x" }),
    )
    .unwrap();
}

#[test]
fn no_temporary_file_survives_and_none_is_visible() {
    let fx = Fixture::new();
    let mut s = fx.session_with(relaxed(json!({})), true, Default::default());
    for i in 0..5 {
        call(
            &mut s,
            "write_file",
            json!({ "path": "src/main.rs", "content": format!("v{i}\n") }),
        )
        .unwrap();
    }
    let names: Vec<String> = std::fs::read_dir(fx.repo.join("src"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(!names.iter().any(|n| n.contains("ft-tmp")), "{names:?}");
    // A leftover from a crash is hidden from every tool and its name is refused.
    std::fs::write(fx.repo.join("src/.main.rs.ft-tmp-deadbeef"), "partial").unwrap();
    let v = call(
        &mut s,
        "list_dir",
        json!({ "path": "src", "include_hidden": true }),
    )
    .unwrap();
    assert!(!v.to_string().contains("ft-tmp"));
    assert_eq!(
        code(&call(
            &mut s,
            "read_file",
            json!({ "path": "src/.main.rs.ft-tmp-deadbeef" })
        )),
        "PATH_REJECTED"
    );
}

#[cfg(unix)]
#[test]
fn replaced_files_keep_their_permission_bits() {
    use std::os::unix::fs::PermissionsExt;
    let fx = Fixture::new();
    fx.write("run.sh", b"#!/bin/sh\necho one\n");
    std::fs::set_permissions(
        fx.repo.join("run.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    std::fs::set_permissions(
        fx.repo.join("pom.xml"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    let mut s = fx.session_with(relaxed(json!({})), true, Default::default());
    call(
        &mut s,
        "edit_file",
        json!({ "path": "run.sh", "edits": [{ "old_text": "one", "new_text": "two" }] }),
    )
    .unwrap();
    call(
        &mut s,
        "apply_patch",
        json!({ "patch": "--- a/run.sh\n+++ b/run.sh\n@@ -2 +2 @@\n-echo two\n+echo three\n" }),
    )
    .unwrap();
    call(
        &mut s,
        "write_file",
        json!({ "path": "pom.xml", "content": "<project/>\n" }),
    )
    .unwrap();
    let mode = |p: &str| {
        std::fs::metadata(fx.repo.join(p))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(read(&fx, "run.sh"), b"#!/bin/sh\necho three\n");
    assert_eq!(mode("run.sh"), 0o755);
    assert_eq!(mode("pom.xml"), 0o600);
}

/// Replacing or removing a file unseen is refused by default with a code that says to read
/// it first; creating, editing in place and patching by context need no hash; the policy
/// can relax the rule. Nothing changes on a refusal.
#[test]
fn overwriting_or_deleting_unread_files_needs_their_hash_by_default() {
    let fx = Fixture::new();
    let before = fx.snapshot();
    let mut s = fx.session();
    let refusals = [
        (
            "write_file",
            json!({ "path": "README.md", "content": "x\n" }),
        ),
        ("delete_file", json!({ "path": "README.md" })),
        (
            "apply_patch",
            json!({ "patch": "*** Begin Patch\n*** Delete File: README.md\n*** End Patch\n" }),
        ),
    ];
    for (tool, args) in &refusals {
        let e = call(&mut s, tool, args.clone()).unwrap_err();
        assert_eq!(e.reason.as_deref(), Some("sha_required"), "{tool}");
        assert!(e.message.contains("read it first"), "{tool}: {}", e.message);
    }
    assert_eq!(fx.snapshot(), before);
    // Positive controls: a new file, an in-place edit, a patch guarded by its context, and
    // the same overwrite with the hash.
    assert!(call(
        &mut s,
        "write_file",
        json!({ "path": "new.txt", "content": "n\n" })
    )
    .is_ok());
    assert!(call(&mut s, "edit_file", json!({ "path": "docs/guide.md", "edits": [{ "old_text": "Use add()", "new_text": "Call add()" }] })).is_ok());
    let sha = sha256(&std::fs::read(fx.repo.join("README.md")).unwrap());
    assert!(call(
        &mut s,
        "write_file",
        json!({ "path": "README.md", "content": "x\n", "expected_sha256": sha })
    )
    .is_ok());
    // Relaxed by the policy.
    let mut s = fx.session_with(
        json!({ "allow_overwrite_without_sha256": true }),
        true,
        Default::default(),
    );
    assert!(call(
        &mut s,
        "write_file",
        json!({ "path": "README.md", "content": "y\n" })
    )
    .is_ok());
    assert!(call(&mut s, "delete_file", json!({ "path": "new.txt" })).is_ok());
}

/// A rename keeps the file's permission bits (a 0600 file does not become 0644), through
/// move_file and through a patch that renames.
#[cfg(unix)]
#[test]
fn renames_keep_permission_bits() {
    use std::os::unix::fs::PermissionsExt;
    let fx = Fixture::new();
    for f in ["a.key.txt", "b.key.txt"] {
        fx.write(f, b"private notes\n");
        std::fs::set_permissions(fx.repo.join(f), std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let mut s = fx.session_with(json!({ "allow_move": true }), true, Default::default());
    call(
        &mut s,
        "move_file",
        json!({ "from": "a.key.txt", "to": "moved/a.key.txt" }),
    )
    .unwrap();
    let patch = "diff --git a/b.key.txt b/moved/b.key.txt\nsimilarity index 100%\nrename from b.key.txt\nrename to moved/b.key.txt\n";
    call(&mut s, "apply_patch", json!({ "patch": patch })).unwrap();
    for f in ["moved/a.key.txt", "moved/b.key.txt"] {
        let mode = std::fs::metadata(fx.repo.join(f))
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o600, "{f}");
    }
}

#[test]
fn a_space_indented_edit_applies_to_a_tab_indented_file_when_match_allows_and_says_so() {
    let fx = Fixture::new();
    let file = "fn f() {\n\tif x {\n\t\treturn 1;\n\t}\n}\n";
    fx.write("tabs.rs", file.as_bytes());
    let mut s = fx.session();
    let edit = json!({ "old_text": "    if x {\n        return 1;\n    }", "new_text": "    if x {\n        log();\n        return 2;\n    }" });
    // Exact by default: refused, with the level that would match named.
    let e = call(
        &mut s,
        "edit_file",
        json!({ "path": "tabs.rs", "edits": [edit] }),
    )
    .unwrap_err();
    assert_eq!(file_tools_host::code_name(e.code), "EDIT_NO_MATCH");
    assert_eq!(
        e.details
            .iter()
            .find(|d| d.key == "would_match_level")
            .map(|d| d.value.as_str()),
        Some("whitespace"),
        "{e:?}"
    );
    assert_eq!(
        std::fs::read_to_string(fx.repo.join("tabs.rs")).unwrap(),
        file
    );
    let v = call(
        &mut s,
        "edit_file",
        json!({ "path": "tabs.rs", "edits": [edit], "match": "whitespace" }),
    )
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(fx.repo.join("tabs.rs")).unwrap(),
        "fn f() {\n\tif x {\n\t\tlog();\n\t\treturn 2;\n\t}\n}\n"
    );
    assert_eq!(
        v["relaxed_hunks"],
        json!([{ "path": "tabs.rs", "hunk": 1, "line": 2, "level": "whitespace" }])
    );
    let last = fx.events().pop().unwrap();
    assert!(
        last.notes
            .iter()
            .any(|n| n.contains("edit 1 of 'tabs.rs' matched line 2")),
        "{:?}",
        last.notes
    );
}
