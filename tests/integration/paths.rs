//! The path guard and symlink handling, through the component: every escape is refused,
//! nothing outside the repository is read, and nothing anywhere changes.

use serde_json::json;

use crate::support::*;

#[test]
fn escaping_and_foreign_paths_are_rejected_by_every_read_tool() {
    let fx = Fixture::new();
    let before = fx.snapshot();
    let mut s = fx.session();
    let bad = [
        "../outside/secret.txt",
        "src/../../outside/secret.txt",
        "/etc/passwd",
        "/outside/secret.txt",
        "C:\\Windows\\win.ini",
        "c:/x",
        "\\\\server\\share\\x",
        "//server/share",
        "a\u{0}b",
        "",
        "~/.ssh/id_rsa",
        "../repo-evil/x.txt",
        "..",
        "src/../..",
    ];
    for p in bad {
        let r = call(&mut s, "read_file", json!({ "path": p }));
        assert_eq!(code(&r), "PATH_REJECTED", "read_file {p:?}");
        let r = call(&mut s, "file_info", json!({ "path": p }));
        assert_eq!(code(&r), "PATH_REJECTED", "file_info {p:?}");
    }
    for p in ["../outside", "/", "../repo-evil", "/etc"] {
        assert_eq!(
            code(&call(&mut s, "list_dir", json!({ "path": p }))),
            "PATH_REJECTED",
            "list_dir {p}"
        );
        assert_eq!(
            code(&call(
                &mut s,
                "search_text",
                json!({ "query": "x", "path": p })
            )),
            "PATH_REJECTED"
        );
        assert_eq!(
            code(&call(
                &mut s,
                "find_files",
                json!({ "patterns": ["*"], "path": p })
            )),
            "PATH_REJECTED"
        );
    }
    assert_eq!(fx.snapshot(), before);
}

#[test]
fn dotdot_inside_the_root_is_normalised() {
    let fx = Fixture::new();
    let mut s = fx.session();
    let v = call(&mut s, "read_file", json!({ "path": "src/../pom.xml" })).unwrap();
    assert_eq!(v["path"], "pom.xml");
    assert_eq!(v["content"], "<project></project>\n");
}

#[cfg(unix)]
#[test]
fn symlinks_leading_outside_are_rejected_whatever_their_form() {
    let fx = Fixture::new();
    fx.symlink("../outside/secret.txt", "rel_out");
    fx.symlink(fx.outside.join("secret.txt").to_str().unwrap(), "abs_out");
    fx.symlink("../outside", "dir_out");
    fx.symlink("../../outside", "src/deep_out");
    fx.symlink("rel_out", "chain_out");
    let before = fx.snapshot();
    let mut s = fx.session();
    for p in [
        "rel_out",
        "abs_out",
        "dir_out/secret.txt",
        "src/deep_out/sub/inner.txt",
        "chain_out",
    ] {
        let r = call(&mut s, "read_file", json!({ "path": p }));
        assert_eq!(code(&r), "PATH_REJECTED", "{p}");
    }
    assert_eq!(
        code(&call(&mut s, "list_dir", json!({ "path": "dir_out" }))),
        "PATH_REJECTED"
    );
    // Walks list the links but never follow them.
    let v = call(
        &mut s,
        "search_text",
        json!({ "query": "SENTINEL", "include_hidden": true }),
    )
    .unwrap();
    assert_eq!(v["total_matches"], 0);
    let v = call(&mut s, "find_files", json!({ "patterns": ["*.txt"] })).unwrap();
    assert!(!v["paths"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p.as_str().unwrap().contains("secret")));
    assert_eq!(fx.snapshot(), before);
}

#[cfg(unix)]
#[test]
fn symlinks_inside_are_judged_by_their_target() {
    let fx = Fixture::new();
    fx.symlink(".env", "innocent.txt");
    fx.symlink(".git/config", "gitcfg");
    fx.symlink("src/lib.rs", "lib_link.rs");
    fx.symlink("src", "srcdir");
    fx.symlink("missing.txt", "dangling");
    fx.symlink("loop_b", "loop_a");
    fx.symlink("loop_a", "loop_b");
    let mut s = fx.session();
    let r = call(&mut s, "read_file", json!({ "path": "innocent.txt" }));
    assert_eq!(code(&r), "POLICY_DENIED");
    assert_eq!(r.unwrap_err().reason.as_deref(), Some("secret"));
    assert_eq!(
        code(&call(&mut s, "read_file", json!({ "path": "gitcfg" }))),
        "POLICY_DENIED"
    );
    let v = call(&mut s, "read_file", json!({ "path": "lib_link.rs" })).unwrap();
    assert!(v["content"].as_str().unwrap().contains("pub fn add"));
    let v = call(&mut s, "read_file", json!({ "path": "srcdir/main.rs" })).unwrap();
    assert!(v["content"].as_str().unwrap().contains("hello"));
    assert_eq!(
        code(&call(&mut s, "read_file", json!({ "path": "dangling" }))),
        "NOT_FOUND"
    );
    assert_eq!(
        code(&call(&mut s, "read_file", json!({ "path": "loop_a" }))),
        "PATH_REJECTED"
    );
    let info = call(&mut s, "file_info", json!({ "path": "innocent.txt" })).unwrap();
    assert_eq!(info["kind"], "secret");
    assert_eq!(info["type"], "symlink");
    assert_eq!(info["target"], ".env");
    assert_eq!(info["readable"], false);
    assert!(info["sha256"].is_null());
}

#[cfg(unix)]
#[test]
fn special_files_are_never_opened() {
    let fx = Fixture::new();
    let fifo = fx.repo.join("pipe");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(status.success());
    let mut s = fx.session();
    // Opening a FIFO for reading would block forever; the tools must refuse it instead.
    assert_eq!(
        code(&call(&mut s, "read_file", json!({ "path": "pipe" }))),
        "NOT_A_FILE"
    );
    let v = call(&mut s, "search_text", json!({ "query": "zzz" })).unwrap();
    assert_eq!(v["total_matches"], 0);
    let v = call(&mut s, "file_info", json!({ "path": "pipe" })).unwrap();
    assert_eq!(v["type"], "other");
}
