//! Concurrency: many threads, each with its own session on one repository, racing to change
//! the same file with the same expected sha256. Exactly one wins each race; nothing is lost.

use std::sync::{Arc, Barrier};

use serde_json::json;

use crate::support::*;
use file_tools_host::{code_name, Session};

#[test]
fn racing_writers_with_one_expected_sha_have_exactly_one_winner() {
    let fx = Fixture::new();
    let writers = 8;
    for round in 0..5 {
        let current = std::fs::read(fx.repo.join("src/main.rs")).unwrap();
        let expected = sha256(&current);
        let barrier = Arc::new(Barrier::new(writers));
        let handles: Vec<_> = (0..writers)
            .map(|w| {
                let mut s = Session::builder(runtime()).repo(&fx.repo).writable(true).build().unwrap();
                let barrier = barrier.clone();
                let expected = expected.clone();
                std::thread::spawn(move || {
                    barrier.wait();
                    let content = format!("round {round} writer {w}\n");
                    let r = s.call("write_file", &json!({ "path": "src/main.rs", "content": content, "expected_sha256": expected }).to_string());
                    (w, r.map_err(|e| code_name(e.code)))
                })
            })
            .collect();
        let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        let winners: Vec<usize> = results
            .iter()
            .filter(|(_, r)| r.is_ok())
            .map(|(w, _)| *w)
            .collect();
        assert_eq!(winners.len(), 1, "round {round}: {results:?}");
        assert!(
            results
                .iter()
                .all(|(_, r)| r.is_ok() || *r == Err("WRITE_CONFLICT")),
            "{results:?}"
        );
        let now = std::fs::read_to_string(fx.repo.join("src/main.rs")).unwrap();
        assert_eq!(now, format!("round {round} writer {}\n", winners[0]));
    }
}

#[test]
fn retrying_editors_lose_no_update() {
    let fx = Fixture::new();
    fx.write("counter.txt", b"0\n");
    let threads = 4;
    let per_thread = 10;
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let mut s = Session::builder(runtime()).repo(&fx.repo).writable(true).build().unwrap();
            std::thread::spawn(move || {
                let mut conflicts = 0;
                for _ in 0..per_thread {
                    loop {
                        let v = s.call("read_file", r#"{"path":"counter.txt"}"#).unwrap();
                        let n: u64 = v["content"].as_str().unwrap().trim().parse().unwrap();
                        let args = json!({
                            "path": "counter.txt",
                            "edits": [{ "old_text": format!("{n}\n"), "new_text": format!("{}\n", n + 1) }],
                            "expected_sha256": v["sha256"],
                        });
                        match s.call("edit_file", &args.to_string()) {
                            Ok(_) => break,
                            Err(e) => {
                                assert_eq!(code_name(e.code), "WRITE_CONFLICT", "{}", e.message);
                                conflicts += 1;
                            }
                        }
                    }
                }
                conflicts
            })
        })
        .collect();
    let conflicts: u32 = handles.into_iter().map(|h| h.join().unwrap()).sum();
    let final_count: u64 = std::fs::read_to_string(fx.repo.join("counter.txt"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(
        final_count,
        (threads * per_thread) as u64,
        "lost updates ({conflicts} conflicts seen)"
    );
}
