//! `changes_since` through the real component, and the host's watch over it: exactly the
//! visible changes are reported (never one under an ignored, blocked, secret or git path),
//! tokens from elsewhere or altered are refused, a token outlives its session when the
//! state directory does, and a burst of writes is one delivery of the watch.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use file_tools_host::tools::{ChangeKind, ChangesSinceArgs};
use file_tools_host::watch::{watch, WatchEvent, WatchOptions};
use file_tools_host::{Limits, Session};
use serde_json::{json, Value};

use crate::support::*;

fn token(s: &mut Session) -> String {
    let r = call(s, "changes_since", json!({})).unwrap();
    assert_eq!(r["changes"], json!([]));
    r["token"].as_str().unwrap().to_string()
}

fn since(s: &mut Session, token: &str) -> Result<Value, file_tools_host::ToolError> {
    call(s, "changes_since", json!({ "token": token }))
}

fn listed(r: &Value) -> Vec<(String, String)> {
    r["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["path"].as_str().unwrap().to_string(),
                c["change"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn keyed(fx: &Fixture, state: Option<&std::path::Path>) -> Session {
    let mut b = Session::builder(runtime())
        .repo(&fx.repo)
        .policy(json!({"read": {"block": ["private/**"]}}))
        .cursor_key([7; 32]);
    if let Some(d) = state {
        b = b.state_dir(d);
    }
    b.build().unwrap()
}

#[test]
fn changes_since_reports_exactly_the_visible_changes() {
    let fx = Fixture::new();
    let mut s = fx.session_with(
        json!({"read": {"block": ["private/**"]}}),
        false,
        Limits::default(),
    );
    let t = token(&mut s);
    fx.write("src/lib.rs", b"pub fn changed() {}\n");
    fx.write("src/new.rs", b"fn new() {}\n");
    std::fs::remove_file(fx.repo.join("docs/guide.md")).unwrap();
    std::fs::rename(fx.repo.join("src/main.rs"), fx.repo.join("src/bin.rs")).unwrap();
    // Beside them, changes that must stay unseen: ignored, generated, blocked, secret, git.
    fx.write("app.log", b"more log\n");
    fx.write("ignored_dir/data.txt", b"changed\n");
    fx.write("target/debug/out.txt", b"changed\n");
    fx.write("private/p.txt", b"blocked\n");
    fx.write(".env", b"API_KEY=SECRET-VALUE-93ab-2\n");
    fx.write(
        "config/server.pem",
        b"-----BEGIN PRIVATE KEY-----\nSECRET-VALUE-93ab\nmore\n",
    );
    fx.write(".git/config", b"[core]\n");
    let r = since(&mut s, &t).unwrap();
    let want = [
        ("docs/guide.md", "deleted"),
        ("src/bin.rs", "created"),
        ("src/lib.rs", "modified"),
        ("src/main.rs", "deleted"),
        ("src/new.rs", "created"),
    ];
    assert_eq!(
        listed(&r),
        want.map(|(p, c)| (p.to_string(), c.to_string())).to_vec()
    );
    // The reported sha256 is read_file's.
    let read = call(&mut s, "read_file", json!({"path": "src/lib.rs"})).unwrap();
    assert_eq!(r["changes"][2]["sha256"], read["sha256"]);
    assert_eq!(r["changes"][2]["size"], 20);
    let text = r.to_string();
    for hidden in [
        "private",
        ".env",
        "server.pem",
        "app.log",
        "ignored_dir",
        "target/",
        ".git",
    ] {
        assert!(!text.contains(hidden), "{hidden} in {text}");
    }
    // The new token sees nothing more; the old one still sees the same.
    let t2 = r["token"].as_str().unwrap();
    assert_eq!(listed(&since(&mut s, t2).unwrap()), vec![]);
    assert_eq!(listed(&since(&mut s, &t).unwrap()).len(), 5);
}

#[test]
fn a_forged_or_foreign_token_is_refused() {
    let a = Fixture::new();
    let b = Fixture::new();
    let mut sa = keyed(&a, None);
    let mut sb = keyed(&b, None);
    let t = token(&mut sa);
    let e = since(&mut sb, &t).unwrap_err();
    assert_eq!(
        (code(&Err(e.clone())), e.reason.as_deref()),
        ("INVALID_INPUT", Some("token"))
    );
    assert!(e.message.contains("another repository"), "{}", e.message);
    let mut forged = t.clone();
    let at = forged.len() - 3;
    let c = if forged.as_bytes()[at] == b'0' {
        "1"
    } else {
        "0"
    };
    forged.replace_range(at..at + 1, c);
    let e = since(&mut sa, &forged).unwrap_err();
    assert_eq!(e.reason.as_deref(), Some("token"));
    let e = since(&mut sa, "ft1.00.00").unwrap_err();
    assert_eq!(e.reason.as_deref(), Some("token"));
    // A cursor is no token.
    let e = call(&mut sa, "changes_since", json!({"token": t, "cursor": "x"})).unwrap_err();
    assert_eq!(e.reason.as_deref(), Some("cursor"));
    // The positive control: the token works where it was made.
    assert!(since(&mut sa, &t).is_ok());
}

#[test]
fn a_token_outlives_its_session_and_an_altered_snapshot_is_refused() {
    let fx = Fixture::new();
    let state = tempfile::tempdir().unwrap();
    let t = token(&mut keyed(&fx, Some(state.path())));
    fx.write("src/lib.rs", b"// changed\n");
    let mut again = keyed(&fx, Some(state.path()));
    let r = since(&mut again, &t).unwrap();
    assert_eq!(
        listed(&r),
        vec![("src/lib.rs".to_string(), "modified".to_string())]
    );
    // Nothing of the snapshots is in the repository.
    assert!(!temp_files(&fx.repo).iter().any(|p| p.contains("changes")));
    assert!(std::fs::read_dir(fx.repo.join(".")).unwrap().all(|e| {
        let n = e.unwrap().file_name();
        n != "changes" && n != ".file-tools-state"
    }));
    // Alter every kept snapshot: the token's is refused, as expired, not trusted.
    for e in std::fs::read_dir(state.path().join("changes")).unwrap() {
        let p = e.unwrap().path();
        let mut bytes = std::fs::read(&p).unwrap();
        bytes.extend_from_slice(b"f 1 - - - n - src/planted.rs\n");
        std::fs::write(&p, bytes).unwrap();
    }
    let e = since(&mut again, &t).unwrap_err();
    assert_eq!(e.reason.as_deref(), Some("token_expired"));
    assert!(e.message.contains("altered"), "{}", e.message);
}

#[test]
fn many_changes_come_in_pages_that_add_up() {
    let fx = Fixture::new();
    let mut s = fx.session();
    let t = token(&mut s);
    for i in 0..25 {
        fx.write(&format!("many/f{i:02}.txt"), b"x\n");
    }
    let mut got = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let r = s
            .changes_since(&ChangesSinceArgs {
                token: Some(t.clone()),
                path: None,
                max_changes: Some(10),
                include_hidden: None,
                respect_ignore: None,
                cursor: cursor.clone(),
            })
            .unwrap();
        assert_eq!(r.created, 25);
        got.extend(r.changes.iter().map(|c| (c.path.clone(), c.change)));
        match r.next_cursor {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    let want: Vec<(String, ChangeKind)> = (0..25)
        .map(|i| (format!("many/f{i:02}.txt"), ChangeKind::Created))
        .collect();
    assert_eq!(got, want);
}

/// Collects what a watch delivers.
fn collecting() -> (
    Arc<Mutex<Vec<WatchEvent>>>,
    impl FnMut(WatchEvent) + Send + 'static,
) {
    let got = Arc::new(Mutex::new(Vec::new()));
    let sink = got.clone();
    (got, move |e| sink.lock().unwrap().push(e))
}

/// Changed paths over all `Changes` deliveries, and how many deliveries there were.
fn delivered(got: &Mutex<Vec<WatchEvent>>) -> (Vec<String>, usize) {
    let got = got.lock().unwrap();
    let mut paths = Vec::new();
    let mut n = 0;
    for e in got.iter() {
        match e {
            WatchEvent::Changes(r) => {
                n += 1;
                paths.extend(r.changes.iter().map(|c| c.path.clone()));
            }
            other => panic!("unexpected delivery {other:?}"),
        }
    }
    (paths, n)
}

fn wait_for(got: &Mutex<Vec<WatchEvent>>, paths: usize) {
    let end = Instant::now() + Duration::from_secs(20);
    while delivered(got).0.len() < paths && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(50));
    }
    // Room for any late extra delivery to show.
    std::thread::sleep(Duration::from_millis(800));
}

#[test]
fn a_burst_of_a_thousand_writes_is_one_or_a_few_deliveries() {
    let fx = Fixture::new();
    let session = Arc::new(Mutex::new(fx.session_with(
        json!({}),
        false,
        Limits::default(),
    )));
    let (got, sink) = collecting();
    let options = WatchOptions::default().debounce(Duration::from_millis(300));
    let w = watch(session, options, sink).unwrap();
    std::fs::create_dir(fx.repo.join("burst")).unwrap();
    // Each file appears whole (written aside, renamed in), so that no scan sees one empty
    // and then again written.
    for i in 0..1000 {
        let aside = fx.repo.join(format!("burst-{i:04}.tmp"));
        std::fs::write(&aside, format!("{i}\n")).unwrap();
        std::fs::rename(&aside, fx.repo.join(format!("burst/f{i:04}.txt"))).unwrap();
    }
    wait_for(&got, 1000);
    drop(w);
    let (paths, n) = delivered(&got);
    let distinct: std::collections::BTreeSet<&String> =
        paths.iter().filter(|p| p.starts_with("burst/")).collect();
    assert_eq!(distinct.len(), 1000, "{paths:?}");
    // A few deliveries, not one per write (a machine that stalls longer than the quiet
    // time may split the burst a few times more).
    assert!((1..=10).contains(&n), "{n} deliveries");
}

#[test]
fn a_watch_stays_silent_on_what_the_tool_does_not_show() {
    let fx = Fixture::new();
    let session = Arc::new(Mutex::new(fx.session_with(
        json!({"read": {"block": ["private/**"]}}),
        false,
        Limits::default(),
    )));
    let (got, sink) = collecting();
    let options = WatchOptions::default().debounce(Duration::from_millis(100));
    let w = watch(session, options, sink).unwrap();
    for i in 0..20 {
        fx.write(&format!("ignored_dir/n{i}.txt"), b"x\n");
        fx.write(&format!("private/n{i}.txt"), b"x\n");
        fx.write(&format!("x{i}.log"), b"x\n");
    }
    fx.write(".git/HEAD", b"ref: refs/heads/x\n");
    // Outside the repository, and through a symlink to outside: never followed.
    fx.symlink("../outside", "out-link");
    write(&fx.outside.join("sub/new.txt"), b"outside\n");
    std::thread::sleep(Duration::from_millis(1500));
    let silent = delivered(&got).0;
    // The positive control: a visible write beside them is delivered (and the symlink,
    // itself visible, as created).
    fx.write("src/seen.rs", b"x\n");
    wait_for(&got, silent.len() + 1);
    drop(w);
    let (paths, _) = delivered(&got);
    assert!(
        silent.iter().all(|p| p == "out-link"),
        "delivered before the visible write: {silent:?}"
    );
    assert!(paths.contains(&"src/seen.rs".to_string()), "{paths:?}");
    assert!(
        paths.iter().all(|p| p == "src/seen.rs" || p == "out-link"),
        "{paths:?}"
    );
}

#[test]
fn a_watch_runs_in_the_mcp_servers_own_session() {
    let fx = Fixture::new();
    let server = file_tools_mcp::McpServer::new(fx.session()).unwrap();
    let (got, sink) = collecting();
    let options = WatchOptions::default().debounce(Duration::from_millis(100));
    let w = watch(std::sync::Arc::new(server.clone()), options, sink).unwrap();
    fx.write("src/from_mcp.rs", b"x\n");
    wait_for(&got, 1);
    drop(w);
    assert_eq!(delivered(&got).0, vec!["src/from_mcp.rs".to_string()]);
    // The server's session is the watch's: its calls still work.
    assert!(server
        .with_session(|s| s.file_info("src/from_mcp.rs").is_ok())
        .unwrap());
}
