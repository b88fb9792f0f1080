//! The pooling allocator and a fresh instance per call.

use serde_json::json;

use crate::support::*;
use file_tools_host::{Runtime, Session};

#[test]
fn fresh_instances_from_a_small_pool_serve_many_sessions() {
    let fx = Fixture::new();
    let rt = Runtime::builder().pooling(2).build().unwrap();
    let mut sessions: Vec<Session> = (0..5)
        .map(|_| {
            Session::builder(&rt)
                .repo(&fx.repo)
                .writable(true)
                .fresh_instance_per_call(true)
                .build()
                .unwrap()
        })
        .collect();
    for (i, s) in sessions.iter_mut().enumerate() {
        let path = format!("notes/{i}.txt");
        call(s, "write_file", json!({ "path": path, "content": "x\n" })).unwrap();
        let v = call(s, "read_file", json!({ "path": path })).unwrap();
        assert_eq!(v["content"], "x\n");
        // Each call ran in its own instance, yet the session's baseline is intact.
        let d = call(s, "diff_workspace", json!({})).unwrap();
        assert_eq!(d["files"].as_array().unwrap().len(), 1, "{d}");
    }
}

#[test]
fn an_exhausted_pool_fails_the_call_not_the_host() {
    let fx = Fixture::new();
    let rt = Runtime::builder().pooling(1).build().unwrap();
    let mut a = Session::builder(&rt).repo(&fx.repo).build().unwrap();
    call(&mut a, "read_file", json!({ "path": "README.md" })).unwrap();
    // `a` keeps its instance, so the one slot is taken.
    let b = Session::builder(&rt).repo(&fx.repo).build();
    match b {
        Err(e) => assert!(
            e.to_string().contains("pool") || e.to_string().contains("instance"),
            "{e}"
        ),
        Ok(mut b) => {
            let r = call(&mut b, "read_file", json!({ "path": "README.md" }));
            assert!(r.is_err());
        }
    }
    drop(a);
    let mut c = Session::builder(&rt).repo(&fx.repo).build().unwrap();
    call(&mut c, "read_file", json!({ "path": "README.md" })).unwrap();
}
