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
