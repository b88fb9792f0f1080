//! diff_workspace and revert: the session baseline, its survival of traps and restarts, and
//! secrets kept out of diffs.

use serde_json::json;

use crate::support::*;
use file_tools_host::{Limits, Session};

#[test]
fn diff_lists_creates_modifies_deletes_and_moves() {
    let fx = Fixture::new();
    let mut s = fx.session_with(
        relaxed(json!({ "allow_move": true })),
        true,
        Default::default(),
    );
    call(
        &mut s,
        "edit_file",
        json!({ "path": "src/lib.rs", "edits": [{ "old_text": "a + b", "new_text": "b + a" }] }),
    )
    .unwrap();
    call(
        &mut s,
        "write_file",
        json!({ "path": "NEW.md", "content": "new\n" }),
    )
    .unwrap();
    call(&mut s, "delete_file", json!({ "path": "pom.xml" })).unwrap();
    call(
        &mut s,
        "move_file",
        json!({ "from": "docs/guide.md", "to": "docs/manual.md" }),
    )
    .unwrap();
    let d = call(&mut s, "diff_workspace", json!({})).unwrap();
    let stats: Vec<(String, String)> = d["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        stats,
        [
            ("NEW.md".to_string(), "created".to_string()),
            ("docs/guide.md -> docs/manual.md".into(), "renamed".into()),
            ("pom.xml".into(), "deleted".into()),
            ("src/lib.rs".into(), "modified".into()),
        ]
    );
    let text = d["diff"].as_str().unwrap();
    assert!(text.contains("-    a + b\n+    b + a\n"));
    assert!(text.contains("rename from docs/guide.md"));
    use sha2::{Digest, Sha256};
    let sha: String = Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(d["diff_sha256"], sha);
    let only = call(
        &mut s,
        "diff_workspace",
        json!({ "paths": ["src"], "stat_only": true }),
    )
    .unwrap();
    assert_eq!(only["files"].as_array().unwrap().len(), 1);
    assert_eq!(only["diff"], "");
}

#[test]
fn revert_restores_the_baseline_guarded_by_sha() {
    let fx = Fixture::new();
    let before = fx.snapshot();
    let mut s = fx.session_with(relaxed(json!({})), true, Default::default());
    let v = call(
        &mut s,
        "write_file",
        json!({ "path": "src/main.rs", "content": "changed\n" }),
    )
    .unwrap();
    call(
        &mut s,
        "write_file",
        json!({ "path": "made.txt", "content": "made\n" }),
    )
    .unwrap();
    let now_sha = v["changes"][0]["sha256_after"]
        .as_str()
        .unwrap()
        .to_string();
    let stale = "0".repeat(64);
    let e = call(
        &mut s,
        "revert",
        json!({ "paths": ["src/main.rs"], "expected_sha256s": { "src/main.rs": stale } }),
    )
    .unwrap_err();
    assert_eq!(file_tools_host::code_name(e.code), "WRITE_CONFLICT");
    call(&mut s, "revert", json!({ "paths": ["src/main.rs", "made.txt"], "expected_sha256s": { "src/main.rs": now_sha } })).unwrap();
    assert_eq!(fx.snapshot(), before);
    let d = call(&mut s, "diff_workspace", json!({})).unwrap();
    assert_eq!(d["files"], json!([]));
}

#[test]
fn baseline_survives_a_trapped_call_and_a_restarted_host() {
    let fx = Fixture::new();
    let state = fx.repo.parent().unwrap().join("state");
    let original = std::fs::read(fx.repo.join("README.md")).unwrap();
    {
        let limits = Limits {
            fuel_per_call: 30_000_000,
            ..Limits::default()
        };
        let mut s = Session::builder(runtime())
            .repo(&fx.repo)
            .writable(true)
            .policy(relaxed(json!({})))
            .state_dir(&state)
            .limits(limits)
            .build()
            .unwrap();
        s.call(
            "write_file",
            r#"{"path":"README.md","content":"first change\n"}"#,
        )
        .unwrap();
        fx.write("huge.txt", "needle haystack\n".repeat(400_000).as_bytes());
        let r = s.call(
            "search_text",
            r#"{"query":"(needle|hay)+ \\w","regex":true,"output":"count"}"#,
        );
        assert_eq!(
            file_tools_host::code_name(r.unwrap_err().code),
            "LIMIT_EXCEEDED"
        );
        let d = s.call("diff_workspace", "{}").unwrap();
        assert!(d["diff"].as_str().unwrap().contains("+first change"));
    }
    // A new host process would build a new runtime and session on the same state dir.
    let mut s = Session::builder(runtime())
        .repo(&fx.repo)
        .writable(true)
        .state_dir(&state)
        .build()
        .unwrap();
    let d = s.call("diff_workspace", "{}").unwrap();
    assert!(
        d["diff"].as_str().unwrap().contains("-# demo"),
        "{}",
        d["diff"]
    );
    s.call("revert", r#"{"paths":["README.md"]}"#).unwrap();
    assert_eq!(std::fs::read(fx.repo.join("README.md")).unwrap(), original);
}

#[test]
fn state_dir_inside_the_repository_is_refused() {
    let fx = Fixture::new();
    let r = Session::builder(runtime())
        .repo(&fx.repo)
        .writable(true)
        .state_dir(fx.repo.join("state/deeper"))
        .build();
    assert!(
        matches!(r, Err(file_tools_host::HostError::Config(_))),
        "{r:?}"
    );
    // Refused before anything was made there.
    assert!(!fx.repo.join("state").exists());
}

#[test]
fn secret_content_never_appears_in_a_diff() {
    let fx = Fixture::new();
    let state = fx.repo.parent().unwrap().join("state");
    // A host policy that treats creds.txt as text lets one session write it...
    let open = json!({ "overrides": [{ "pattern": "creds.txt", "kind": "text" }] });
    let mut s = Session::builder(runtime())
        .repo(&fx.repo)
        .writable(true)
        .state_dir(&state)
        .policy(open)
        .build()
        .unwrap();
    s.call(
        "write_file",
        &json!({ "path": "creds.txt", "content": format!("token={SECRET_MARK}\n") }).to_string(),
    )
    .unwrap();
    drop(s);
    // ...and a later session on the same baseline under a policy that calls it a secret
    // shows that the file changed, never what it holds.
    let strict = json!({ "overrides": [{ "pattern": "creds.txt", "kind": "secret" }] });
    let mut s = Session::builder(runtime())
        .repo(&fx.repo)
        .writable(true)
        .state_dir(&state)
        .policy(strict)
        .build()
        .unwrap();
    let d = call(&mut s, "diff_workspace", json!({})).unwrap();
    assert_eq!(d["files"][0]["path"], "creds.txt");
    assert!(
        d["diff"]
            .as_str()
            .unwrap()
            .contains("Binary files /dev/null and b/creds.txt differ"),
        "{}",
        d["diff"]
    );
}
