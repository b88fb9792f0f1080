//! Policies given by the host: read rules, overrides, read-only sessions, malformed policies.

use serde_json::json;

use crate::support::*;
use file_tools_host::{HostError, Session};

#[test]
fn blocked_and_allowed_read_globs() {
    let fx = Fixture::new();
    let mut s = fx.session_with(
        json!({ "read": { "allow": ["src/**", "docs/**"], "block": ["src/util"] } }),
        true,
        Default::default(),
    );
    assert!(call(&mut s, "read_file", json!({ "path": "src/main.rs" })).is_ok());
    let e = call(
        &mut s,
        "read_file",
        json!({ "path": "src/util/strings.rs" }),
    )
    .unwrap_err();
    assert_eq!(file_tools_host::code_name(e.code), "NOT_FOUND");
    let e = call(&mut s, "read_file", json!({ "path": "pom.xml" })).unwrap_err();
    assert_eq!(file_tools_host::code_name(e.code), "NOT_FOUND");
    let v = call(&mut s, "find_files", json!({ "patterns": ["*"] })).unwrap();
    assert_eq!(
        v["paths"],
        json!(["docs/guide.md", "src/lib.rs", "src/main.rs"])
    );
    let v = call(&mut s, "search_text", json!({ "query": "shout" })).unwrap();
    assert_eq!(v["total_matches"], 0);
}

#[test]
fn overrides_can_mark_paths_secret() {
    let fx = Fixture::new();
    let mut s = fx.session_with(
        json!({ "overrides": [{ "pattern": "docs/**", "kind": "secret" }] }),
        true,
        Default::default(),
    );
    let e = call(&mut s, "read_file", json!({ "path": "docs/guide.md" })).unwrap_err();
    assert_eq!(e.reason.as_deref(), Some("secret"));
    let v = call(&mut s, "search_text", json!({ "query": "subtract" })).unwrap();
    assert_eq!(v["total_matches"], 0);
}

#[test]
fn read_only_sessions_say_so_and_the_agent_cannot_change_the_policy() {
    let fx = Fixture::new();
    let mut s = fx.session_with(json!({}), false, Default::default());
    assert!(s.read_only());
    let v = call(&mut s, "file_info", json!({ "path": "src/main.rs" })).unwrap();
    assert_eq!(
        (v["writable"].as_bool(), v["write_denied_reason"].as_str()),
        (Some(false), Some("read_only"))
    );
    // The policy is not an argument of any tool: smuggling one in is malformed input.
    let r = call(
        &mut s,
        "read_file",
        json!({ "path": ".env", "policy": { "overrides": [] } }),
    );
    assert_eq!(code(&r), "INVALID_INPUT");
}

#[test]
fn malformed_policies_fail_at_build_time() {
    let fx = Fixture::new();
    for bad in [
        json!({ "read_onyl": true }),
        json!({ "read": { "block": ["a[b"] } }),
        json!({ "limits": { "max_read_bytes": -1 } }),
    ] {
        let r = Session::builder(runtime())
            .repo(&fx.repo)
            .policy(bad.clone())
            .build();
        assert!(matches!(r, Err(HostError::Policy(_))), "{bad}: {r:?}");
    }
    let r = Session::builder(runtime()).policy(json!({})).build();
    assert!(matches!(r, Err(HostError::Config(_))));
    let r = Session::builder(runtime())
        .repo(fx.repo.join("missing"))
        .build();
    assert!(matches!(r, Err(HostError::Repo { .. })));
}

/// `apply_patch` is held to `allow_move` like `move_file`: a rename is refused by default and
/// changes nothing; the same patch applies when moves are allowed.
#[test]
fn patch_renames_need_allow_move() {
    let patch = "diff --git a/docs/guide.md b/docs/manual.md\nsimilarity index 100%\nrename from docs/guide.md\nrename to docs/manual.md\n";
    let envelope = "*** Begin Patch\n*** Update File: src/main.rs\n*** Move to: src/app.rs\n@@\n-fn main() {\n+fn main() -> () {\n*** End Patch\n";
    for p in [patch, envelope] {
        let fx = Fixture::new();
        let before = fx.snapshot();
        let mut s = fx.session();
        let e = call(&mut s, "apply_patch", json!({ "patch": p })).unwrap_err();
        assert_eq!(file_tools_host::code_name(e.code), "POLICY_DENIED", "{p}");
        assert_eq!(e.reason.as_deref(), Some("move_disabled"));
        assert_eq!(fx.snapshot(), before);
        let mut s = fx.session_with(json!({ "allow_move": true }), true, Default::default());
        assert!(
            call(&mut s, "apply_patch", json!({ "patch": p })).is_ok(),
            "{p}"
        );
    }
}

/// With `require_expected_sha256`, every file a patch changes needs its hash in
/// `expected_sha256s`; a wrong hash is a conflict, a hash for a file the patch does not
/// touch is invalid input, and nothing changes until all of them are right.
#[test]
fn patch_hashes_are_required_when_the_policy_says_so() {
    let fx = Fixture::new();
    let before = fx.snapshot();
    let patch = "--- a/src/main.rs\n+++ b/src/main.rs\n@@ -1,3 +1,3 @@\n fn main() {\n-    println!(\"hello\");\n+    println!(\"bye\");\n }\n";
    let mut s = fx.session_with(
        json!({ "require_expected_sha256": true }),
        true,
        Default::default(),
    );
    let e = call(&mut s, "apply_patch", json!({ "patch": patch })).unwrap_err();
    assert_eq!(e.reason.as_deref(), Some("sha_required"));
    let wrong = sha256(b"something else");
    let e = call(
        &mut s,
        "apply_patch",
        json!({ "patch": patch, "expected_sha256s": { "src/main.rs": wrong } }),
    )
    .unwrap_err();
    assert_eq!(file_tools_host::code_name(e.code), "WRITE_CONFLICT");
    let right = sha256(&std::fs::read(fx.repo.join("src/main.rs")).unwrap());
    let e = call(
        &mut s,
        "apply_patch",
        json!({ "patch": patch, "expected_sha256s": { "src/main.rs": right, "README.md": right } }),
    )
    .unwrap_err();
    assert_eq!(file_tools_host::code_name(e.code), "INVALID_INPUT");
    assert_eq!(fx.snapshot(), before, "a refused patch changed something");
    let ok = call(
        &mut s,
        "apply_patch",
        json!({ "patch": patch, "expected_sha256s": { "./src/main.rs": right } }),
    );
    assert!(ok.is_ok(), "{ok:?}");
    assert!(std::fs::read_to_string(fx.repo.join("src/main.rs"))
        .unwrap()
        .contains("bye"));
}

/// Paths the read rules hide are invisible: every tool answers for an existing hidden path
/// exactly as for a missing one (same code, same message but for the path), listings and
/// searches neither show nor count them, and writes to them are refused the same way
/// whether they exist or not. Positive control: the same calls on an allowed path work.
#[test]
fn hidden_paths_answer_exactly_as_missing_ones() {
    let fx = Fixture::new();
    fx.write("private/notes.txt", b"hidden words\n");
    let before = fx.snapshot();
    let mut s = fx.session_with(
        json!({ "read": { "block": ["private/**", "private"] } }),
        true,
        Default::default(),
    );
    let answer =
        |s: &mut file_tools_host::Session, tool: &str, args: serde_json::Value, path: &str| {
            let e = call(s, tool, args).unwrap_err().to_json();
            (
                e["code"].clone(),
                e["message"].as_str().unwrap_or("").replace(path, "P"),
                e["reason"].clone(),
            )
        };
    for (exists, missing) in [
        ("private/notes.txt", "private/nothing.txt"),
        ("private", "private/nodir"),
    ] {
        for tool in ["read_file", "file_info", "list_dir", "search_text"] {
            let args = |p: &str| match tool {
                "list_dir" => json!({ "path": p }),
                "search_text" => json!({ "query": "hidden", "path": p }),
                _ => json!({ "path": p }),
            };
            let a = answer(&mut s, tool, args(exists), exists);
            let b = answer(&mut s, tool, args(missing), missing);
            assert_eq!(a, b, "{tool} tells {exists} from {missing}");
            assert_eq!(a.0, "NOT_FOUND", "{tool}");
        }
        let a = answer(
            &mut s,
            "write_file",
            json!({ "path": exists, "content": "x" }),
            exists,
        );
        let b = answer(
            &mut s,
            "write_file",
            json!({ "path": missing, "content": "x" }),
            missing,
        );
        assert_eq!(a.2, "not_readable");
        assert_eq!(b.2, "not_readable");
    }
    let listing = call(&mut s, "list_dir", json!({ "max_depth": 3 })).unwrap();
    assert!(!listing.to_string().contains("private"), "{listing}");
    let found = call(&mut s, "search_text", json!({ "query": "hidden words" })).unwrap();
    assert_eq!(found["total_matches"], 0);
    assert_eq!(fx.snapshot(), before);
    // Positive control.
    assert!(call(&mut s, "read_file", json!({ "path": "docs/guide.md" })).is_ok());
    assert!(call(
        &mut s,
        "write_file",
        json!({ "path": "docs/new.md", "content": "x" })
    )
    .is_ok());
}

/// With `blind_writes`, a hidden file may be replaced or deleted without a hash, and
/// nothing derived from its old content comes back: no old hash, no diff of it, no edit.
#[test]
fn blind_writes_return_nothing_of_the_old_content() {
    let fx = Fixture::new();
    fx.write("private/notes.txt", b"OLD-CONTENT-3141\n");
    let policy = json!({ "read": { "block": ["private/**"] }, "blind_writes": ["private/**"] });
    let mut s = fx.session_with(policy, true, Default::default());
    let e = call(
        &mut s,
        "edit_file",
        json!({ "path": "private/notes.txt", "edits": [{ "old_text": "OLD", "new_text": "NEW" }] }),
    )
    .unwrap_err();
    assert_eq!(e.reason.as_deref(), Some("blind_write_only"));
    let r = call(
        &mut s,
        "write_file",
        json!({ "path": "private/notes.txt", "content": "new text\n" }),
    )
    .unwrap();
    let text = r.to_string();
    assert!(!text.contains("OLD-CONTENT"), "{text}");
    assert!(r["changes"][0]["sha256_before"].is_null(), "{r}");
    assert!(!text.contains(&sha256(b"OLD-CONTENT-3141\n")), "{text}");
    assert_eq!(
        std::fs::read_to_string(fx.repo.join("private/notes.txt")).unwrap(),
        "new text\n"
    );
    let d = call(&mut s, "diff_workspace", json!({})).unwrap();
    assert!(!d.to_string().contains("OLD-CONTENT"), "{d}");
    assert!(!fx.events().iter().any(|e| e.diff.contains("OLD-CONTENT")));
}

/// What the attacker review found, pinned: no probe tells a hidden path from a missing one,
/// whatever lies in the hidden area (files, links out of the repository, loops, links to
/// visible files) and whatever the probe (a path below a hidden file, a link into the
/// hidden area from outside it), for every tool; a link into the hidden area shows no
/// target in listings.
#[cfg(unix)]
#[test]
fn no_probe_tells_hidden_from_missing() {
    let fx = Fixture::new();
    fx.write("private/a.txt", b"hidden\n");
    fx.symlink("/etc/passwd", "private/outlink");
    fx.symlink("loop2", "private/loop1");
    fx.symlink("loop1", "private/loop2");
    fx.symlink("../docs/guide.md", "private/inlink");
    fx.symlink("../private/a.txt", "pub/to_hidden");
    fx.symlink("../private/none.txt", "pub/to_hidden_missing");
    fx.symlink("../nowhere/none.txt", "pub/to_missing");
    for block in [json!(["private/**"]), json!(["private"])] {
        let mut s = fx.session_with(
            json!({ "read": { "block": block } }),
            true,
            Default::default(),
        );
        let answer = |s: &mut file_tools_host::Session, tool: &str, path: &str| {
            let args = match tool {
                "list_dir" | "read_file" | "read_media" | "file_info" | "delete_file" => {
                    json!({ "path": path })
                }
                "search_text" => json!({ "query": "x", "path": path }),
                "read_many" => json!({ "paths": [path] }),
                "write_file" | "append_file" => json!({ "path": path, "content": "x" }),
                "edit_file" => {
                    json!({ "path": path, "edits": [{ "old_text": "a", "new_text": "b" }] })
                }
                _ => unreachable!(),
            };
            let v = match call(s, tool, args) {
                Ok(v) if tool == "read_many" => v["files"][0]["outcome"].clone(),
                Ok(v) => v,
                Err(e) => e.to_json(),
            };
            v.to_string().replace(path, "P")
        };
        let missing = "private/never/here.txt";
        for tool in [
            "read_file",
            "read_media",
            "file_info",
            "list_dir",
            "search_text",
            "read_many",
            "write_file",
            "append_file",
            "edit_file",
            "delete_file",
        ] {
            let want = answer(&mut s, tool, missing);
            // (`private/**` hides what is in `private`, not the directory itself.)
            let dir_hidden = block == json!(["private"]);
            for probe in [
                "private/a.txt",
                "private/a.txt/x",
                "private/outlink",
                "private/loop1",
                "private/inlink",
                "private/zzzz/x",
                "private",
            ] {
                if probe == "private" && !dir_hidden {
                    continue;
                }
                assert_eq!(
                    answer(&mut s, tool, probe),
                    want,
                    "{tool} tells {probe} from a missing path ({block})"
                );
            }
        }
        // Links from visible places into the hidden area answer as a missing file, the same
        // whether their target exists.
        for tool in ["read_file", "file_info"] {
            let a = answer(&mut s, tool, "pub/to_hidden");
            let b = answer(&mut s, tool, "pub/to_hidden_missing");
            assert_eq!(a, b, "{tool}");
            assert!(a.contains("NOT_FOUND"), "{a}");
        }
        let listing = call(&mut s, "list_dir", json!({ "path": "pub" })).unwrap();
        assert!(!listing.to_string().contains("private"), "{listing}");
        // Positive control: a link to a visible, missing file still says what it is.
        let e = call(&mut s, "read_file", json!({ "path": "pub/to_missing" })).unwrap_err();
        assert!(e.message.contains("symlink"), "{}", e.message);
    }
}

/// What the attacker review found, pinned: reverting a blind write returns no hash (the
/// reverted content is the hidden original).
#[test]
fn reverting_a_blind_write_shows_no_hash() {
    let fx = Fixture::new();
    fx.write("private/p.txt", b"db_password=hunter2\n");
    let policy = json!({ "read": { "block": ["private/**"] }, "blind_writes": ["private/**"] });
    let mut s = fx.session_with(policy, true, Default::default());
    assert!(call(
        &mut s,
        "write_file",
        json!({ "path": "private/p.txt", "content": "new\n" })
    )
    .is_ok());
    let hidden = sha256(b"db_password=hunter2\n");
    for dry in [true, false] {
        let r = call(
            &mut s,
            "revert",
            json!({ "paths": ["private/p.txt"], "dry_run": dry }),
        )
        .unwrap();
        assert!(!r.to_string().contains(&hidden), "{r}");
        assert!(r["changes"][0]["sha256_after"].is_null(), "{r}");
    }
    assert!(!fx
        .events()
        .iter()
        .any(|e| format!("{e:?}").contains(&hidden)));
}
