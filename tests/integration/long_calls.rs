//! Long calls. Cancellation: a cancel token stops a running call within milliseconds, with
//! CANCELLED, nothing changed and the session ready at once; once a change has begun to
//! write, the cancel no longer stops it and the whole change lands. Progress: walks and
//! searches report files scanned and matches so far.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::*;
use file_tools_host::{
    ApprovalRequest, CallOptions, CancelToken, ErrorCode, Limits, ProgressUpdate, Session,
};
use file_tools_mcp::Metrics;

/// A repository whose full regex search takes seconds.
fn slow_repo() -> Fixture {
    let fx = Fixture::new();
    let line = "the quick brown fox jumps over the lazy dog 0123456789\n";
    for i in 0..40 {
        fx.write(&format!("big/f{i}.txt"), line.repeat(40_000).as_bytes());
    }
    fx
}

const SLOW_SEARCH: &str = r#"{"query": "[a-z]+\\s[a-z]+\\s\\d", "regex": true, "case_insensitive": true, "output": "count"}"#;

/// Cancels `token` after `delay`, from another thread.
fn cancel_after(token: &CancelToken, delay: Duration) -> std::thread::JoinHandle<()> {
    let token = token.clone();
    std::thread::spawn(move || {
        std::thread::sleep(delay);
        token.cancel();
    })
}

#[test]
fn a_cancelled_search_stops_at_once_and_the_next_call_runs() {
    let fx = slow_repo();
    let metrics = Arc::new(Metrics::new());
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = events.clone();
    let mut s = Session::builder(runtime())
        .repo(&fx.repo)
        .observer(metrics.clone())
        .audit_sink(Arc::new(move |e: &file_tools_host::AuditEvent| {
            seen.lock().unwrap().push(e.clone())
        }))
        .build()
        .unwrap();
    // Positive control: uncancelled, the same search runs well past the cancel's delay.
    let started = Instant::now();
    s.call("search_text", SLOW_SEARCH).unwrap();
    let full = started.elapsed();
    assert!(
        full > Duration::from_millis(300),
        "the search is too quick to cancel: {full:?}"
    );

    let token = CancelToken::new();
    let canceller = cancel_after(&token, Duration::from_millis(50));
    let started = Instant::now();
    let r = s.call_with(
        "search_text",
        SLOW_SEARCH,
        &CallOptions::new().cancel(token),
    );
    let took = started.elapsed();
    canceller.join().unwrap();
    let e = r.unwrap_err();
    assert_eq!(e.code, ErrorCode::Cancelled, "{}", e.message);
    assert!(took < full / 2, "{took:?} vs {full:?}");

    let started = Instant::now();
    let v = s
        .call("read_file", &json!({"path": "README.md"}).to_string())
        .unwrap();
    assert_eq!(v["content"], "# demo\nA small repository.\n");
    assert!(started.elapsed() < Duration::from_secs(2));

    let ev = events.lock().unwrap().clone();
    assert_eq!(ev.len(), 3);
    assert_eq!(ev[1].error_code, Some(ErrorCode::Cancelled));
    assert!(ev[2].ok);
    let scrape = metrics.encode();
    assert!(
        scrape.contains(r#"tool="search_text",outcome="cancelled""#),
        "{scrape}"
    );
}

#[test]
fn a_token_cancelled_before_the_call_stops_it_before_it_starts() {
    let fx = Fixture::new();
    let before = fx.snapshot();
    let mut s = fx.session_with(relaxed(json!({})), true, Limits::default());
    let token = CancelToken::new();
    token.cancel();
    let r = s.call_with(
        "write_file",
        &json!({"path": "src/lib.rs", "content": "gone\n"}).to_string(),
        &CallOptions::new().cancel(token),
    );
    assert_eq!(code(&r), "CANCELLED");
    assert_eq!(fx.snapshot(), before);
    assert_eq!(fx.events()[0].error_code, Some(ErrorCode::Cancelled));
    // Positive control: the same write, not cancelled, is written.
    call(
        &mut s,
        "write_file",
        json!({"path": "src/lib.rs", "content": "kept\n"}),
    )
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(fx.repo.join("src/lib.rs")).unwrap(),
        "kept\n"
    );
}

#[test]
fn a_cancel_during_approval_stops_the_change_before_it_writes() {
    let fx = Fixture::new();
    let before = fx.snapshot();
    let mut s = fx.session_with(
        relaxed(json!({"approval": {"delete": true}})),
        true,
        Limits::default(),
    );
    let token = CancelToken::new();
    let in_approval = token.clone();
    // The user approves, but the client cancels the call while the question was open.
    let approver = Arc::new(move |_: &ApprovalRequest| {
        in_approval.cancel();
        true
    });
    let r = s.call_with(
        "delete_file",
        &json!({"path": "src/lib.rs"}).to_string(),
        &CallOptions::new().cancel(token).approver(approver),
    );
    assert_eq!(code(&r), "CANCELLED");
    assert_eq!(fx.snapshot(), before);
    assert!(temp_files(&fx.repo).is_empty());
}

#[test]
fn a_cancel_after_the_change_began_lets_the_whole_change_land() {
    let fx = Fixture::new();
    let files = 300;
    let mut patch = String::new();
    for i in 0..files {
        patch.push_str(&format!(
            "--- /dev/null\n+++ b/many/f{i:03}.txt\n@@ -0,0 +1 @@\n+{}\n",
            "x".repeat(200)
        ));
    }
    let budget = json!({"patch": {"max_files": 1000}});
    let mut s = fx.session_with(relaxed(budget), true, Limits::default());
    // Cancel as soon as the first temporary file shows: the change has begun writing.
    let token = CancelToken::new();
    let watcher = {
        let (token, dir) = (token.clone(), fx.repo.join("many"));
        std::thread::spawn(move || {
            let started = Instant::now();
            while started.elapsed() < Duration::from_secs(30) {
                let begun = std::fs::read_dir(&dir).is_ok_and(|mut d| d.next().is_some());
                if begun {
                    token.cancel();
                    return true;
                }
                std::thread::sleep(Duration::from_micros(200));
            }
            false
        })
    };
    let r = s.call_with(
        "apply_patch",
        &json!({ "patch": patch }).to_string(),
        &CallOptions::new().cancel(token.clone()),
    );
    let saw_writing = watcher.join().unwrap();
    assert!(saw_writing, "the watcher never saw the change begin");
    assert!(token.is_cancelled());
    let v = r.expect("a change that has begun writing completes");
    assert_eq!(v["changes"].as_array().unwrap().len(), files);
    let written = std::fs::read_dir(fx.repo.join("many")).unwrap().count();
    assert_eq!(written, files);
    assert!(temp_files(&fx.repo).is_empty());
    let ev = fx.events();
    assert!(ev[0].ok);
    assert!(
        ev[0].notes.iter().any(|n| n.contains("cancel came after")),
        "{:?}",
        ev[0].notes
    );
}

/// A progress sink that records every update.
fn recorder() -> (Arc<Mutex<Vec<ProgressUpdate>>>, CallOptions) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let options = CallOptions::new().progress(Arc::new(move |u: ProgressUpdate| {
        sink.lock().unwrap().push(u)
    }));
    (seen, options)
}

#[test]
fn searches_and_walks_report_progress_that_only_grows() {
    let fx = Fixture::new();
    for i in 0..100 {
        fx.write(
            &format!("many/f{i:03}.txt"),
            format!("needle {i}\nhay\n").as_bytes(),
        );
    }
    fx.write("private/needle.txt", b"needle hidden\n");
    let mut s = fx.session_with(
        json!({"read": {"block": ["private/**"]}}),
        false,
        Limits::default(),
    );

    let (seen, options) = recorder();
    let v = s
        .call_with(
            "search_text",
            &json!({"query": "needle", "output": "count"}).to_string(),
            &options,
        )
        .unwrap();
    let updates = seen.lock().unwrap().clone();
    assert!(updates.len() >= 3, "{updates:?}");
    assert!(updates
        .windows(2)
        .all(|w| w[0].files_scanned < w[1].files_scanned && w[0].matches <= w[1].matches));
    let last = updates.last().unwrap();
    assert!(last.files_scanned <= v["files_searched"].as_u64().unwrap() + 20);
    assert!(last.matches > 0 && last.matches <= v["total_matches"].as_u64().unwrap());

    let (seen, options) = recorder();
    s.call_with(
        "find_files",
        &json!({"patterns": ["*.txt"]}).to_string(),
        &options,
    )
    .unwrap();
    let updates = seen.lock().unwrap().clone();
    assert!(updates.len() >= 3, "{updates:?}");
    assert!(updates.iter().all(|u| u.matches == 0));

    // Positive control: a call without a sink, and a short one with a sink, hear nothing.
    let (seen, options) = recorder();
    s.call_with(
        "read_file",
        &json!({"path": "README.md"}).to_string(),
        &options,
    )
    .unwrap();
    assert!(seen.lock().unwrap().is_empty());
}

#[test]
fn progress_counts_nothing_the_read_policy_hides() {
    let fx = Fixture::new();
    for i in 0..40 {
        fx.write(&format!("open/f{i:03}.txt"), b"needle\n");
    }
    for i in 0..200 {
        fx.write(&format!("private/f{i:03}.txt"), b"needle needle\n");
    }
    let last = |policy: serde_json::Value| {
        let mut s = fx.session_with(policy, false, Limits::default());
        let (seen, options) = recorder();
        let args = json!({"query": "needle", "output": "count"}).to_string();
        let v = s.call_with("search_text", &args, &options).unwrap();
        let last = *seen.lock().unwrap().last().expect("some progress");
        (last, v["total_matches"].as_u64().unwrap())
    };
    // Positive control: unblocked, the private files are scanned and their matches counted.
    let (open, total) = last(json!({}));
    assert!(open.files_scanned >= 224 && open.matches >= 200, "{open:?}");
    assert!(open.matches <= total);
    let (blocked, total) = last(json!({"read": {"block": ["private/**"]}}));
    assert!(blocked.files_scanned < 60, "{blocked:?}");
    assert!(
        blocked.matches <= total && total <= 40,
        "{blocked:?} {total}"
    );
}

#[test]
fn a_patch_of_many_files_reports_the_files_it_plans() {
    let fx = Fixture::new();
    let mut patch = String::new();
    for i in 0..100 {
        patch.push_str(&format!(
            "--- /dev/null\n+++ b/p/f{i:03}.txt\n@@ -0,0 +1 @@\n+x\n"
        ));
    }
    let mut s = fx.session_with(relaxed(json!({})), true, Limits::default());
    let (seen, options) = recorder();
    s.call_with(
        "apply_patch",
        &json!({ "patch": patch }).to_string(),
        &options,
    )
    .unwrap();
    let files: Vec<u64> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|u| u.files_scanned)
        .collect();
    assert_eq!(files, [32, 64, 96]);
}
