//! The `file-tools` CLI contract: one JSON object on stdout, exit 0/1/2.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::support::*;

/// `file-tools ARGS` with the tests' cache and state directories.
pub(crate) fn cli_command(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_file-tools"));
    cmd.args(args)
        .env(
            "FILE_TOOLS_CACHE_DIR",
            std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-cache"),
        )
        // Default session state goes below here, never into the user's own state.
        .env(
            "XDG_STATE_HOME",
            std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-state"),
        );
    cmd
}

pub(crate) fn cli(args: &[&str], stdin: Option<&str>) -> (Output, Value) {
    let mut cmd = cli_command(args);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn file-tools");
    if let Some(input) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
    }
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out, v)
}

/// `file-tools --repo REPO call TOOL ARGS`.
pub(crate) fn cli_call(repo: &str, tool: &str, args: &str) -> (Output, Value) {
    cli(&["--repo", repo, "call", tool, args], None)
}

#[test]
fn call_prints_ok_and_exits_zero() {
    let fx = Fixture::new();
    let repo = fx.repo.to_str().unwrap();
    let (out, v) = cli_call(repo, "read_file", r#"{"path":"src/main.rs"}"#);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(v["ok"], true);
    assert!(v["result"]["content"].as_str().unwrap().contains("hello"));
}

#[test]
fn tool_errors_exit_one_with_the_code() {
    let fx = Fixture::new();
    let repo = fx.repo.to_str().unwrap();
    let (out, v) = cli_call(repo, "read_file", r#"{"path":"../outside/secret.txt"}"#);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(v["ok"], false);
    assert_eq!(v["error"]["code"], "PATH_REJECTED");
    assert_no_leak(&String::from_utf8_lossy(&out.stdout));
}

#[test]
fn arguments_from_stdin_and_audit_log() {
    let fx = Fixture::new();
    let repo = fx.repo.to_str().unwrap();
    let log = fx.repo.parent().unwrap().join("cli-audit.jsonl");
    let (out, v) = cli(
        &[
            "--repo",
            repo,
            "--audit-log",
            log.to_str().unwrap(),
            "call",
            "search_text",
            "-",
        ],
        Some(r#"{"query":"sub"}"#),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(v["result"]["total_matches"], 2);
    let log_text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(log_text.lines().count(), 1);
    assert!(log_text.contains("\"tool\":\"search_text\""));
}

#[test]
fn usage_errors_exit_two() {
    let fx = Fixture::new();
    let repo = fx.repo.to_str().unwrap();
    assert_eq!(cli(&[], None).0.status.code(), Some(2));
    assert_eq!(
        cli(&["call", "read_file", "{}"], None).0.status.code(),
        Some(2),
        "no --repo"
    );
    assert_eq!(
        cli(&["--repo", repo, "call", "read_file"], None)
            .0
            .status
            .code(),
        Some(2)
    );
    assert_eq!(cli(&["--bogus", "call"], None).0.status.code(), Some(2));
    assert_eq!(
        cli(
            &["--repo", "/nonexistent/dir", "call", "list_dir", "{}"],
            None
        )
        .0
        .status
        .code(),
        Some(2)
    );
}

#[test]
fn policy_file_and_read_only_flag() {
    let fx = Fixture::new();
    let repo = fx.repo.to_str().unwrap();
    let policy = fx.repo.parent().unwrap().join("policy.toml");
    std::fs::write(&policy, "[read]\nblock = [\"docs/**\"]\n").unwrap();
    let (out, v) = cli(
        &[
            "--repo",
            repo,
            "--read-only",
            "--policy",
            policy.to_str().unwrap(),
            "call",
            "read_file",
            r#"{"path":"docs/guide.md"}"#,
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    // Hidden by the read rules: answered exactly as a missing file.
    assert_eq!(v["error"]["code"], "NOT_FOUND");
    let (_, v) = cli(
        &[
            "--repo",
            repo,
            "--read-only",
            "call",
            "file_info",
            r#"{"path":"README.md"}"#,
        ],
        None,
    );
    assert_eq!(v["result"]["write_denied_reason"], "read_only");
    std::fs::write(&policy, "[read]\nblok = 1\n").unwrap();
    let (out, _) = cli(
        &[
            "--repo",
            repo,
            "--policy",
            policy.to_str().unwrap(),
            "call",
            "list_dir",
            "{}",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn schema_lists_every_tool_with_a_json_schema() {
    let (out, v) = cli(&["schema"], None);
    assert_eq!(out.status.code(), Some(0));
    let tools = v.as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    for n in [
        "list_dir",
        "find_files",
        "read_file",
        "read_many",
        "search_text",
        "file_info",
    ] {
        assert!(names.contains(&n), "{n}");
    }
    for t in tools {
        assert_eq!(t["input_schema"]["type"], "object");
        assert!(!t["description"].as_str().unwrap().is_empty());
    }
}

#[test]
fn audit_logs_are_chained_verified_and_summarised() {
    let fx = Fixture::new();
    let repo = fx.repo.to_str().unwrap();
    let log = fx.repo.parent().unwrap().join("chain.jsonl");
    let log_s = log.to_str().unwrap();
    for args in [
        vec!["call", "read_file", r#"{"path":"README.md"}"#],
        vec!["call", "read_file", r#"{"path":".env"}"#],
        vec![
            "call",
            "write_file",
            r#"{"path":"notes.txt","content":"hi\n"}"#,
        ],
        vec!["call", "search_text", r#"{"query":"add"}"#],
    ] {
        let mut a = vec!["--repo", repo, "--audit-log", log_s];
        a.extend(args);
        cli(&a, None);
    }
    let (out, v) = cli(&["audit", "verify", log_s], None);
    assert_eq!(out.status.code(), Some(0), "{v}");
    assert_eq!(v["result"]["lines"], 4);
    let (_, v) = cli(&["audit", "stats", log_s], None);
    assert_eq!(v["result"]["calls"], 4);
    assert_eq!(v["result"]["tools"]["read_file"]["calls"], 2);
    assert_eq!(
        v["result"]["tools"]["read_file"]["outcomes"]["POLICY_DENIED"],
        1
    );
    assert_eq!(v["result"]["bytes_written"], 3);

    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // A removed line, an edited line, and a cut-off end are each found.
    let broken = [
        format!("{}\n{}\n{}\n", lines[0], lines[2], lines[3]),
        format!(
            "{}\n{}\n{}\n{}\n",
            lines[0],
            lines[1].replace("POLICY_DENIED", "OK"),
            lines[2],
            lines[3]
        ),
        format!("{}\n{}\n{}\n", lines[0], lines[1], lines[2]),
    ];
    for (i, b) in broken.iter().enumerate() {
        std::fs::write(&log, b).unwrap();
        let (out, v) = cli(&["audit", "verify", log_s], None);
        assert_eq!(out.status.code(), Some(1), "case {i}: {v}");
        assert_eq!(v["error"]["code"], "AUDIT_CHAIN_BROKEN");
    }
}

#[test]
fn the_example_policy_file_is_accepted_and_enforced() {
    let fx = Fixture::new();
    let policy = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/policy.toml");
    let repo = fx.repo.to_str().unwrap();
    let (_, v) = cli(&["--policy", policy, "schema"], None);
    let names: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        names.contains(&"edit_file") && !names.contains(&"move_file"),
        "{names:?}"
    );
    let before = fx.snapshot();
    // require_expected_sha256 = true
    let (out, v) = cli(
        &[
            "--repo",
            repo,
            "--policy",
            policy,
            "call",
            "write_file",
            r#"{"path":"README.md","content":"x\n"}"#,
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(v["error"]["reason"], "sha_required", "{v}");
    // [approval] delete = true, and the CLI has nobody to ask.
    let sha = sha256(b"# demo\nA small repository.\n");
    let args = format!(r#"{{"path":"README.md","expected_sha256":"{sha}"}}"#);
    let (_, v) = cli(
        &[
            "--repo",
            repo,
            "--policy",
            policy,
            "call",
            "delete_file",
            &args,
        ],
        None,
    );
    assert_eq!(v["error"]["code"], "APPROVAL_REQUIRED", "{v}");
    assert_eq!(fx.snapshot(), before);
    let (out, v) = cli(
        &[
            "--repo",
            repo,
            "--policy",
            policy,
            "call",
            "write_file",
            r#"{"path":"new.txt","content":"x\n"}"#,
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{v}");
}

/// A policy file inside the repository is the host's: readable, never changed by a tool, so
/// the agent cannot rewrite the rules it runs under; an audit log inside the repository is
/// refused at start, before anything is written there.
#[test]
fn host_files_inside_the_repository_are_reserved_or_refused() {
    let fx = Fixture::new();
    let repo = fx.repo.to_str().unwrap();
    let policy = fx.repo.join("policy.toml");
    std::fs::write(&policy, "[read]\nblock = [\"docs/**\"]\n").unwrap();
    let policy = policy.to_str().unwrap();
    let with_policy = |tool: &str, args: &str| {
        cli(
            &["--repo", repo, "--policy", policy, "call", tool, args],
            None,
        )
    };
    for (tool, args) in [
        (
            "write_file",
            r#"{"path":"policy.toml","content":"","expected_sha256":"0000000000000000000000000000000000000000000000000000000000000000"}"#,
        ),
        ("append_file", r#"{"path":"policy.toml","content":"x"}"#),
        (
            "edit_file",
            r#"{"path":"policy.toml","edits":[{"old_text":"docs","new_text":"none"}]}"#,
        ),
        ("delete_file", r#"{"path":"./policy.toml"}"#),
    ] {
        let (out, v) = with_policy(tool, args);
        assert_eq!(out.status.code(), Some(1), "{tool}: {v}");
        assert_eq!(v["error"]["code"], "PATH_REJECTED", "{tool}: {v}");
    }
    fx.symlink("policy.toml", "alias.toml");
    let (_, v) = with_policy("append_file", r#"{"path":"alias.toml","content":"x"}"#);
    assert_eq!(v["error"]["code"], "PATH_REJECTED", "{v}");
    assert_eq!(
        std::fs::read_to_string(fx.repo.join("policy.toml")).unwrap(),
        "[read]\nblock = [\"docs/**\"]\n"
    );
    // Readable, and the rules in it still hold.
    let (out, v) = with_policy("read_file", r#"{"path":"policy.toml"}"#);
    assert_eq!(out.status.code(), Some(0), "{v}");
    let (_, v) = with_policy("read_file", r#"{"path":"docs/guide.md"}"#);
    assert_eq!(v["error"]["code"], "NOT_FOUND");
    // Positive control: other files are writable in the same setting.
    let (out, v) = with_policy("write_file", r#"{"path":"new.txt","content":"x"}"#);
    assert_eq!(out.status.code(), Some(0), "{v}");

    let log = fx.repo.join("audit.jsonl");
    let out = Command::new(env!("CARGO_BIN_EXE_file-tools"))
        .args([
            "--repo",
            repo,
            "--audit-log",
            log.to_str().unwrap(),
            "call",
            "read_file",
            r#"{"path":"README.md"}"#,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("inside the repository"));
    assert!(!log.exists());
}

/// Without --state-dir, separate CLI calls share one session baseline per repository and
/// --session name, kept outside the repository, until `session reset`.
#[test]
fn cli_calls_share_a_default_session_until_it_is_reset() {
    let fx = Fixture::new();
    let repo = fx.repo.to_str().unwrap();
    let session = format!("t{}", std::process::id());
    let with = |extra: &[&str]| {
        let mut a = vec!["--repo", repo, "--session", session.as_str()];
        a.extend_from_slice(extra);
        a.into_iter().map(str::to_string).collect::<Vec<_>>()
    };
    let run = |extra: &[&str]| {
        let args = with(extra);
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        cli(&refs, None)
    };
    let (out, v) = run(&[
        "call",
        "write_file",
        r#"{"path":"notes/new.txt","content":"hello\n"}"#,
    ]);
    assert_eq!(out.status.code(), Some(0), "{v}");
    let (_, v) = run(&["call", "diff_workspace", "{}"]);
    assert_eq!(v["result"]["files"][0]["path"], "notes/new.txt", "{v}");
    // Another session name has its own, empty baseline.
    let (_, v) = cli(
        &[
            "--repo",
            repo,
            "--session",
            "other-name",
            "call",
            "diff_workspace",
            "{}",
        ],
        None,
    );
    assert_eq!(v["result"]["files"], serde_json::json!([]), "{v}");
    let (out, v) = run(&["session", "reset"]);
    assert_eq!(out.status.code(), Some(0), "{v}");
    assert_eq!(v["result"]["removed"], true);
    assert!(
        !std::path::Path::new(v["result"]["state_dir"].as_str().unwrap()).starts_with(&fx.repo)
    );
    let (_, v) = run(&["call", "diff_workspace", "{}"]);
    assert_eq!(v["result"]["files"], serde_json::json!([]), "{v}");
    assert!(temp_files(&fx.repo).is_empty());
    assert!(!fx.repo.join(".file-tools-state").exists());
    let (out, _) = cli(
        &[
            "--repo",
            repo,
            "--session",
            "../x",
            "call",
            "diff_workspace",
            "{}",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
}

/// Anyone who can write a plain log can rewrite it and recompute its sha256 chain and head;
/// with `--audit-key` (a key file outside the repository, made on first use, owner-only),
/// `audit verify --audit-key` finds such a rewrite, a cut-off end with its head rewritten,
/// and a wrong key. The plain check passing on the forged log is the positive control that
/// the forgery is a good one.
#[cfg(unix)]
#[test]
fn a_keyed_audit_log_finds_a_rewrite_the_plain_chain_misses() {
    use std::os::unix::fs::PermissionsExt;
    let fx = Fixture::new();
    let repo = fx.repo.to_str().unwrap();
    let dir = fx.repo.parent().unwrap().to_path_buf();
    let (log, key) = (dir.join("keyed.jsonl"), dir.join("audit.key"));
    let (log_s, key_s) = (log.to_str().unwrap(), key.to_str().unwrap());
    for p in ["README.md", "docs/guide.md", "src/main.rs"] {
        let args = format!(r#"{{"path":"{p}"}}"#);
        let (out, v) = cli(
            &[
                "--repo",
                repo,
                "--audit-log",
                log_s,
                "--audit-key",
                key_s,
                "call",
                "read_file",
                &args,
            ],
            None,
        );
        assert_eq!(out.status.code(), Some(0), "{v}");
    }
    assert_eq!(
        std::fs::metadata(&key).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let verify = |with_key: bool| {
        let mut args = vec![];
        if with_key {
            args.extend(["--audit-key", key_s]);
        }
        args.extend(["audit", "verify", log_s]);
        cli(&args, None)
    };
    let (out, v) = verify(true);
    assert_eq!(out.status.code(), Some(0), "{v}");
    assert_eq!(
        v["result"],
        serde_json::json!({ "lines": 3, "keyed": true })
    );
    let original = std::fs::read_to_string(&log).unwrap();
    let head = log.with_file_name("keyed.jsonl.head");
    let original_head = std::fs::read_to_string(&head).unwrap();
    // A forger without the key: edit line 2, recompute the chain and the head.
    let forge = |lines: Vec<String>, edit: Option<usize>| {
        let mut prev = "0".repeat(64);
        let mut out = String::new();
        for (i, l) in lines.iter().enumerate() {
            // Lines before the edit are kept byte for byte, as a careful forger would.
            if edit.is_some_and(|e| i < e) || edit.is_none() {
                prev = sha256(l.as_bytes());
                out.push_str(l);
                out.push('\n');
                continue;
            }
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            if edit == Some(i) {
                v["paths_read"] = serde_json::json!(["nothing-to-see.md"]);
            }
            v["prev_sha256"] = serde_json::Value::String(prev.clone());
            let line = v.to_string();
            prev = sha256(line.as_bytes());
            out.push_str(&line);
            out.push('\n');
        }
        std::fs::write(&log, out).unwrap();
        std::fs::write(&head, format!("{} {prev}\n", lines.len())).unwrap();
    };
    let lines: Vec<String> = original.lines().map(str::to_string).collect();
    forge(lines.clone(), Some(1));
    assert_eq!(
        verify(false).0.status.code(),
        Some(0),
        "the forged chain is a good one"
    );
    let (out, v) = verify(true);
    assert_eq!(out.status.code(), Some(1), "{v}");
    assert_eq!(v["error"]["line"], 2, "{v}");
    // The end cut off and the head rewritten.
    forge(lines[..2].to_vec(), None);
    assert_eq!(verify(false).0.status.code(), Some(0));
    assert_eq!(verify(true).0.status.code(), Some(1));
    // The untouched log under another key.
    std::fs::write(&log, &original).unwrap();
    std::fs::write(&head, &original_head).unwrap();
    assert_eq!(verify(true).0.status.code(), Some(0));
    std::fs::write(&key, format!("{}\n", "ab".repeat(32))).unwrap();
    assert_eq!(verify(true).0.status.code(), Some(1));
    // A key inside the repository is refused at start.
    let inside = fx.repo.join("audit.key");
    let (out, _) = cli(
        &[
            "--repo",
            repo,
            "--audit-log",
            log_s,
            "--audit-key",
            inside.to_str().unwrap(),
            "call",
            "read_file",
            r#"{"path":"README.md"}"#,
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(!inside.exists());
}

#[test]
fn the_index_is_built_shown_and_dropped_from_the_cli() {
    let fx = Fixture::new();
    let state = fx.repo.parent().unwrap().join("index-state");
    let on = fx.repo.parent().unwrap().join("index-on.toml");
    std::fs::write(&on, "[limits]\nmax_index_bytes = 268435456\n").unwrap();
    let repo = fx.repo.to_str().unwrap();
    let run = |policy: Option<&std::path::Path>, what: &str| {
        let mut args = vec!["--repo", repo, "--state-dir", state.to_str().unwrap()];
        if let Some(p) = policy {
            args.extend(["--policy", p.to_str().unwrap()]);
        }
        args.extend(["index", what]);
        cli(&args, None)
    };
    // Off by default: nothing to build, said why.
    let (out, _) = run(None, "build");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("max_index_bytes"));
    let (_, v) = run(Some(&on), "status");
    assert_eq!(v["result"]["files"].as_array().unwrap().len(), 0, "{v}");
    let (out, v) = run(Some(&on), "build");
    assert!(out.status.success(), "{v}");
    assert!(v["result"]["files_searched"].as_u64().unwrap() > 3, "{v}");
    // Not on a terminal: no progress line.
    assert!(!String::from_utf8_lossy(&out.stderr).contains("indexing"));
    let (_, v) = run(Some(&on), "status");
    assert_eq!(v["result"]["files"].as_array().unwrap().len(), 1, "{v}");
    assert!(v["result"]["bytes"].as_u64().unwrap() > 100, "{v}");
    // A search through the CLI answers the same with the index as without it.
    let search = |policy: Option<&std::path::Path>| {
        let mut args = vec!["--repo", repo, "--state-dir", state.to_str().unwrap()];
        if let Some(p) = policy {
            args.extend(["--policy", p.to_str().unwrap()]);
        }
        args.extend(["call", "search_text", r#"{"query":"fn add"}"#]);
        let (_, mut v) = cli(&args, None);
        v["result"].as_object_mut().unwrap().remove("next_cursor");
        v
    };
    assert_eq!(search(Some(&on)), search(None));
    let (_, v) = run(Some(&on), "drop");
    assert_eq!(v["result"]["removed"], 1, "{v}");
    let (_, v) = run(Some(&on), "status");
    assert_eq!(v["result"]["files"].as_array().unwrap().len(), 0, "{v}");
}

/// Without `--state-dir`, the sessions of a repository (CLI calls under any session name,
/// the stdio server, each HTTP session) share one search index, in a folder beside their
/// state directories: built once, it spares another session's reads. With `--state-dir`,
/// a session keeps its own (the control).
#[test]
fn sessions_of_a_repository_share_one_index_in_the_users_state_directory() {
    let fx = Fixture::new();
    for i in 0..30 {
        fx.write(
            &format!("many/f{i}.txt"),
            "plain words\n".repeat(40).as_bytes(),
        );
    }
    fx.write("many/needle.txt", b"one rare_needle_here\n");
    // Records are trusted once the files' times are well older than the look.
    std::thread::sleep(std::time::Duration::from_millis(2_200));
    let dir = fx.repo.parent().unwrap();
    let on = dir.join("index-on.toml");
    std::fs::write(&on, "[limits]\nmax_index_bytes = 268435456\n").unwrap();
    let (repo, on) = (fx.repo.to_str().unwrap(), on.to_str().unwrap());
    let (out, v) = cli(&["--repo", repo, "--policy", on, "index", "build"], None);
    assert!(out.status.success(), "{v}");
    let folder = v["result"]["index_dir"].as_str().unwrap().to_string();
    assert!(folder.ends_with(".index"), "{folder}");
    assert_eq!(v["result"]["files"].as_array().unwrap().len(), 1, "{v}");
    let bytes_read = |extra: &[&str], log: &str| {
        let log = dir.join(log);
        let mut args = vec![
            "--repo",
            repo,
            "--policy",
            on,
            "--audit-log",
            log.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        args.extend(["call", "search_text", r#"{"query":"rare_needle"}"#]);
        let (out, v) = cli(&args, None);
        assert!(out.status.success(), "{v}");
        assert_eq!(v["result"]["files_matched"], 1, "{v}");
        let text = std::fs::read_to_string(&log).unwrap();
        let event: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
        event["bytes_read"].as_u64().unwrap()
    };
    let needle = b"one rare_needle_here\n".len() as u64;
    assert_eq!(
        bytes_read(&["--session", "another"], "another.jsonl"),
        needle
    );
    let own = dir.join("own-state");
    let all = bytes_read(&["--state-dir", own.to_str().unwrap()], "own.jsonl");
    assert!(all > 30 * needle, "{all}");
    let (_, v) = cli(&["--repo", repo, "--policy", on, "index", "drop"], None);
    assert_eq!(v["result"]["removed"], 1, "{v}");
    assert_eq!(v["result"]["index_dir"], folder.as_str(), "{v}");
}

/// `index drop` removes the temporary files that saves cut short left in the index folder
/// (a limit that ends a build's call during a save leaves one as large as the index, and
/// the shared folder is no session's, so `session reset` never reaches it), and nothing
/// that is not file-tools' own.
#[test]
fn index_drop_removes_the_temporary_files_of_cut_saves() {
    let fx = Fixture::new();
    let repo = fx.repo.to_str().unwrap();
    let (_, v) = cli(&["--repo", repo, "index", "status"], None);
    let folder = std::path::PathBuf::from(v["result"]["index_dir"].as_str().unwrap());
    std::fs::create_dir_all(&folder).unwrap();
    let (index, torn, other) = (
        folder.join("c".repeat(64)),
        folder.join(".0123456789abcdef.tmp"),
        folder.join("notes.txt"),
    );
    for f in [&index, &torn, &other] {
        std::fs::write(f, b"x").unwrap();
    }
    let (out, v) = cli(&["--repo", repo, "index", "drop"], None);
    assert!(out.status.success(), "{v}");
    assert!(!index.exists(), "{v}");
    assert!(
        !torn.exists(),
        "the temporary file of a cut save was left: {v}"
    );
    assert!(other.exists(), "{v}");
}

/// On a terminal, `index build` shows how far it has come on one line rewritten in place
/// (run under `script`, which gives the command a terminal).
#[test]
fn index_build_shows_its_progress_on_a_terminal() {
    let fx = Fixture::new();
    for i in 0..200 {
        fx.write(&format!("many/f{i:03}.txt"), b"some text to index\n");
    }
    let dir = fx.repo.parent().unwrap();
    let policy = dir.join("index-on.toml");
    std::fs::write(&policy, "[limits]\nmax_index_bytes = 268435456\n").unwrap();
    let quote = |p: &std::path::Path| format!("'{}'", p.display());
    let command = format!(
        "{} --repo {} --state-dir {} --policy {} index build",
        quote(std::path::Path::new(env!("CARGO_BIN_EXE_file-tools"))),
        quote(&fx.repo),
        quote(&dir.join("index-state")),
        quote(&policy),
    );
    let out = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env(
            "FILE_TOOLS_CACHE_DIR",
            std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-cache"),
        )
        .stdin(Stdio::null())
        .output()
        .expect("script (util-linux)");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("\rindexing: "), "{text}");
    assert!(text.contains(" files looked at, "), "{text}");
    assert!(text.contains("\"ok\":true"), "{text}");
}

/// The CLI keeps compiled components in `$XDG_CACHE_HOME/file-tools` when that is an
/// absolute path, else in `~/.cache/file-tools`: a relative `XDG_CACHE_HOME` is ignored, as
/// the XDG rules say, rather than taken from the working directory (here the repository,
/// which would then hold the next start's native code and be refused a session).
#[test]
fn a_relative_xdg_cache_home_is_ignored() {
    let fx = Fixture::new();
    let home = fx.outside.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let repo = fx.repo.to_str().unwrap();
    let run = |xdg: &std::path::Path| {
        let out = cli_command(&[
            "--repo",
            repo,
            "call",
            "file_info",
            r#"{"path":"README.md"}"#,
        ])
        .env_remove("FILE_TOOLS_CACHE_DIR")
        .env("HOME", &home)
        .env("XDG_CACHE_HOME", xdg)
        .current_dir(&fx.repo)
        .output()
        .unwrap();
        assert!(out.status.success(), "{out:?}");
    };
    run(std::path::Path::new("rel-cache"));
    assert!(!fx.repo.join("rel-cache").exists());
    let kept = home.join(".cache").join("file-tools");
    let artifacts: Vec<_> = std::fs::read_dir(&kept)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "cwasm"))
        .collect();
    assert_eq!(artifacts.len(), 1, "{artifacts:?}");
    // The control: an absolute one is used (the artifact copied there, so nothing
    // compiles again; a call that loads it leaves it as it was).
    let xdg = fx.outside.join("xdg");
    let there = xdg.join("file-tools");
    std::fs::create_dir_all(&there).unwrap();
    let copy = there.join(artifacts[0].file_name().unwrap());
    std::fs::copy(&artifacts[0], &copy).unwrap();
    run(&xdg);
    assert!(
        there.read_dir().unwrap().count() > 1,
        "tool sets kept there too"
    );
}
