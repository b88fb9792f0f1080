//! The standalone component under the real `wasmtime` CLI (48, installed by
//! `scripts/setup.sh`): typed and JSON calls with `--invoke`, audit lines on stderr, refusals,
//! and no imports beyond WASI.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::support::*;

fn wasmtime() -> PathBuf {
    let exe = std::env::var_os("WASMTIME").map_or_else(|| PathBuf::from("wasmtime"), PathBuf::from);
    let out = Command::new(&exe)
        .arg("--version")
        .output()
        .unwrap_or_else(|e| {
            panic!("the wasmtime CLI is needed for these tests ({e}); scripts/setup.sh installs it")
        });
    let version = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        version.starts_with("wasmtime 48."),
        "wasmtime 48 expected, found {version}"
    );
    exe
}

/// The standalone component, written once per test run (outside every fixture).
fn standalone() -> &'static Path {
    static WASM: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    &WASM
        .get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("file-tools-standalone.wasm");
            std::fs::write(&path, file_tools_host::runtime::STANDALONE_WASM).unwrap();
            (dir, path)
        })
        .1
}

/// Runs `wasmtime run --dir REPO::/ [--env ...] --invoke CALL WASM`; returns stdout, stderr.
fn invoke(fx: &Fixture, env: &[(&str, &str)], call: &str) -> (String, String) {
    let mut cmd = Command::new(wasmtime());
    cmd.arg("run")
        .arg("--dir")
        .arg(format!("{}::/", fx.repo.display()));
    for (k, v) in env {
        cmd.arg("--env").arg(format!("{k}={v}"));
    }
    let out = cmd
        .arg("--invoke")
        .arg(call)
        .arg(standalone())
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn typed_read_file_under_the_wasmtime_cli() {
    let fx = Fixture::new();
    let (out, err) = invoke(
        &fx,
        &[],
        r#"agent:file-tools/tools.read-file@0.2.0({path: "src/lib.rs", max-lines: some(2)})"#,
    );
    assert!(out.starts_with("ok({path: \"src/lib.rs\""), "{out}\n{err}");
    assert!(
        out.contains(r#"content: "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n""#),
        "{out}"
    );
    let digest = sha256(
        std::fs::read(fx.repo.join("src/lib.rs"))
            .unwrap()
            .as_slice(),
    );
    assert!(out.contains(&digest), "{out}");
    // The audit event goes to stderr as one JSON line.
    let event: serde_json::Value = serde_json::from_str(err.lines().next().unwrap()).unwrap();
    assert_eq!(event["tool"], "read_file");
    assert_eq!(event["paths_read"], serde_json::json!(["src/lib.rs"]));

    // A host that keeps no audit says so, and then gets no lines; the call is the same.
    let (quiet, err) = invoke(
        &fx,
        &[("FILE_TOOLS_AUDIT", "off")],
        r#"agent:file-tools/tools.read-file@0.2.0({path: "src/lib.rs", max-lines: some(2)})"#,
    );
    assert_eq!(quiet, out);
    assert!(!err.contains("read_file"), "{err}");
}

#[test]
fn escapes_are_refused_under_the_wasmtime_cli() {
    let fx = Fixture::new();
    let before = fx.snapshot();
    for path in ["../outside/secret.txt", "/etc/passwd", ".env"] {
        let (out, err) = invoke(
            &fx,
            &[],
            &format!(r#"agent:file-tools/tools.read-file@0.2.0({{path: "{path}"}})"#),
        );
        assert!(out.starts_with("err({code: "), "{path}: {out}\n{err}");
        assert_no_leak(&out);
        assert_no_leak(&err);
    }
    let (out, _) = invoke(
        &fx,
        &[],
        r#"call("write_file", "{\"path\":\"../outside/secret.txt\",\"content\":\"x\"}")"#,
    );
    assert!(out.contains("path-rejected"), "{out}");
    assert_eq!(fx.snapshot(), before);
}

#[test]
fn json_calls_change_files_and_policy_comes_from_the_environment() {
    let fx = Fixture::new();
    let (out, err) = invoke(
        &fx,
        &[],
        r#"call("write_file", "{\"path\":\"notes/new.txt\",\"content\":\"hello\\n\"}")"#,
    );
    assert!(out.starts_with("ok("), "{out}\n{err}");
    assert_eq!(
        std::fs::read_to_string(fx.repo.join("notes/new.txt")).unwrap(),
        "hello\n"
    );
    // Nobody can approve under the plain CLI: a marked change is refused.
    let before = fx.snapshot();
    let (out, _) = invoke(
        &fx,
        &[(
            "FILE_TOOLS_POLICY",
            r#"{"approval":{"delete":true},"allow_overwrite_without_sha256":true}"#,
        )],
        r#"call("delete_file", "{\"path\":\"README.md\"}")"#,
    );
    assert!(out.contains("approval-required"), "{out}");
    assert_eq!(fx.snapshot(), before);
    let (out, _) = invoke(
        &fx,
        &[("FILE_TOOLS_POLICY", r#"{"read_only":true}"#)],
        r#"call("delete_file", "{\"path\":\"README.md\"}")"#,
    );
    assert!(out.starts_with("err("), "{out}");
    assert_eq!(fx.snapshot(), before);
}
