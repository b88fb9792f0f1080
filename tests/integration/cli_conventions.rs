//! The CLI behaves like one: help and version exit 0, usage errors exit 2 with one line
//! instead of the whole usage, each tool explains its arguments, and `--format text`
//! prints what grep and diff print.

use crate::cli::{cli, cli_call, cli_command};
use crate::support::*;

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn help_and_version_exit_zero() {
    for args in [
        &["--help"][..],
        &["-h"],
        &["help"],
        &["help", "call"],
        &["call", "--help"],
        &["audit", "--help"],
    ] {
        let (out, _) = cli(args, None);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert!(
            stdout(&out).contains("Usage:"),
            "{args:?}: {}",
            stdout(&out)
        );
    }
    let (out, _) = cli(&["--help"], None);
    for cmd in [
        "call",
        "tools",
        "schema",
        "mcp",
        "session",
        "component",
        "audit",
        "completions",
    ] {
        assert!(stdout(&out).contains(cmd), "--help does not name {cmd}");
    }
    // Every option is documented, with its default where it has one.
    assert!(stdout(&out).contains("[default: default]"));
    let (out, _) = cli(&["--version"], None);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stdout(&out).trim(),
        format!("file-tools {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn usage_errors_are_one_short_message_and_exit_two() {
    let (out, _) = cli(&["--bogus", "tools"], None);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("--bogus"), "{err}");
    // Not the whole usage of every command: a pointer to --help instead.
    assert!(!err.contains("completions"), "{err}");
    assert!(err.lines().count() <= 6, "{err}");
    let (out, _) = cli(&["call"], None);
    assert_eq!(out.status.code(), Some(2));
    let (out, _) = cli(&["frobnicate"], None);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_subcommand_help_flag_is_never_taken_for_a_file_name() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_file-tools"))
        .args(["component", "--help"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(
        std::fs::read_dir(dir.path()).unwrap().next().is_none(),
        "a file was written"
    );
}

#[test]
fn tools_lists_each_tool_and_call_help_shows_its_arguments() {
    let (out, _) = cli(&["tools"], None);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    let read = text
        .lines()
        .find(|l| l.starts_with("read_file "))
        .expect(&text);
    assert!(read.contains("Read a text file"), "{read}");
    // Under a read-only policy the mutation tools are not offered.
    let (out, _) = cli(&["--read-only", "tools"], None);
    assert!(!stdout(&out).contains("write_file"));
    assert!(stdout(&out).contains("search_text"));

    let (out, _) = cli(&["call", "edit_file", "--help"], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let help = stdout(&out);
    assert!(help.contains("  path (string, required)"), "{help}");
    assert!(help.contains("  edits (array of"), "{help}");
    assert!(help.contains("expected_sha256"), "{help}");
    let (out, _) = cli(&["call", "no_such_tool", "--help"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no tool 'no_such_tool'"));
}

#[test]
fn text_format_prints_hits_like_grep_and_errors_as_one_line() {
    let fx = Fixture::new();
    let repo = fx.repo.to_str().unwrap();
    let (out, _) = cli(
        &[
            "--repo",
            repo,
            "--format",
            "text",
            "call",
            "search_text",
            r#"{"query":"pub fn add"}"#,
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out)
            .lines()
            .any(|l| l == "src/lib.rs:1:pub fn add(a: i32, b: i32) -> i32 {"),
        "{}",
        stdout(&out)
    );
    let (out, _) = cli(
        &[
            "--repo",
            repo,
            "call",
            "read_file",
            r#"{"path":"missing.rs"}"#,
            "--format",
            "text",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).is_empty());
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("NOT_FOUND: "), "{err}");
    // JSON stays the default when stdout is not a terminal (it is a pipe here).
    let (out, v) = cli_call(repo, "read_file", r#"{"path":"missing.rs"}"#);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(v["error"]["code"], "NOT_FOUND");
}

#[test]
fn text_format_shows_a_change_as_a_unified_diff() {
    let fx = Fixture::new();
    let repo = fx.repo.to_str().unwrap();
    let (_, page) = cli_call(repo, "read_file", r#"{"path":"src/main.rs"}"#);
    let sha = page["result"]["sha256"].as_str().unwrap().to_string();
    let args = serde_json::json!({
        "path": "src/main.rs", "expected_sha256": sha,
        "edits": [{"old_text": "hello", "new_text": "goodbye"}]
    })
    .to_string();
    let (out, _) = cli(
        &[
            "--repo",
            repo,
            "--format",
            "text",
            "call",
            "edit_file",
            &args,
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let diff = stdout(&out);
    assert!(
        diff.contains("--- a/src/main.rs\n+++ b/src/main.rs\n@@"),
        "{diff}"
    );
    assert!(
        diff.lines()
            .any(|l| l.starts_with('-') && l.contains("hello")),
        "{diff}"
    );
    assert!(
        diff.lines()
            .any(|l| l.starts_with('+') && l.contains("goodbye")),
        "{diff}"
    );
}

#[test]
fn completions_are_generated_for_common_shells() {
    for shell in ["bash", "zsh", "fish"] {
        let (out, _) = cli(&["completions", shell], None);
        assert_eq!(out.status.code(), Some(0), "{shell}");
        let script = stdout(&out);
        assert!(
            script.contains("file-tools") && script.contains("call"),
            "{shell}"
        );
        assert!(script.len() > 500, "{shell}: {} bytes", script.len());
    }
    let (out, _) = cli(&["completions", "tcsh-not-a-shell"], None);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_cursor_from_one_cli_call_continues_in_the_next() {
    let fx = Fixture::new();
    let repo = fx.repo.to_str().unwrap();
    let page = |cursor: Option<&str>| {
        let mut args = serde_json::json!({"patterns": ["*.rs"], "max_results": 2});
        if let Some(c) = cursor {
            args["cursor"] = c.into();
        }
        let (out, v) = cli(
            &[
                "--repo",
                repo,
                "--read-only",
                "call",
                "find_files",
                &args.to_string(),
            ],
            None,
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        v["result"].clone()
    };
    let (_, whole) = cli(
        &[
            "--repo",
            repo,
            "--read-only",
            "call",
            "find_files",
            r#"{"patterns":["*.rs"]}"#,
        ],
        None,
    );
    let whole: Vec<String> = serde_json::from_value(whole["result"]["paths"].clone()).unwrap();
    assert!(whole.len() > 2, "{whole:?}");
    let mut got: Vec<String> = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let r = page(cursor.as_deref());
        got.extend(serde_json::from_value::<Vec<String>>(r["paths"].clone()).unwrap());
        match r["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => break,
        }
    }
    assert_eq!(got, whole);
    // An altered cursor is refused with the reason.
    let r = page(None);
    let c = r["next_cursor"].as_str().unwrap();
    let flipped = if c.ends_with('0') { '1' } else { '0' };
    let altered = format!("{}{flipped}", &c[..c.len() - 1]);
    let args = serde_json::json!({"patterns": ["*.rs"], "cursor": altered}).to_string();
    let (out, v) = cli(
        &["--repo", repo, "--read-only", "call", "find_files", &args],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(v["error"]["code"], "INVALID_INPUT");
    assert_eq!(v["error"]["reason"], "cursor");
}

#[test]
fn the_readme_examples_run() {
    let readme = include_str!("../../README.md");
    let start = readme
        .find("<!-- cli-examples -->")
        .expect("the README marks its CLI examples");
    let end = readme
        .find("<!-- /cli-examples -->")
        .expect("the README ends its CLI examples");
    let block = &readme[start..end];
    let script = block
        .split("```sh\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("a sh block between the markers");
    assert!(script.lines().count() >= 10, "{script}");
    let fx = Fixture::new();
    let out = tempfile::tempdir().unwrap();
    let bin_dir = std::path::Path::new(env!("CARGO_BIN_EXE_file-tools"))
        .parent()
        .unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    // Each line on its own, so that a failure names it.
    for line in script.lines().filter(|l| !l.trim().is_empty()) {
        let run = std::process::Command::new("bash")
            .args(["-euo", "pipefail", "-c", line])
            .env("PATH", &path)
            .env("REPO", &fx.repo)
            .env("OUT", out.path())
            .env("FILE_TOOLS_CACHE_DIR", tmp.join("cli-cache"))
            .env("XDG_STATE_HOME", tmp.join("cli-state"))
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert_eq!(
            run.status.code(),
            Some(0),
            "README example failed: {line}\nstdout: {}\nstderr: {}",
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&run.stderr)
        );
    }
    // What the examples wrote is there.
    for f in [
        "audit.jsonl",
        "schema.json",
        "file-tools-standalone.wasm",
        "file-tools.bash",
    ] {
        assert!(out.path().join(f).metadata().unwrap().len() > 0, "{f}");
    }
}

/// A reader that goes away (`file-tools ... | head -c 100`) ends nothing but the output:
/// no panic, and the command's own exit status (0, or 1 for a tool's error). The pipe's
/// reading end is closed before the command starts, so every write meets a closed pipe.
/// Output that cannot be written for another reason (`> /dev/full`) fails the command.
#[test]
fn output_to_a_closed_pipe_is_dropped_and_a_failed_write_fails_the_command() {
    let fx = Fixture::new();
    let repo = fx.repo.to_str().unwrap();
    let runs: [(&[&str], i32); 6] = [
        (&["--repo", repo, "call", "list_dir", "{}"], 0),
        (
            &["--repo", repo, "call", "read_file", r#"{"path":"../x"}"#],
            1,
        ),
        (
            &[
                "--repo",
                repo,
                "--format",
                "text",
                "call",
                "search_text",
                r#"{"query":"hello"}"#,
            ],
            0,
        ),
        (&["tools"], 0),
        (&["schema"], 0),
        (&["completions", "bash"], 0),
    ];
    let run = |args: &[&str], stdout: std::process::Stdio| {
        cli_command(args)
            .stdout(stdout)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap()
    };
    // No panic and the exit status `code`; returns stderr.
    let ended = |out: &std::process::Output, code: i32, args: &[&str]| -> String {
        let err = stderr(out);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        err
    };
    for (args, code) in runs {
        // Positive control: read, the output is there.
        let read = run(args, std::process::Stdio::piped());
        ended(&read, code, args);
        assert!(!read.stdout.is_empty(), "{args:?}");
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        ended(&run(args, writer.into()), code, args);
        if std::path::Path::new("/dev/full").exists() {
            let full = std::fs::OpenOptions::new().write(true).open("/dev/full");
            let err = ended(&run(args, full.unwrap().into()), 1, args);
            assert!(err.contains("cannot write the output"), "{args:?}: {err}");
        }
    }
}
