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
    stateless(repo, policy, bytes).state_dir(state)
}

/// [`builder`] without a state directory (the session's state lives in a temporary one).
fn stateless(repo: &Path, policy: &str, bytes: Arc<Mutex<u64>>) -> SessionBuilder {
    Session::builder(runtime())
        .repo(repo)
        .policy(serde_json::from_str(policy).unwrap())
        .limits(Limits::default())
        .audit_sink(Arc::new(move |e: &AuditEvent| {
            *bytes.lock().unwrap() += e.bytes_read;
        }))
}

/// The index files the component saved in `state` (named by 64 hex digits).
fn saved(state: &Path) -> Vec<std::path::PathBuf> {
    saved_in(&state.join(index_build::INDEX_DIR_NAME))
}

/// The index files in the index folder `folder`.
fn saved_in(folder: &Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(folder)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.file_name().is_some_and(|n| n.len() == 64))
                .collect()
        })
        .unwrap_or_default()
}

/// Searches `s` for the rare needle and checks that the search read only `needle`, the one
/// file that holds it (what a loaded index spares); `read` is what `s`'s audit sink adds up.
/// The answer, for comparing.
fn finds_reading_only(s: &mut Session, read: &Mutex<u64>, needle: &Path) -> serde_json::Value {
    let found = call(s, "search_text", json!({"query": "rare_needle"})).unwrap();
    assert_eq!(found["files_matched"], 1, "{found}");
    let len = std::fs::metadata(needle).unwrap().len();
    assert_eq!(*read.lock().unwrap(), len, "the index spared no read");
    found
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
    let marker = state
        .join(index_build::INDEX_DIR_NAME)
        .join(index_build::INDEX_BUILDING);
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
    let mut a = finds_reading_only(&mut on, &read, &repo.join("d0/needle.txt"));
    let mut b = call(&mut off, "search_text", json!({"query": "rare_needle"})).unwrap();
    for v in [&mut a, &mut b] {
        v.as_object_mut().unwrap().remove("next_cursor");
    }
    assert_eq!(a, b);
}

/// A tree whose build no single call can finish (here: a third of the fuel the whole
/// build takes) is built over several calls when the builder saves as it goes; saving only
/// at the end (the control), the build ends with the first call and keeps nothing.
#[test]
fn a_build_too_large_for_one_call_goes_on_from_what_the_last_call_saved() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    let line = "some text that holds no needle, repeated to fill the file\n".repeat(60);
    for i in 0..600 {
        write(&repo.join(format!("d{}/f{i}.txt", i % 10)), line.as_bytes());
    }
    write(&repo.join("d3/needle.txt"), b"the rare_needle_here\n");
    std::thread::sleep(Duration::from_millis(2_200));
    let calls: Arc<Mutex<Vec<file_tools_host::CallRecord>>> = Arc::default();
    let seen = calls.clone();
    let builder_in = |state: &str, limits: Limits| {
        let seen = seen.clone();
        builder(&repo, &tmp.path().join(state), ON, Arc::default())
            .index_builder(true)
            .limits(limits)
            .observer(Arc::new(move |c: &file_tools_host::CallRecord| {
                seen.lock().unwrap().push(c.clone())
            }))
    };
    let mut whole = builder_in("whole", Limits::default()).build().unwrap();
    index_build::build(&mut whole, None).unwrap();
    let fuel = calls.lock().unwrap().last().unwrap().fuel;
    assert!(fuel > 0, "the runtime meters no fuel");
    let third = Limits {
        fuel_per_call: fuel / 3,
        ..Limits::default()
    };

    calls.lock().unwrap().clear();
    let mut at_end = builder_in("at-end", third)
        .index_checkpoint_every(Duration::from_secs(3600))
        .build()
        .unwrap();
    let err = index_build::build(&mut at_end, None).unwrap_err();
    assert_eq!(err.code, file_tools_host::ErrorCode::LimitExceeded);
    assert_eq!(
        calls.lock().unwrap().len(),
        1,
        "a call that saved nothing was repeated"
    );
    assert!(saved(&tmp.path().join("at-end")).is_empty());

    calls.lock().unwrap().clear();
    let state = tmp.path().join("as-it-goes");
    // Often enough that a call whose third of the fuel runs out in a few milliseconds (a
    // fast spell of the machine) still saves before it ends.
    let mut as_it_goes = builder_in("as-it-goes", third)
        .index_checkpoint_every(Duration::from_millis(1))
        .build()
        .unwrap();
    index_build::build(&mut as_it_goes, None).unwrap();
    let made = calls.lock().unwrap().clone();
    let outcomes: Vec<&str> = made.iter().map(|c| c.outcome.as_str()).collect();
    assert!(outcomes.len() >= 2, "{outcomes:?}");
    assert_eq!(outcomes.last(), Some(&"ok"), "{outcomes:?}");
    let tree_bytes = 600 * line.len() as u64;
    assert!(
        made.last().unwrap().bytes_read < tree_bytes,
        "the last call read the whole tree again: {made:?}"
    );
    assert!(!state
        .join(index_build::INDEX_DIR_NAME)
        .join(index_build::INDEX_BUILDING)
        .exists());

    // The next session loads what the build saved: it reads only the file with the needle.
    let read = Arc::new(Mutex::new(0));
    let mut next = open(&repo, &state, ON, read.clone());
    finds_reading_only(&mut next, &read, &repo.join("d3/needle.txt"));
}

/// A call that a limit ends having kept nothing is not followed by another because the
/// index folder holds something new that is no index: a save that the limit cut before its
/// rename leaves only its temporary file (planted here after each call, as a wall-clock
/// limit leaves one when it ends a call during a save). Counted as progress, each such
/// call was repeated up to the build's bound, each leaving another such file.
#[test]
fn a_call_that_left_only_a_cut_save_is_not_repeated() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    let line = "some text that holds no needle, repeated to fill the file\n".repeat(60);
    for i in 0..300 {
        write(&repo.join(format!("d{}/f{i}.txt", i % 10)), line.as_bytes());
    }
    std::thread::sleep(Duration::from_millis(2_200));
    let fuel = Arc::new(Mutex::new(0));
    let used = fuel.clone();
    let mut whole = builder(&repo, &tmp.path().join("whole"), ON, Arc::default())
        .index_builder(true)
        .observer(Arc::new(move |c: &file_tools_host::CallRecord| {
            *used.lock().unwrap() = c.fuel
        }))
        .build()
        .unwrap();
    index_build::build(&mut whole, None).unwrap();
    let third = Limits {
        fuel_per_call: *fuel.lock().unwrap() / 3,
        ..Limits::default()
    };
    assert!(third.fuel_per_call > 0, "the runtime meters no fuel");

    let shared = tmp.path().join("shared");
    let calls = Arc::new(Mutex::new(0u32));
    let (counted, folder) = (calls.clone(), shared.clone());
    let mut cut = builder(&repo, &tmp.path().join("cut"), ON, Arc::default())
        .index_dir(&shared)
        .index_builder(true)
        .limits(third)
        .index_checkpoint_every(Duration::from_secs(3600))
        .observer(Arc::new(move |_: &file_tools_host::CallRecord| {
            let mut n = counted.lock().unwrap();
            *n += 1;
            let torn = folder.join(format!(".{:016x}.tmp", *n));
            std::fs::write(torn, b"ftindex, cut short").unwrap();
        }))
        .build()
        .unwrap();
    let err = index_build::build(&mut cut, None).unwrap_err();
    assert_eq!(err.code, file_tools_host::ErrorCode::LimitExceeded);
    assert!(saved_in(&shared).is_empty());
    assert_eq!(
        *calls.lock().unwrap(),
        1,
        "a call that kept nothing was repeated"
    );
}

/// [`index_build::spawn`] announces the build before it returns, in a folder it makes: a
/// state directory or index folder inside the repository is refused before that, so
/// nothing is made in the repository (a session's build refuses it too, but only after
/// the announcement had made its folder there).
#[test]
fn a_build_spawned_for_a_folder_inside_the_repository_makes_nothing_there() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    write(&repo.join("a.txt"), b"some text\n");
    let cases = [
        (tmp.path().join("state"), Some(repo.join("idx"))),
        (repo.join("state"), None),
    ];
    for (state, index) in cases {
        let mut b = builder(&repo, &state, ON, Arc::default());
        if let Some(i) = &index {
            b = b.index_dir(i);
        }
        let (tx, rx) = mpsc::channel();
        index_build::spawn(b, move |answer| tx.send(answer).unwrap()).unwrap();
        let answer = rx.recv_timeout(Duration::from_secs(120)).unwrap();
        let Err(err) = answer else {
            panic!("a build inside the repository ran: {answer:?}");
        };
        assert!(err.contains("outside the repository"), "{err}");
        assert_eq!(
            std::fs::read_dir(&repo).unwrap().count(),
            1,
            "the refused build made something in the repository"
        );
    }
}

/// A build spawned for a session with an index folder and no state directory of its own
/// (the session's state lives in a temporary directory) keeps the index in that folder,
/// where a later such session finds it (with neither, see the next test).
#[test]
fn a_build_spawned_with_an_index_folder_and_no_state_directory_keeps_it_there() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    tree(&repo);
    let shared = tmp.path().join("shared-index");
    let (tx, rx) = mpsc::channel();
    let first = stateless(&repo, ON, Arc::default()).index_dir(&shared);
    index_build::spawn(first, move |a| tx.send(a).unwrap()).unwrap();
    rx.recv_timeout(Duration::from_secs(120)).unwrap().unwrap();
    assert_eq!(saved_in(&shared).len(), 1, "not saved in the index folder");
    let read = Arc::new(Mutex::new(0));
    let mut later = stateless(&repo, ON, read.clone())
        .index_dir(&shared)
        .build()
        .unwrap();
    finds_reading_only(&mut later, &read, &repo.join("d0/needle.txt"));
}

/// Sessions given one index folder (each with a state directory of its own, as the HTTP
/// server's sessions are) share one index: the build announces and saves it there, and a
/// session opened later reads only the file that matches. A folder inside the repository
/// is refused.
#[test]
fn sessions_given_one_index_folder_share_the_index_a_build_made() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    tree(&repo);
    let shared = tmp.path().join("shared-index");
    let (tx, rx) = mpsc::channel();
    let first = builder(&repo, &tmp.path().join("first"), ON, Arc::default()).index_dir(&shared);
    index_build::spawn(first, move |answer| tx.send(answer).unwrap()).unwrap();
    assert!(
        shared.join(index_build::INDEX_BUILDING).is_file(),
        "not announced in the shared folder"
    );
    rx.recv_timeout(Duration::from_secs(120)).unwrap().unwrap();
    assert_eq!(saved_in(&shared).len(), 1);
    assert!(
        saved(&tmp.path().join("first")).is_empty(),
        "saved in the session's own folder"
    );
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&shared).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o700, "the shared folder is not private");

    let read = Arc::new(Mutex::new(0));
    let mut second = builder(&repo, &tmp.path().join("second"), ON, read.clone())
        .index_dir(&shared)
        .build()
        .unwrap();
    finds_reading_only(&mut second, &read, &repo.join("d0/needle.txt"));
    // Control: a session with its own folder has nothing to load, and reads every file.
    let all = Arc::new(Mutex::new(0));
    let mut own = open(&repo, &tmp.path().join("own"), ON, all.clone());
    call(&mut own, "search_text", json!({"query": "rare_needle"})).unwrap();
    let needle = std::fs::metadata(repo.join("d0/needle.txt")).unwrap().len();
    assert!(
        *all.lock().unwrap() > 20 * needle,
        "{}",
        all.lock().unwrap()
    );

    let inside = builder(&repo, &tmp.path().join("third"), ON, Arc::default())
        .index_dir(repo.join("idx"))
        .build();
    let Err(err) = inside else {
        panic!("an index folder inside the repository was taken");
    };
    assert!(err.to_string().contains("outside the repository"), "{err}");
    assert!(
        !repo.join("idx").exists(),
        "the refused folder was made in the repository"
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

/// A builder given neither a state directory nor an index folder has nowhere to keep the
/// index: the build says so and builds nothing (no session is opened for it).
#[test]
fn a_build_without_a_state_directory_or_index_folder_is_refused_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    write(&repo.join("a.txt"), b"text\n");
    let (tx, rx) = mpsc::channel();
    index_build::spawn(stateless(&repo, ON, Arc::default()), move |answer| {
        tx.send(answer).unwrap()
    })
    .unwrap();
    let answer = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    let err = answer.unwrap_err();
    assert!(
        err.contains("neither a state directory nor an index folder"),
        "{err}"
    );
}
