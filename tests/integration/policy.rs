//! Policies given by the host: read rules, overrides, read-only sessions, malformed policies.

use serde_json::json;

use crate::support::*;
use file_tools_host::{HostError, Session};

#[test]
fn blocked_and_allowed_read_globs() {
    let fx = Fixture::new();
    let mut s = fx.session_with(
        json!({ "read": { "allow": ["src/**", "docs/**"], "block": ["src/util"] } }),
        true,
        Default::default(),
    );
    assert!(call(&mut s, "read_file", json!({ "path": "src/main.rs" })).is_ok());
    let e = call(
        &mut s,
        "read_file",
        json!({ "path": "src/util/strings.rs" }),
    )
    .unwrap_err();
    assert_eq!(e.reason.as_deref(), Some("blocked"));
    let e = call(&mut s, "read_file", json!({ "path": "pom.xml" })).unwrap_err();
    assert_eq!(e.reason.as_deref(), Some("not_allowed"));
    let v = call(&mut s, "find_files", json!({ "patterns": ["*"] })).unwrap();
    assert_eq!(
        v["paths"],
        json!(["docs/guide.md", "src/lib.rs", "src/main.rs"])
    );
    let v = call(&mut s, "search_text", json!({ "query": "shout" })).unwrap();
    assert_eq!(v["total_matches"], 0);
}

#[test]
fn overrides_can_mark_paths_secret() {
    let fx = Fixture::new();
    let mut s = fx.session_with(
        json!({ "overrides": [{ "pattern": "docs/**", "kind": "secret" }] }),
        true,
        Default::default(),
    );
    let e = call(&mut s, "read_file", json!({ "path": "docs/guide.md" })).unwrap_err();
    assert_eq!(e.reason.as_deref(), Some("secret"));
    let v = call(&mut s, "search_text", json!({ "query": "subtract" })).unwrap();
    assert_eq!(v["total_matches"], 0);
}

#[test]
fn read_only_sessions_say_so_and_the_agent_cannot_change_the_policy() {
    let fx = Fixture::new();
    let mut s = fx.session_with(json!({}), false, Default::default());
    assert!(s.read_only());
    let v = call(&mut s, "file_info", json!({ "path": "src/main.rs" })).unwrap();
    assert_eq!(
        (v["writable"].as_bool(), v["write_denied_reason"].as_str()),
        (Some(false), Some("read_only"))
    );
    // The policy is not an argument of any tool: smuggling one in is malformed input.
    let r = call(
        &mut s,
        "read_file",
        json!({ "path": ".env", "policy": { "overrides": [] } }),
    );
    assert_eq!(code(&r), "INVALID_INPUT");
}

#[test]
fn malformed_policies_fail_at_build_time() {
    let fx = Fixture::new();
    for bad in [
        json!({ "read_onyl": true }),
        json!({ "read": { "block": ["a[b"] } }),
        json!({ "limits": { "max_read_bytes": -1 } }),
    ] {
        let r = Session::builder(runtime())
            .repo(&fx.repo)
            .policy(bad.clone())
            .build();
        assert!(matches!(r, Err(HostError::Policy(_))), "{bad}: {r:?}");
    }
    let r = Session::builder(runtime()).policy(json!({})).build();
    assert!(matches!(r, Err(HostError::Config(_))));
    let r = Session::builder(runtime())
        .repo(fx.repo.join("missing"))
        .build();
    assert!(matches!(r, Err(HostError::Repo { .. })));
}
