//! The adversarial suite: attacks grouped by kind. Each refused call must give its code,
//! leave the sentinel beside the repository unread and unchanged, leave the repository
//! byte-identical, and produce exactly one audit event.

use serde_json::{json, Value};

use crate::support::*;
use file_tools_host::Session;

/// Runs a call that must be refused with `want`, checking everything the suite promises.
fn refused(fx: &Fixture, s: &mut Session, tool: &str, args: Value, want: &str) {
    let before = fx.snapshot();
    let events = fx.events().len();
    let r = call(s, tool, args.clone());
    assert_eq!(code(&r), want, "{tool} {}", shorten(&args));
    assert_eq!(
        fx.snapshot(),
        before,
        "{tool} {} changed something",
        shorten(&args)
    );
    assert_eq!(
        fx.events().len(),
        events + 1,
        "{tool}: not exactly one audit event"
    );
}

fn shorten(v: &Value) -> String {
    v.to_string().chars().take(200).collect()
}

mod path_escape {
    use super::*;

    #[test]
    fn dotdot_in_every_position() {
        let fx = Fixture::new();
        let mut s = fx.session();
        let parts = ["src", "util", "strings.rs"];
        for i in 0..=parts.len() {
            for ups in 1..=4 {
                let mut p: Vec<&str> = parts[..i].to_vec();
                p.extend(std::iter::repeat_n("..", i + ups));
                p.push("outside/secret.txt");
                let path = p.join("/");
                refused(
                    &fx,
                    &mut s,
                    "read_file",
                    json!({ "path": path }),
                    "PATH_REJECTED",
                );
                refused(
                    &fx,
                    &mut s,
                    "write_file",
                    json!({ "path": path, "content": "x" }),
                    "PATH_REJECTED",
                );
            }
        }
    }

    #[test]
    fn absolute_drive_unc_sibling_nul_and_overlong() {
        let fx = Fixture::new();
        let mut s = fx.session();
        let sibling = format!(
            "../{}-evil/x.txt",
            fx.repo.file_name().unwrap().to_str().unwrap()
        );
        let long_name = "n".repeat(300);
        let long_path = "d/".repeat(2500) + "f";
        for p in [
            fx.outside.join("secret.txt").display().to_string(),
            "/etc/passwd".into(),
            "C:/Windows/win.ini".into(),
            "\\\\?\\C:\\x".into(),
            "\\\\server\\share\\x".into(),
            sibling,
            "src\u{0}/../../outside/secret.txt".into(),
            long_name,
            long_path,
        ] {
            refused(
                &fx,
                &mut s,
                "read_file",
                json!({ "path": p }),
                "PATH_REJECTED",
            );
            refused(
                &fx,
                &mut s,
                "delete_file",
                json!({ "path": p }),
                "PATH_REJECTED",
            );
        }
    }
}

#[cfg(unix)]
mod symlinks {
    use super::*;

    #[test]
    fn absolute_links_are_refused_even_when_they_point_inside() {
        let fx = Fixture::new();
        fx.symlink(fx.repo.join("src/lib.rs").to_str().unwrap(), "abs_in");
        let mut s = fx.session();
        refused(
            &fx,
            &mut s,
            "read_file",
            json!({ "path": "abs_in" }),
            "PATH_REJECTED",
        );
        refused(
            &fx,
            &mut s,
            "write_file",
            json!({ "path": "abs_in", "content": "x" }),
            "PATH_REJECTED",
        );
    }

    #[test]
    fn chains_loops_and_links_into_git() {
        let fx = Fixture::new();
        fx.symlink("hop2", "hop1");
        fx.symlink("hop3", "hop2");
        fx.symlink("../outside", "hop3");
        fx.symlink("self", "self");
        fx.symlink(".git", "gitdir");
        let mut s = fx.session();
        refused(
            &fx,
            &mut s,
            "read_file",
            json!({ "path": "hop1/secret.txt" }),
            "PATH_REJECTED",
        );
        refused(
            &fx,
            &mut s,
            "write_file",
            json!({ "path": "hop1/new.txt", "content": "x" }),
            "PATH_REJECTED",
        );
        refused(
            &fx,
            &mut s,
            "read_file",
            json!({ "path": "self" }),
            "PATH_REJECTED",
        );
        refused(
            &fx,
            &mut s,
            "read_file",
            json!({ "path": "gitdir/config" }),
            "POLICY_DENIED",
        );
        refused(
            &fx,
            &mut s,
            "write_file",
            json!({ "path": "gitdir/hooks/pre-commit", "content": "x" }),
            "POLICY_DENIED",
        );
        // A new file inside a symlinked directory that stays inside is fine...
        fx.symlink("src", "srcdir");
        call(
            &mut s,
            "write_file",
            json!({ "path": "srcdir/made.rs", "content": "// made\n" }),
        )
        .unwrap();
        assert!(fx.repo.join("src/made.rs").exists());
        // ...but a dangling link is never created through.
        fx.symlink("nowhere/file.txt", "dangling");
        refused(
            &fx,
            &mut s,
            "write_file",
            json!({ "path": "dangling", "content": "x" }),
            "PATH_REJECTED",
        );
        refused(
            &fx,
            &mut s,
            "list_dir",
            json!({ "path": "gitdir" }),
            "POLICY_DENIED",
        );
    }
}

mod patch_headers {
    use super::*;

    #[test]
    fn escaping_absolute_git_and_link_patches_apply_nothing() {
        let fx = Fixture::new();
        let mut s = fx.session();
        for patch in [
            "--- /dev/null\n+++ /etc/cron.d/x\n@@ -0,0 +1 @@\n+x\n",
            "--- /dev/null\n+++ b/../../outside/new\n@@ -0,0 +1 @@\n+x\n",
            "diff --git a/README.md b/../README.md\nsimilarity index 100%\nrename from README.md\nrename to ../README.md\n",
            "--- /dev/null\n+++ b/.git/hooks/pre-commit\n@@ -0,0 +1 @@\n+#!/bin/sh\n",
            "*** Begin Patch\n*** Add File: ../outside/evil\n+x\n*** End Patch\n",
            "*** Begin Patch\n*** Update File: README.md\n*** Move to: /tmp/evil\n@@\n-# demo\n+# x\n*** End Patch\n",
        ] {
            let want = if patch.contains(".git/") { "POLICY_DENIED" } else { "PATH_REJECTED" };
            refused(&fx, &mut s, "apply_patch", json!({ "patch": patch }), want);
        }
        // A patch that makes a link and then writes through it is refused as a whole.
        let link_then_write = "diff --git a/lnk b/lnk\nnew file mode 120000\n--- /dev/null\n+++ b/lnk\n@@ -0,0 +1 @@\n+../outside\n\\ No newline at end of file\n\
--- /dev/null\n+++ b/lnk/secret2.txt\n@@ -0,0 +1 @@\n+x\n";
        refused(
            &fx,
            &mut s,
            "apply_patch",
            json!({ "patch": link_then_write }),
            "POLICY_DENIED",
        );
    }
}

mod encodings {
    use super::*;

    #[test]
    fn invalid_utf8_nul_and_foreign_names() {
        let fx = Fixture::new();
        // Mostly UTF-8 with one stray byte: broken UTF-8, not surely any other encoding
        // (text that surely is Latin-1 is read and edited as such: `encodings.rs`).
        fx.write("latin1.txt", b"caf\xc3\xa9 and caf\xe9\n");
        fx.write("nul.txt", b"text\0more\n");
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            std::fs::write(
                fx.repo
                    .join(std::ffi::OsStr::from_bytes(b"bad\xffname.txt")),
                "x",
            )
            .unwrap();
        }
        let mut s = fx.session();
        let v = call(&mut s, "read_file", json!({ "path": "latin1.txt" })).unwrap();
        assert_eq!(v["valid_utf8"], false);
        refused(
            &fx,
            &mut s,
            "edit_file",
            json!({ "path": "latin1.txt", "edits": [{ "old_text": "caf", "new_text": "cof" }] }),
            "ENCODING_ERROR",
        );
        refused(
            &fx,
            &mut s,
            "read_file",
            json!({ "path": "nul.txt" }),
            "UNSUPPORTED_BINARY",
        );
        refused(
            &fx,
            &mut s,
            "edit_file",
            json!({ "path": "nul.txt", "edits": [{ "old_text": "text", "new_text": "t" }] }),
            "UNSUPPORTED_BINARY",
        );
        let v = call(&mut s, "list_dir", json!({})).unwrap();
        #[cfg(unix)]
        assert!(
            v["skipped"].to_string().contains("encoding"),
            "{}",
            v["skipped"]
        );
        let _ = v;
    }
}

mod resource_abuse {
    use super::*;

    #[test]
    fn huge_sparse_and_single_line_files() {
        let fx = Fixture::new();
        let sparse = std::fs::File::create(fx.repo.join("sparse.txt")).unwrap();
        sparse.set_len(20 << 30).unwrap();
        fx.write("oneline.txt", "x".repeat(100 << 20).as_bytes());
        let mut s = fx.session();
        refused(
            &fx,
            &mut s,
            "read_file",
            json!({ "path": "sparse.txt" }),
            "FILE_TOO_LARGE",
        );
        refused(
            &fx,
            &mut s,
            "read_file",
            json!({ "path": "sparse.txt", "start_line": 1 }),
            "UNSUPPORTED_BINARY",
        );
        refused(
            &fx,
            &mut s,
            "read_file",
            json!({ "path": "oneline.txt" }),
            "FILE_TOO_LARGE",
        );
        let v = call(
            &mut s,
            "read_file",
            json!({ "path": "oneline.txt", "start_line": 1, "max_lines": 1 }),
        )
        .unwrap();
        assert_eq!(v["truncated"], true);
        assert_eq!(v["content"].as_str().unwrap().len(), 256 * 1024);
        let v = call(&mut s, "file_info", json!({ "path": "sparse.txt" })).unwrap();
        assert!(v["sha256"].is_null());
        let v = call(&mut s, "search_text", json!({ "query": "zzz" })).unwrap();
        assert!(v["skipped"].to_string().contains("too_large"));
        refused(
            &fx,
            &mut s,
            "edit_file",
            json!({ "path": "oneline.txt", "edits": [{ "old_text": "xx", "new_text": "y" }] }),
            "FILE_TOO_LARGE",
        );
        refused(
            &fx,
            &mut s,
            "append_file",
            json!({ "path": "oneline.txt", "content": "y" }),
            "FILE_TOO_LARGE",
        );
    }

    #[cfg(unix)]
    #[test]
    fn very_deep_directories_do_not_break_walks() {
        let fx = Fixture::new();
        // Far deeper than PATH_MAX allows naming from the top: built one level at a time.
        let script = "import os\nfd = os.open('.', os.O_RDONLY)\nos.mkdir('deep', dir_fd=fd)\nfd = os.open('deep', os.O_RDONLY, dir_fd=fd)\nfor _ in range(10000):\n    os.mkdir('d', dir_fd=fd)\n    fd = os.open('d', os.O_RDONLY, dir_fd=fd)\nos.close(os.open('f.txt', os.O_CREAT | os.O_WRONLY, dir_fd=fd))\n";
        let status = std::process::Command::new("python3")
            .arg("-c")
            .arg(script)
            .current_dir(&fx.repo)
            .status()
            .unwrap();
        assert!(status.success());
        let mut s = fx.session();
        let v = call(
            &mut s,
            "find_files",
            json!({ "patterns": ["*.txt"], "path": "deep" }),
        )
        .unwrap();
        assert!(v["paths"].as_array().unwrap().len() <= 1);
        let v = call(
            &mut s,
            "list_dir",
            json!({ "path": "deep", "max_depth": 64 }),
        )
        .unwrap();
        assert_eq!(v["entries"].as_array().unwrap().len(), 64);
        call(
            &mut s,
            "search_text",
            json!({ "query": "bottom", "path": "deep" }),
        )
        .unwrap();
    }

    #[test]
    fn pathological_regexes_and_oversized_requests() {
        let fx = Fixture::new();
        fx.write("aaa.txt", ("a".repeat(50_000) + "\n").repeat(20).as_bytes());
        let mut s = fx.session();
        let started = std::time::Instant::now();
        let v = call(
            &mut s,
            "search_text",
            json!({ "query": "(a*)*b", "regex": true, "path": "aaa.txt" }),
        )
        .unwrap();
        assert_eq!(v["total_matches"], 0);
        assert!(started.elapsed() < std::time::Duration::from_secs(20));
        refused(
            &fx,
            &mut s,
            "search_text",
            json!({ "query": "(((((a{1,100}){1,100}){1,100}){1,100}){1,100})", "regex": true }),
            "INVALID_INPUT",
        );
        refused(
            &fx,
            &mut s,
            "write_file",
            json!({ "path": "big.txt", "content": "y".repeat(20 << 20) }),
            "LIMIT_EXCEEDED",
        );
        let paths: Vec<String> = (0..5000).map(|i| format!("f{i}")).collect();
        refused(
            &fx,
            &mut s,
            "read_many",
            json!({ "paths": paths }),
            "LIMIT_EXCEEDED",
        );
        let patch = format!(
            "--- /dev/null\n+++ b/huge.txt\n@@ -0,0 +1,300000 @@\n{}",
            "+x\n".repeat(300_000)
        );
        refused(
            &fx,
            &mut s,
            "apply_patch",
            json!({ "patch": patch }),
            "PATCH_BUDGET_EXCEEDED",
        );
    }
}
