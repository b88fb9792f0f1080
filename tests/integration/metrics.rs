//! Metrics count a scripted sequence of calls exactly (successes, known error codes, a
//! trap), and the scrape is well-formed Prometheus text that parses back.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::json;

use crate::support::*;
use file_tools_host::{Limits, Session};
use file_tools_mcp::Metrics;

/// Parses the text format: `# HELP`/`# TYPE` lines, samples `name{a="x",b="y"} value`,
/// and the closing `# EOF`. Panics on anything else, so that a malformed scrape fails.
fn parse(text: &str) -> BTreeMap<String, f64> {
    let mut samples = BTreeMap::new();
    let mut typed = std::collections::HashSet::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if line == "# EOF" {
            assert!(lines.peek().is_none(), "text after # EOF");
            return samples;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let mut parts = rest.split(' ');
            let name = parts.next().unwrap();
            let kind = parts.next().unwrap();
            assert!(["counter", "histogram", "gauge"].contains(&kind), "{line}");
            typed.insert(name.to_string());
            continue;
        }
        if line.starts_with("# HELP ") || line.starts_with("# UNIT ") {
            continue;
        }
        let (series, value) = line
            .rsplit_once(' ')
            .unwrap_or_else(|| panic!("no value: {line}"));
        let value: f64 = value
            .parse()
            .unwrap_or_else(|_| panic!("bad value: {line}"));
        let name = series.split('{').next().unwrap();
        assert!(
            typed.iter().any(|t| name.starts_with(t.as_str())),
            "sample before its # TYPE: {line}"
        );
        if let Some(labels) = series.strip_prefix(name) {
            if !labels.is_empty() {
                let inner = labels.strip_prefix('{').and_then(|l| l.strip_suffix('}'));
                let inner = inner.unwrap_or_else(|| panic!("bad labels: {line}"));
                for pair in inner.split(',') {
                    let (k, v) = pair
                        .split_once('=')
                        .unwrap_or_else(|| panic!("bad label: {line}"));
                    assert!(
                        k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
                        "{line}"
                    );
                    assert!(v.starts_with('"') && v.ends_with('"'), "{line}");
                }
            }
        }
        assert!(
            samples.insert(series.to_string(), value).is_none(),
            "duplicate: {line}"
        );
    }
    panic!("no # EOF at the end");
}

fn session(fx: &Fixture, metrics: &Arc<Metrics>, limits: Limits) -> Session {
    Session::builder(runtime())
        .repo(&fx.repo)
        .writable(true)
        .limits(limits)
        .observer(metrics.clone())
        .build()
        .unwrap()
}

#[test]
fn calls_are_counted_by_tool_and_outcome_and_the_scrape_parses_back() {
    let fx = Fixture::new();
    for i in 0..8 {
        fx.write(
            &format!("big/f{i}.txt"),
            "the quick brown fox 0123456789\n".repeat(40_000).as_bytes(),
        );
    }
    let metrics = Arc::new(Metrics::new());
    let mut s = session(&fx, &metrics, Limits::default());
    for _ in 0..3 {
        call(&mut s, "read_file", json!({"path": "src/main.rs"})).unwrap();
    }
    for _ in 0..2 {
        assert_eq!(
            code(&call(&mut s, "read_file", json!({"path": "missing.rs"}))),
            "NOT_FOUND"
        );
    }
    assert_eq!(
        code(&call(&mut s, "read_file", json!({"path": "../x"}))),
        "PATH_REJECTED"
    );
    let page = call(&mut s, "read_file", json!({"path": "src/main.rs"})).unwrap();
    let written = call(
        &mut s,
        "write_file",
        json!({"path": "src/main.rs", "content": "fn main() {}\n", "expected_sha256": page["sha256"]}),
    )
    .unwrap();
    assert!(written["changes"].as_array().is_some());
    // A trap: a session with little fuel (its own metrics share the registry).
    let mut poor = session(
        &fx,
        &metrics,
        Limits {
            fuel_per_call: 50_000_000,
            ..Limits::default()
        },
    );
    let r = call(
        &mut poor,
        "search_text",
        json!({"query": "(fox|dog)+\\d", "regex": true, "output": "count"}),
    );
    assert_eq!(code(&r), "LIMIT_EXCEEDED");

    let scraped = parse(&metrics.encode());
    let calls = |tool: &str, outcome: &str| {
        scraped
            .get(&format!(
                "file_tools_tool_calls_total{{tool=\"{tool}\",outcome=\"{outcome}\"}}"
            ))
            .copied()
    };
    assert_eq!(calls("read_file", "ok"), Some(4.0), "{scraped:#?}");
    assert_eq!(calls("read_file", "not_found"), Some(2.0));
    assert_eq!(calls("read_file", "path_rejected"), Some(1.0));
    assert_eq!(calls("write_file", "ok"), Some(1.0));
    assert_eq!(calls("search_text", "trapped"), Some(1.0));
    assert_eq!(calls("search_text", "ok"), None, "no search succeeded");
    // Every read_file call is in its duration histogram.
    assert_eq!(
        scraped.get("file_tools_tool_call_duration_seconds_count{tool=\"read_file\"}"),
        Some(&7.0)
    );
    // Bytes: the write wrote its 13 bytes; the reads read the file four times.
    assert_eq!(
        scraped.get("file_tools_bytes_written_total{tool=\"write_file\"}"),
        Some(&13.0)
    );
    let main_len = "fn main() {\n    println!(\"hello\");\n}\n".len() as f64;
    assert_eq!(
        scraped.get("file_tools_bytes_read_total{tool=\"read_file\"}"),
        Some(&(4.0 * main_len))
    );
    // Fuel: the trapped search used (nearly) all it had; reads used some.
    let fuel = |tool: &str| scraped[&format!("file_tools_fuel_used_total{{tool=\"{tool}\"}}")];
    assert!(
        fuel("search_text") >= 40_000_000.0,
        "{}",
        fuel("search_text")
    );
    assert!(fuel("read_file") > 0.0);
}

#[test]
fn made_up_tool_names_share_one_label() {
    let fx = Fixture::new();
    let metrics = Arc::new(Metrics::new());
    let mut s = session(&fx, &metrics, Limits::default());
    for i in 0..50 {
        let name = format!("no_such_tool_{i}_{}", "x".repeat(1000));
        assert_eq!(code(&call(&mut s, &name, json!({}))), "INVALID_INPUT");
    }
    call(&mut s, "read_file", json!({"path": "src/main.rs"})).unwrap();
    let text = metrics.encode();
    let scraped = parse(&text);
    assert_eq!(
        scraped.get("file_tools_tool_calls_total{tool=\"unknown\",outcome=\"invalid_input\"}"),
        Some(&50.0),
        "{scraped:#?}"
    );
    // Beside them, a real tool keeps its own name; the made-up ones appear nowhere.
    assert_eq!(
        scraped.get("file_tools_tool_calls_total{tool=\"read_file\",outcome=\"ok\"}"),
        Some(&1.0)
    );
    assert!(!text.contains("no_such_tool"), "{text}");
    assert!(
        text.len() < 20_000,
        "the scrape grew to {} bytes",
        text.len()
    );
}

#[test]
fn the_cli_reports_metrics_from_an_audit_log() {
    let fx = Fixture::new();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("audit.jsonl");
    let log_s = log.to_str().unwrap();
    let repo = fx.repo.to_str().unwrap();
    let (out, _) = crate::cli::cli(
        &[
            "--repo",
            repo,
            "--audit-log",
            log_s,
            "call",
            "read_file",
            r#"{"path":"src/main.rs"}"#,
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0));
    let (out, _) = crate::cli::cli(
        &[
            "--repo",
            repo,
            "--audit-log",
            log_s,
            "call",
            "read_file",
            r#"{"path":"nope"}"#,
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let (out, _) = crate::cli::cli(&["metrics", log_s], None);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let scraped = parse(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(
        scraped.get("file_tools_tool_calls_total{tool=\"read_file\",outcome=\"ok\"}"),
        Some(&1.0)
    );
    assert_eq!(
        scraped.get("file_tools_tool_calls_total{tool=\"read_file\",outcome=\"not_found\"}"),
        Some(&1.0)
    );
    let (out, _) = crate::cli::cli(&["metrics", "/nonexistent/audit.jsonl"], None);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_cli_folds_tool_names_the_session_does_not_offer_into_unknown() {
    let fx = Fixture::new();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("audit.jsonl");
    let (log_s, repo) = (log.to_str().unwrap(), fx.repo.to_str().unwrap());
    let run = |tool: &str, args: &str| {
        crate::cli::cli(
            &["--repo", repo, "--audit-log", log_s, "call", tool, args],
            None,
        )
        .0
    };
    assert_eq!(
        run("read_file", r#"{"path":"src/main.rs"}"#).status.code(),
        Some(0)
    );
    for i in 0..3 {
        let out = run(&format!("no_such_tool_{i}"), "{}");
        assert_eq!(out.status.code(), Some(1));
    }
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.contains("no_such_tool_2"),
        "the log records the name: {text}"
    );
    // A log edited by hand: error codes nobody defined fold into one outcome label too.
    let mut forged = text.clone();
    for i in 0..3 {
        forged.push_str(&format!(
            "{{\"tool\":\"read_file\",\"ok\":false,\"error_code\":\"FORGED_{i}_{}\"}}\n",
            "x".repeat(200)
        ));
    }
    std::fs::write(&log, forged).unwrap();
    let (out, _) = crate::cli::cli(&["metrics", log_s], None);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let scraped = parse(&text);
    assert!(!text.contains("no_such_tool"), "{text}");
    assert!(!text.contains("forged"), "{text}");
    assert_eq!(
        scraped.get("file_tools_tool_calls_total{tool=\"read_file\",outcome=\"unknown\"}"),
        Some(&3.0),
        "{scraped:#?}"
    );
    assert_eq!(
        scraped.get("file_tools_tool_calls_total{tool=\"unknown\",outcome=\"invalid_input\"}"),
        Some(&3.0),
        "{scraped:#?}"
    );
    // Positive control: a tool the session offers keeps its name.
    assert_eq!(
        scraped.get("file_tools_tool_calls_total{tool=\"read_file\",outcome=\"ok\"}"),
        Some(&1.0)
    );
}

/// The library's own hook, with no metrics crate: a closure hears one record per call,
/// with the outcome and a made-up tool name folded into `unknown`.
#[test]
fn a_call_observer_hears_every_call_through_the_library_alone() {
    let fx = Fixture::new();
    fx.write("a.txt", b"hello\n");
    let heard = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = heard.clone();
    let mut s = Session::builder(runtime())
        .repo(&fx.repo)
        .observer(Arc::new(move |r: &file_tools_host::CallRecord| {
            sink.lock().unwrap().push(r.clone())
        }))
        .build()
        .unwrap();
    call(&mut s, "read_file", json!({"path": "a.txt"})).unwrap();
    call(&mut s, "read_file", json!({"path": "missing.txt"})).unwrap_err();
    assert!(call(&mut s, "no_such_tool", json!({})).is_err());
    let heard = heard.lock().unwrap();
    let seen: Vec<(&str, &str)> = heard
        .iter()
        .map(|r| (r.tool.as_str(), r.outcome.as_str()))
        .collect();
    assert_eq!(
        seen,
        [
            ("read_file", "ok"),
            ("read_file", "not_found"),
            ("unknown", "invalid_input")
        ]
    );
    assert_eq!(heard[0].bytes_read, 6);
}

/// An observer that panics loses its record, never the call's answer; the session goes on.
#[test]
fn a_panicking_call_observer_costs_no_call() {
    let fx = Fixture::new();
    fx.write("a.txt", b"hello\n");
    let mut s = Session::builder(runtime())
        .repo(&fx.repo)
        .observer(Arc::new(|_: &file_tools_host::CallRecord| {
            panic!("the embedder's observer failed")
        }))
        .build()
        .unwrap();
    for _ in 0..2 {
        let r = call(&mut s, "read_file", json!({"path": "a.txt"})).unwrap();
        assert_eq!(r["content"], "hello\n");
    }
}
