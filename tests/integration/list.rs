//! `list_dir` and `find_files` through the component.

use serde_json::{json, Value};

use crate::support::*;

fn paths(v: &Value, key: &str) -> Vec<String> {
    v[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.get("path").unwrap_or(e).as_str().unwrap().to_string())
        .collect()
}

#[test]
fn lists_the_root_sorted_with_skips_counted() {
    let fx = Fixture::new();
    let mut s = fx.session();
    let v = call(&mut s, "list_dir", json!({})).unwrap();
    assert_eq!(
        paths(&v, "entries"),
        [
            "Cargo.lock",
            "Cargo.toml",
            "README.md",
            "bom.txt",
            "config",
            "crlf.txt",
            "data.bin",
            "docs",
            "image.png",
            "pom.xml",
            "src",
            "vendor"
        ]
    );
    let skipped: Vec<(String, u64)> = v["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["reason"].as_str().unwrap().to_string(),
                s["count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert!(skipped.contains(&("ignored".into(), 2)), "{skipped:?}");
    assert!(skipped.contains(&("generated".into(), 1)), "{skipped:?}");
    assert!(skipped.contains(&("git_internal".into(), 1)), "{skipped:?}");
    let src = v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["path"] == "src")
        .unwrap();
    assert_eq!(
        (src["type"].as_str(), src["kind"].as_str()),
        (Some("dir"), Some("directory"))
    );
    let lock = v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["path"] == "Cargo.lock")
        .unwrap();
    assert_eq!(lock["kind"], "lockfile");
    assert_eq!(lock["size"], 7);
}

#[test]
fn depth_hidden_and_ignore_switches() {
    let fx = Fixture::new();
    let mut s = fx.session();
    let v = call(&mut s, "list_dir", json!({ "path": "src", "max_depth": 3 })).unwrap();
    assert_eq!(
        paths(&v, "entries"),
        [
            "src/lib.rs",
            "src/main.rs",
            "src/util",
            "src/util/strings.rs"
        ]
    );
    let v = call(
        &mut s,
        "list_dir",
        json!({ "include_hidden": true, "respect_ignore": false }),
    )
    .unwrap();
    let all = paths(&v, "entries");
    for p in [".env", ".gitignore", "app.log", "ignored_dir", "target"] {
        assert!(all.contains(&p.to_string()), "{p} missing from {all:?}");
    }
    assert!(!all.contains(&".git".to_string()));
    let env = v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["path"] == ".env")
        .unwrap();
    assert_eq!(env["kind"], "secret");
}

#[test]
fn truncation_is_reported() {
    let fx = Fixture::new();
    let mut s = fx.session();
    let v = call(&mut s, "list_dir", json!({ "max_entries": 3 })).unwrap();
    assert_eq!(v["entries"].as_array().unwrap().len(), 3);
    assert_eq!(v["truncated"], true);
    assert_eq!(v["stopped_by"], json!({"cap": "max_entries", "limit": 3}));
    let summary = v["summary"].as_str().unwrap();
    assert!(summary.contains("3 entries"), "{summary}");
    assert!(summary.contains("stopped at max_entries = 3"), "{summary}");
}

#[test]
fn list_dir_refusals() {
    let fx = Fixture::new();
    let mut s = fx.session();
    assert_eq!(
        code(&call(&mut s, "list_dir", json!({ "path": "README.md" }))),
        "NOT_A_FILE"
    );
    assert_eq!(
        code(&call(&mut s, "list_dir", json!({ "path": "nope" }))),
        "NOT_FOUND"
    );
    assert_eq!(
        code(&call(&mut s, "list_dir", json!({ "path": ".git" }))),
        "POLICY_DENIED"
    );
    assert_eq!(
        code(&call(&mut s, "list_dir", json!({ "path": 3 }))),
        "INVALID_INPUT"
    );
}

#[test]
fn find_files_by_name_and_path_globs() {
    let fx = Fixture::new();
    let mut s = fx.session();
    let v = call(&mut s, "find_files", json!({ "patterns": ["*.rs"] })).unwrap();
    assert_eq!(
        paths(&v, "paths"),
        [
            "src/lib.rs",
            "src/main.rs",
            "src/util/strings.rs",
            "vendor/lib/v.rs"
        ]
    );
    let v = call(&mut s, "find_files", json!({ "patterns": ["src/*.rs"] })).unwrap();
    assert_eq!(paths(&v, "paths"), ["src/lib.rs", "src/main.rs"]);
    let v = call(
        &mut s,
        "find_files",
        json!({ "patterns": ["*.md", "*.xml"], "path": "docs" }),
    )
    .unwrap();
    assert_eq!(paths(&v, "paths"), ["docs/guide.md"]);
    let v = call(
        &mut s,
        "find_files",
        json!({ "patterns": ["*.txt", "*.log"] }),
    )
    .unwrap();
    assert_eq!(paths(&v, "paths"), ["bom.txt", "crlf.txt"]);
    let v = call(
        &mut s,
        "find_files",
        json!({ "patterns": ["*.txt"], "respect_ignore": false }),
    )
    .unwrap();
    assert!(paths(&v, "paths").contains(&"target/debug/out.txt".to_string()));
    let v = call(
        &mut s,
        "find_files",
        json!({ "patterns": ["*"], "max_results": 2 }),
    )
    .unwrap();
    assert_eq!(
        (
            v["paths"].as_array().unwrap().len(),
            v["truncated"].as_bool()
        ),
        (2, Some(true))
    );
    assert_eq!(
        code(&call(&mut s, "find_files", json!({ "patterns": ["a[b"] }))),
        "INVALID_INPUT"
    );
    assert_eq!(
        code(&call(&mut s, "find_files", json!({ "patterns": [] }))),
        "INVALID_INPUT"
    );
}

/// Through the host, `list_dir` shows each entry's own size and time, and neither for a
/// file with another name (a hard link, perhaps to a file outside) or a secret.
#[cfg(unix)]
#[test]
fn listed_sizes_and_times_are_each_entrys_own_and_hidden_for_hard_links_and_secrets() {
    let fx = Fixture::new();
    fx.write("meta/plain.txt", b"twelve bytes");
    fx.write("meta/longer.txt", &[b'x'; 5000]);
    fx.write("meta/.env", b"TOKEN=abc\n");
    let outside = fx.repo.parent().unwrap().join("outside-linked.txt");
    std::fs::write(&outside, b"outside content, 31 bytes long\n").unwrap();
    std::fs::hard_link(&outside, fx.repo.join("meta/linked.txt")).unwrap();
    let mut s = fx.session();
    let v = call(
        &mut s,
        "list_dir",
        json!({ "path": "meta", "include_hidden": true }),
    )
    .unwrap();
    let entry = |name: &str| -> Value {
        v["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["path"] == format!("meta/{name}"))
            .cloned()
            .unwrap_or_else(|| panic!("{name} listed: {v}"))
    };
    assert_eq!(entry("plain.txt")["size"], 12);
    assert_eq!(entry("longer.txt")["size"], 5000);
    assert!(entry("plain.txt")["modified"].is_string(), "{v}");
    for hidden in ["linked.txt", ".env"] {
        assert_eq!(entry(hidden)["size"], 0, "{hidden}: {v}");
        assert!(entry(hidden)["modified"].is_null(), "{hidden}: {v}");
    }
}

/// One session, one `.gitignore` rewritten between two walks (to the same size): the
/// second walk follows the new rules (compiled rules are kept only for the same text).
#[test]
fn a_rewritten_gitignore_rules_the_next_walk_of_the_same_session() {
    let fx = Fixture::new();
    fx.write("ign/.gitignore", b"*.aaa\n");
    fx.write("ign/x.aaa", b"1\n");
    fx.write("ign/x.bbb", b"2\n");
    let mut s = fx.session();
    let find = json!({ "patterns": ["ign/*"] });
    let v = call(&mut s, "find_files", find.clone()).unwrap();
    assert_eq!(paths(&v, "paths"), ["ign/x.bbb"]);
    fx.write("ign/.gitignore", b"*.bbb\n");
    let v = call(&mut s, "find_files", find).unwrap();
    assert_eq!(paths(&v, "paths"), ["ign/x.aaa"]);
    let v = call(&mut s, "list_dir", json!({ "path": "ign" })).unwrap();
    assert_eq!(paths(&v, "entries"), ["ign/x.aaa"]);
}
