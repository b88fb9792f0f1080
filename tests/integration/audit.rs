//! Audit: exactly one event per call, allowed or refused, numbered across the session.

use serde_json::json;

use crate::support::*;
use file_tools_host::{code_name, ErrorCode};

#[test]
fn one_event_per_call_with_outcome_paths_and_bytes() {
    let fx = Fixture::new();
    let mut s = fx.session();
    call(&mut s, "read_file", json!({ "path": "src/main.rs" })).unwrap();
    call(&mut s, "read_file", json!({ "path": ".env" })).unwrap_err();
    call(&mut s, "no_such_tool", json!({})).unwrap_err();
    call(&mut s, "search_text", json!({ "query": "add" })).unwrap();
    call(
        &mut s,
        "read_file",
        json!({ "path": "../outside/secret.txt" }),
    )
    .unwrap_err();
    let ev = fx.events();
    assert_eq!(ev.len(), 5);
    assert_eq!(
        ev.iter().map(|e| e.sequence).collect::<Vec<_>>(),
        [1, 2, 3, 4, 5]
    );
    assert_eq!(ev[0].tool, "read_file");
    assert!(ev[0].ok);
    assert_eq!(ev[0].paths_read, ["src/main.rs"]);
    assert_eq!(
        ev[0].bytes_read,
        std::fs::metadata(fx.repo.join("src/main.rs"))
            .unwrap()
            .len()
    );
    assert!(!ev[1].ok);
    assert_eq!(ev[1].error_code, Some(ErrorCode::PolicyDenied));
    assert!(ev[1].paths_read.is_empty(), "a refused secret is not read");
    assert_eq!(ev[2].tool, "no_such_tool");
    assert_eq!(ev[2].error_code.map(code_name), Some("INVALID_INPUT"));
    assert!(ev[3].paths_read.contains(&"src/lib.rs".to_string()));
    assert_eq!(ev[4].error_code, Some(ErrorCode::PathRejected));
    for e in &ev {
        assert_no_leak(&format!("{e:?}"));
    }
}

#[test]
fn typed_calls_are_audited_too() {
    let fx = Fixture::new();
    let mut s = fx.session();
    s.file_info("README.md").unwrap();
    s.file_info("/etc/passwd").unwrap_err();
    let ev = fx.events();
    assert_eq!(ev.len(), 2);
    assert_eq!(ev[0].tool, "file_info");
    assert_eq!(ev[1].error_code, Some(ErrorCode::PathRejected));
}

#[test]
fn json_lines_sink_writes_one_line_per_call() {
    let fx = Fixture::new();
    let log = fx.repo.parent().unwrap().join("audit.jsonl");
    let sink = file_tools_host::JsonLinesSink::open(&log).unwrap();
    let mut s = file_tools_host::Session::builder(runtime())
        .repo(&fx.repo)
        .audit_sink(std::sync::Arc::new(sink))
        .build()
        .unwrap();
    s.call("list_dir", "{}").unwrap();
    s.call("read_file", r#"{"path":".env"}"#).unwrap_err();
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["tool"], "list_dir");
    assert_eq!(lines[1]["error_code"], "POLICY_DENIED");
    assert_eq!(lines[1]["sequence"], 2);
}

#[test]
fn mutation_diffs_are_stored_once_as_content_addressed_artifacts() {
    let fx = Fixture::new();
    let log = fx.repo.parent().unwrap().join("audit.jsonl");
    let sink = file_tools_host::JsonLinesSink::open(&log).unwrap();
    let mut s = file_tools_host::Session::builder(runtime())
        .repo(&fx.repo)
        .writable(true)
        .policy(relaxed(json!({})))
        .audit_sink(std::sync::Arc::new(sink))
        .build()
        .unwrap();
    let write = r#"{"path":"notes.txt","content":"one\ntwo\n"}"#;
    s.call("write_file", write).unwrap();
    s.call("delete_file", r#"{"path":"notes.txt"}"#).unwrap();
    // The same change again: the same diff, stored only once.
    s.call("write_file", write).unwrap();
    s.call("read_file", r#"{"path":"notes.txt"}"#).unwrap();

    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0]["diff_artifact"], lines[2]["diff_artifact"]);
    assert_ne!(lines[0]["diff_artifact"], lines[1]["diff_artifact"]);
    assert!(lines[3]["diff_artifact"].is_null() && lines[3]["diff_sha256"].is_null());
    let dir = log.with_file_name("audit.jsonl.artifacts");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2);
    let rel = lines[0]["diff_artifact"].as_str().unwrap();
    let diff = std::fs::read_to_string(log.with_file_name(rel)).unwrap();
    assert!(
        diff.contains("+++ b/notes.txt") && diff.contains("+two"),
        "{diff}"
    );
    assert_eq!(
        lines[0]["diff_sha256"].as_str().unwrap(),
        sha256(diff.as_bytes())
    );
    assert_eq!(file_tools_host::audit_log::verify(&log), Ok(4));

    // An edited artifact is caught by verify, at the first line that references it.
    std::fs::write(log.with_file_name(rel), "--- a/x\n+++ b/x\n").unwrap();
    let e = file_tools_host::audit_log::verify(&log).unwrap_err();
    assert_eq!(e.line, 1);
    assert!(e.message.contains("artifact"), "{}", e.message);
}
