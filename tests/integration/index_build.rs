//! The search index built outside the calls (`file_tools_host::index_build`): announced in
//! the state directory before the build starts and until it ends, saved whole, holding
//! nothing the policy hides, and used by the next session; and the MCP server building it
//! at start, before any call.

use std::path::Path;
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use file_tools_host::{index_build, AuditEvent, Limits, Session, SessionBuilder};
use serde_json::json;

use crate::support::*;

const ON: &str = r#"{"limits": {"max_index_bytes": 268435456}}"#;

fn open(repo: &Path, state: &Path, policy: &str, bytes: Arc<Mutex<u64>>) -> Session {
    builder(repo, state, policy, bytes)
        .build()
        .expect("session")
}

fn builder(repo: &Path, state: &Path, policy: &str, bytes: Arc<Mutex<u64>>) -> SessionBuilder {
    Session::builder(runtime())
        .repo(repo)
        .state_dir(state)
        .policy(serde_json::from_str(policy).unwrap())
        .limits(Limits::default())
        .audit_sink(Arc::new(move |e: &AuditEvent| {
            *bytes.lock().unwrap() += e.bytes_read;
        }))
}

/// The index files the component saved in `state` (named by 64 hex digits).
fn saved(state: &Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(state.join("index"))
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.file_name().is_some_and(|n| n.len() == 64))
                .collect()
        })
        .unwrap_or_default()
}

fn tree(repo: &Path) {
    for i in 0..40 {
        let body = format!("file {i} mentions word_{} and more text\n", i % 7).repeat(20);
        write(&repo.join(format!("d{}/f{i}.txt", i % 4)), body.as_bytes());
    }
    write(&repo.join("d0/needle.txt"), b"the rare_needle_here\n");
    write(&repo.join(".env"), b"TOKEN=hidden_secret_value\n");
    // Records are trusted once the files' times are well older than the look.
    std::thread::sleep(Duration::from_millis(2_200));
}

#[test]
fn a_build_in_the_background_is_announced_saved_and_used_by_the_next_session() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, state) = (tmp.path().join("repo"), tmp.path().join("state"));
    tree(&repo);
    let marker = state.join(index_build::INDEX_BUILDING);
    // A link planted at the announcement's name: the announcement replaces the link and
    // never writes through it.
    let outside = tmp.path().join("outside.txt");
    std::fs::write(&outside, b"not the state directory's").unwrap();
    std::fs::create_dir_all(marker.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&outside, &marker).unwrap();
    let (tx, rx) = mpsc::channel();
    index_build::spawn(builder(&repo, &state, ON, Arc::default()), move |answer| {
        tx.send(answer).unwrap()
    })
    .unwrap();
    assert!(marker.is_file(), "not announced before spawn returned");
    let answer = rx.recv_timeout(Duration::from_secs(120)).unwrap().unwrap();
    assert!(answer["files_searched"].as_u64().unwrap() >= 41, "{answer}");
    assert!(!marker.exists(), "the announcement outlived the build");
    assert_eq!(
        std::fs::read(&outside).unwrap(),
        b"not the state directory's"
    );
    let files = saved(&state);
    assert_eq!(files.len(), 1);
    let bytes = std::fs::read(&files[0]).unwrap();
    let holds = |s: &[u8]| bytes.windows(s.len()).any(|w| w == s);
    assert!(holds(b"d0/needle.txt"), "positive control");
    assert!(
        !holds(b".env") && !holds(b"hidden_secret"),
        "the index holds the secret"
    );

    // The next session loads it: it reads only the file with the needle, and answers as a
    // session without the index does.
    let read = Arc::new(Mutex::new(0));
    let mut on = open(&repo, &state, ON, read.clone());
    let off_state = tmp.path().join("off");
    let mut off = open(&repo, &off_state, "{}", Arc::default());
    let args = json!({"query": "rare_needle"});
    let mut a = call(&mut on, "search_text", args.clone()).unwrap();
    let mut b = call(&mut off, "search_text", args).unwrap();
    for v in [&mut a, &mut b] {
        v.as_object_mut().unwrap().remove("next_cursor");
    }
    assert_eq!(a, b);
    assert_eq!(a["files_matched"], 1, "{a}");
    let needle = std::fs::metadata(repo.join("d0/needle.txt")).unwrap().len();
    assert_eq!(
        *read.lock().unwrap(),
        needle,
        "the loaded index spared no read"
    );
}

/// `file-tools mcp` with a policy that turns the index on builds it at start: the index
/// file appears in the state directory while no call is made. A plain CLI call with the
/// same policy builds none (the control).
#[test]
fn the_mcp_server_builds_the_index_at_start_before_any_call() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, state) = (tmp.path().join("repo"), tmp.path().join("state"));
    tree(&repo);
    let policy = tmp.path().join("on.toml");
    std::fs::write(&policy, "[limits]\nmax_index_bytes = 268435456\n").unwrap();
    let base = |state: &Path| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_file-tools"));
        c.arg("--repo")
            .arg(&repo)
            .arg("--state-dir")
            .arg(state)
            .arg("--policy")
            .arg(&policy)
            .env(
                "FILE_TOOLS_CACHE_DIR",
                Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-cache"),
            );
        c
    };
    let control = tmp.path().join("control");
    let out = base(&control)
        .args(["call", "list_dir", "{}"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(saved(&control).is_empty(), "a plain call built the index");

    let mut server = base(&state)
        .arg("mcp")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while saved(&state).is_empty() && started.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(100));
    }
    let built = !saved(&state).is_empty();
    let _ = server.kill();
    let out = server.wait_with_output().unwrap();
    assert!(
        built,
        "no index after {:?}: {}",
        started.elapsed(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A builder without a state directory has nowhere to keep the index: the build says so
/// and builds nothing (no session is opened for it).
#[test]
fn a_build_without_a_state_directory_is_refused_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    write(&repo.join("a.txt"), b"text\n");
    let b = Session::builder(runtime())
        .repo(&repo)
        .policy(serde_json::from_str(ON).unwrap());
    let (tx, rx) = mpsc::channel();
    index_build::spawn(b, move |answer| tx.send(answer).unwrap()).unwrap();
    let answer = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(answer.unwrap_err().contains("no state directory"));
}
