//! Limits: fuel, memory and wall-clock time each fail only the call that hit them, with
//! LIMIT_EXCEEDED, and the same session serves the next call.

use std::time::Duration;

use serde_json::json;

use crate::support::*;
use file_tools_host::{ErrorCode, Limits};

fn big_repo() -> Fixture {
    let fx = Fixture::new();
    let line = "the quick brown fox jumps over the lazy dog 0123456789\n";
    for i in 0..8 {
        fx.write(&format!("big/f{i}.txt"), line.repeat(40_000).as_bytes());
    }
    fx
}

#[test]
fn fuel_exhaustion_fails_one_call_and_the_session_goes_on() {
    let fx = big_repo();
    let before = fx.snapshot();
    let limits = Limits {
        fuel_per_call: 50_000_000,
        ..Limits::default()
    };
    let mut s = fx.session_with(json!({}), true, limits);
    let r = call(
        &mut s,
        "search_text",
        json!({ "query": "(fox|dog)+\\d", "regex": true, "output": "count" }),
    );
    assert_eq!(code(&r), "LIMIT_EXCEEDED");
    assert!(r.unwrap_err().message.contains("fuel"));
    let v = call(&mut s, "read_file", json!({ "path": "README.md" })).unwrap();
    assert_eq!(v["content"], "# demo\nA small repository.\n");
    let ev = fx.events();
    assert_eq!(ev.len(), 2, "the trapped call still has its one event");
    assert_eq!(ev[0].error_code, Some(ErrorCode::LimitExceeded));
    assert!(ev[1].ok);
    assert_eq!(fx.snapshot(), before);
}

#[test]
fn wall_clock_limit_interrupts_a_long_call() {
    let fx = big_repo();
    let limits = Limits {
        timeout: Duration::from_millis(20),
        ..Limits::default()
    };
    let mut s = fx.session_with(json!({}), true, limits);
    let started = std::time::Instant::now();
    let r = call(
        &mut s,
        "search_text",
        json!({ "query": "[a-z]+\\s[a-z]+\\s\\d", "regex": true, "case_insensitive": true, "output": "count" }),
    );
    assert_eq!(code(&r), "LIMIT_EXCEEDED");
    assert!(r.unwrap_err().message.contains("time"));
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(call(&mut s, "file_info", json!({ "path": "README.md" })).is_ok());
}

#[test]
fn memory_limit_stops_a_call_that_needs_too_much() {
    let fx = Fixture::new();
    fx.write("large.txt", "x".repeat(40 << 20).as_bytes());
    let limits = Limits {
        memory_bytes: 24 << 20,
        ..Limits::default()
    };
    let policy = json!({ "limits": { "max_whole_read_bytes": 100_000_000, "max_search_file_bytes": 100_000_000 } });
    let mut s = fx.session_with(policy, true, limits);
    let r = call(
        &mut s,
        "search_text",
        json!({ "query": "y", "path": "large.txt" }),
    );
    assert_eq!(code(&r), "LIMIT_EXCEEDED");
    assert!(r.unwrap_err().message.contains("memory"));
    assert!(call(&mut s, "read_file", json!({ "path": "README.md" })).is_ok());
}

/// A runtime over the fault-injection build of the component.
fn fault_runtime() -> &'static file_tools_host::Runtime {
    static RT: std::sync::OnceLock<file_tools_host::Runtime> = std::sync::OnceLock::new();
    RT.get_or_init(|| {
        let wasm = std::fs::read(file_tools_testkit::FAULT_WASM).unwrap();
        let cache = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("component-cache");
        file_tools_host::Runtime::builder()
            .component_bytes(wasm)
            .cache_dir(cache)
            .build()
            .unwrap()
    })
}

#[test]
fn a_guest_panic_fails_one_call_and_the_session_goes_on() {
    let fx = Fixture::new();
    let events = fx.events.clone();
    let mut s = file_tools_host::Session::builder(fault_runtime())
        .repo(&fx.repo)
        .writable(true)
        .fault_injection("call:read_file")
        .audit_sink(std::sync::Arc::new(
            move |e: &file_tools_host::AuditEvent| events.lock().unwrap().push(e.clone()),
        ))
        .build()
        .unwrap();
    let before = fx.snapshot();
    let r = s.call("read_file", r#"{"path":"README.md"}"#);
    assert_eq!(code(&r), "INTERNAL");
    assert!(r.unwrap_err().message.contains("session goes on"));
    let v = s.call("file_info", r#"{"path":"README.md"}"#).unwrap();
    assert_eq!(v["kind"], "doc");
    let ev = fx.events();
    assert_eq!(ev.len(), 2);
    assert_eq!(ev[0].error_code, Some(ErrorCode::Internal));
    assert!(ev[1].ok);
    assert_eq!(fx.snapshot(), before);
}

#[test]
fn a_panic_before_the_renames_changes_no_file_and_the_next_session_cleans_up() {
    let fx = Fixture::new();
    let state = fx.repo.parent().unwrap().join("state");
    let before = snapshot(&fx.repo);
    let patch = "--- a/src/main.rs\n+++ b/src/main.rs\n@@ -1 +1 @@\n-fn main() {\n+fn main() { // changed\n\
--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1 +1 @@\n-pub fn add(a: i32, b: i32) -> i32 {\n+pub fn add(a: i64, b: i64) -> i64 {\n\
--- /dev/null\n+++ b/src/new.rs\n@@ -0,0 +1 @@\n+// new\n";
    {
        let mut s = file_tools_host::Session::builder(fault_runtime())
            .repo(&fx.repo)
            .writable(true)
            .state_dir(&state)
            .fault_injection("commit")
            .build()
            .unwrap();
        let r = s.call("apply_patch", &json!({ "patch": patch }).to_string());
        assert_eq!(code(&r), "INTERNAL");
    }
    let mut after = snapshot(&fx.repo);
    let leftovers = temp_files(&fx.repo);
    assert_eq!(
        leftovers.len(),
        3,
        "the panic struck after the temporary files were written"
    );
    after.retain(|p, _| !p.display().to_string().contains(".ft-tmp-"));
    assert_eq!(after, before, "no file changed");
    // The next session on the same state directory removes what the failed call left.
    let mut s = file_tools_host::Session::builder(runtime())
        .repo(&fx.repo)
        .writable(true)
        .state_dir(&state)
        .build()
        .unwrap();
    s.call("apply_patch", &json!({ "patch": patch }).to_string())
        .unwrap();
    assert!(temp_files(&fx.repo).is_empty());
    assert!(std::fs::read_to_string(fx.repo.join("src/lib.rs"))
        .unwrap()
        .contains("i64"));
}

#[test]
fn an_unmetered_runtime_ignores_fuel_but_keeps_the_time_limit() {
    let fx = big_repo();
    let rt = file_tools_host::Runtime::builder()
        .fuel_metering(false)
        .build()
        .unwrap();
    assert!(!rt.fuel_metered() && runtime().fuel_metered());
    let session = |limits: Limits| {
        file_tools_host::Session::builder(&rt)
            .repo(&fx.repo)
            .limits(limits)
            .build()
            .unwrap()
    };
    // The fuel that stops the metered search above is not enforced here.
    let mut s = session(Limits {
        fuel_per_call: 50_000_000,
        ..Limits::default()
    });
    let v = call(
        &mut s,
        "search_text",
        json!({ "query": "(fox|dog)+\\d", "regex": true, "output": "count" }),
    )
    .unwrap();
    assert!(v["files_searched"].as_u64().unwrap() >= 8, "{v}");
    // The wall clock still stops a long call.
    let mut s = session(Limits {
        timeout: Duration::from_millis(20),
        ..Limits::default()
    });
    let r = call(
        &mut s,
        "search_text",
        json!({ "query": "[a-z]+\\s[a-z]+\\s\\d", "regex": true, "case_insensitive": true, "output": "count" }),
    );
    assert_eq!(code(&r), "LIMIT_EXCEEDED");
    assert!(call(&mut s, "file_info", json!({ "path": "README.md" })).is_ok());
}
