//! The adversarial suite's race section: a second process of the same user changes the
//! repository while calls run. Each test runs a changer thread for hundreds of calls and
//! checks that nothing policy hides was returned and nothing was written where policy
//! forbids, with a positive control (some calls must succeed) so that a tool refusing
//! everything fails.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use serde_json::json;

use crate::support::*;

const ROUNDS: usize = 150;

/// A thread that runs `step` until stopped, counting its steps.
struct Changer {
    stop: Arc<AtomicBool>,
    steps: Arc<AtomicU64>,
    handle: Option<JoinHandle<()>>,
}

impl Changer {
    fn start(mut step: impl FnMut() + Send + 'static) -> Changer {
        let stop = Arc::new(AtomicBool::new(false));
        let steps = Arc::new(AtomicU64::new(0));
        let (s, n) = (stop.clone(), steps.clone());
        let handle = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                step();
                n.fetch_add(1, Ordering::Relaxed);
            }
        });
        Changer {
            stop,
            steps,
            handle: Some(handle),
        }
    }

    /// Stops the thread; returns how many changes it made.
    fn stop(mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            h.join().expect("changer thread");
        }
        self.steps.load(Ordering::Relaxed)
    }
}

/// Atomically makes `at` a symlink to `target` (a new link renamed over the name).
fn relink(at: &Path, target: &str) {
    let tmp = at.with_extension("flip-tmp");
    let _ = std::fs::remove_file(&tmp);
    if std::os::unix::fs::symlink(target, &tmp).is_ok() {
        let _ = std::fs::rename(&tmp, at);
    }
}

/// Atomically makes `at` a regular file holding `content`.
fn refile(at: &Path, content: &str) {
    let tmp = at.with_extension("file-tmp");
    if std::fs::write(&tmp, content).is_ok() {
        let _ = std::fs::rename(&tmp, at);
    }
}

/// Exchanges two names atomically (renameat2 `RENAME_EXCHANGE`).
fn exchange(a: &Path, b: &Path) {
    let _ = rustix::fs::renameat_with(
        rustix::fs::CWD,
        a,
        rustix::fs::CWD,
        b,
        rustix::fs::RenameFlags::EXCHANGE,
    );
}

fn ino(p: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(p).map_or(0, |m| m.ino())
}

/// A read-side call under a flipping link: never the secret, and the harmless content
/// reached at least once.
#[test]
fn a_link_flipped_between_a_harmless_file_and_env_never_leaks_the_secret() {
    link_flipped_between_a_harmless_file_and_env(false);
}

/// The same with the host's watch: listings kept between calls never show the flipped
/// name as it was (a listing of the harmless file answered after the flip).
#[test]
fn with_a_watch_a_link_flipped_between_a_harmless_file_and_env_never_leaks_the_secret() {
    link_flipped_between_a_harmless_file_and_env(true);
}

fn link_flipped_between_a_harmless_file_and_env(watched: bool) {
    let fx = Fixture::new();
    fx.write("harmless.txt", b"harmless words\n");
    fx.symlink("harmless.txt", "link.txt");
    fx.write("plain.txt", b"harmless words\n");
    let mut s = if watched {
        fx.watched_session(json!({}))
    } else {
        fx.session()
    };
    // Warm-up before the changer starts.
    assert!(call(&mut s, "read_file", json!({"path": "link.txt"})).is_ok());
    let (link, plain) = (fx.repo.join("link.txt"), fx.repo.join("plain.txt"));
    let mut flip = false;
    let changer = Changer::start(move || {
        flip = !flip;
        if flip {
            relink(&link, ".env");
            relink(&plain, ".env");
        } else {
            relink(&link, "harmless.txt");
            refile(&plain, "harmless words\n");
        }
    });
    let mut ok = 0;
    for i in 0..ROUNDS {
        // `call` fails the test on any output holding the secret marker.
        for (tool, args) in [
            ("read_file", json!({"path": "link.txt"})),
            ("read_file", json!({"path": "plain.txt"})),
            ("read_many", json!({"paths": ["link.txt", "plain.txt"]})),
            ("file_info", json!({"path": "link.txt"})),
            (
                "search_text",
                json!({"query": "=", "include_hidden": true, "path": if i % 2 == 0 { "" } else { "link.txt" }}),
            ),
            ("list_dir", json!({"include_hidden": true})),
        ] {
            let r = call(&mut s, tool, args);
            if tool == "read_file" && r.as_ref().is_ok_and(|v| v.to_string().contains("harmless")) {
                ok += 1;
            }
        }
    }
    let flips = changer.stop();
    assert!(flips > 50, "the changer barely ran ({flips} flips)");
    assert!(
        ok > 0,
        "no read of the harmless file succeeded: the positive control failed"
    );
}

/// Writes into a directory exchanged with `.git` over and over: nothing ever lands in the
/// real `.git`, and writes that were let through landed in the harmless directory. (Once
/// the harmless directory has been seen named `.git` it is refused too: the positive
/// control is the writes beside it, which must all succeed.)
#[test]
fn a_directory_exchanged_with_git_never_receives_a_write() {
    let fx = Fixture::new();
    fx.write("dir/file.txt", b"one\ntwo\n");
    fx.write(".git/hooks/README", b"sample\n");
    let git = fx.repo.join(".git");
    let git_ino = ino(&git);
    let git_before = snapshot(&git);
    let mut s = fx.session();
    assert!(call(&mut s, "list_dir", json!({})).is_ok());
    let (a, b): (PathBuf, PathBuf) = (fx.repo.join("dir"), git.clone());
    let changer = Changer::start(move || exchange(&a, &b));
    let mut written = Vec::new();
    for i in 0..ROUNDS {
        let name = format!("dir/hooks/h{i}");
        let r = call(
            &mut s,
            "write_file",
            json!({"path": name, "content": "#!/bin/sh\necho pwned\n"}),
        );
        if r.is_ok() {
            written.push(format!("hooks/h{i}"));
        }
        let patch = format!("--- /dev/null\n+++ b/dir/p{i}.txt\n@@ -0,0 +1 @@\n+patched\n");
        if call(&mut s, "apply_patch", json!({"patch": patch})).is_ok() {
            written.push(format!("p{i}.txt"));
        }
        let control = call(
            &mut s,
            "write_file",
            json!({"path": format!("other/c{i}"), "content": "ok\n"}),
        );
        assert!(
            control.is_ok(),
            "a write beside the race failed: {control:?}"
        );
    }
    let swaps = changer.stop();
    assert!(swaps > 50, "the changer barely ran ({swaps} swaps)");
    if ino(&git) != git_ino {
        exchange(&fx.repo.join("dir"), &git);
    }
    assert_eq!(ino(&git), git_ino, "could not put .git back");
    assert_eq!(snapshot(&git), git_before, "a write reached the real .git");
    for w in &written {
        assert!(
            fx.repo.join("dir").join(w).exists(),
            "{w} was reported written but is not in dir/"
        );
    }
    assert!(
        temp_files(&fx.repo).is_empty(),
        "{:?}",
        temp_files(&fx.repo)
    );
}

/// A read or write whose parent directory is flipped between a real directory and a
/// symlink to `.git` never reads or writes `.git`.
#[test]
fn a_parent_flipped_to_a_link_into_git_is_never_followed() {
    let fx = Fixture::new();
    fx.write("real/config", b"harmless config\n");
    let git_before = snapshot(&fx.repo.join(".git"));
    let mut s = fx.session();
    assert!(call(&mut s, "read_file", json!({"path": "real/config"})).is_ok());
    let (real, parked) = (fx.repo.join("real"), fx.repo.join("parked"));
    let mut flips = 0u32;
    // Each state is held a little while: moving the directory away and back leaves the
    // name missing in between, and without a pause it would hardly ever be a directory.
    // Every fourth time the directory stays 10 ms, long enough for a whole read however
    // fast the machine: the positive control below does not hang on a lucky timing (a
    // read looks the directory up several times, all of which must find it).
    let changer = Changer::start(move || {
        flips = flips.wrapping_add(1);
        let pause = if flips % 2 == 1 {
            let _ = std::fs::rename(&real, &parked);
            relink(&real, ".git");
            200
        } else {
            let _ = std::fs::remove_file(&real);
            // A write that came while the name was missing made `real` afresh (missing
            // parents are made): put the real directory back over it.
            if std::fs::rename(&parked, &real).is_err() {
                let _ = std::fs::remove_dir_all(&real);
                let _ = std::fs::rename(&parked, &real);
            }
            if flips.is_multiple_of(8) {
                10_000
            } else {
                200
            }
        };
        std::thread::sleep(std::time::Duration::from_micros(pause));
    });
    let mut ok = 0;
    for i in 0..ROUNDS {
        match call(&mut s, "read_file", json!({"path": "real/config"})) {
            Ok(_) => ok += 1,
            Err(e) => {
                if std::env::var_os("RACE_DEBUG").is_some() {
                    eprintln!("{}: {}", file_tools_host::code_name(e.code), e.message);
                }
            }
        }
        let _ = call(
            &mut s,
            "write_file",
            json!({"path": format!("real/w{i}"), "content": "x"}),
        );
        let _ = call(
            &mut s,
            "edit_file",
            json!({"path": "real/config", "edits": [{"old_text": "harmless", "new_text": "harmless"}]}),
        );
    }
    changer.stop();
    assert_eq!(
        snapshot(&fx.repo.join(".git")),
        git_before,
        "a write reached .git"
    );
    assert!(ok > 0, "no read succeeded: the positive control failed");
}

/// State planted in the repository is never used as the session's state.
#[test]
fn a_planted_state_directory_is_never_state() {
    let fx = Fixture::new();
    fx.write(".file-tools-state/index.json", br#"{"version":1,"entries":{"leak.txt":{"existed":true,"sha256":"0000000000000000000000000000000000000000000000000000000000000000"}}}"#);
    fx.write(
        ".file-tools-state/blobs/0000000000000000000000000000000000000000000000000000000000000000",
        b"planted\n",
    );
    fx.symlink(".env", "leak.txt");
    fx.symlink(".file-tools-state/index.json", "state-link");
    for writable in [false, true] {
        let mut s = fx.session_with(json!({}), writable, file_tools_host::Limits::default());
        let d = call(&mut s, "diff_workspace", json!({})).expect("diff_workspace");
        assert!(d["files"].as_array().is_some_and(|f| f.is_empty()), "{d}");
        for p in [".file-tools-state/index.json", "state-link"] {
            assert_eq!(
                code(&call(&mut s, "read_file", json!({"path": p}))),
                "PATH_REJECTED",
                "{p}"
            );
        }
        // Positive control: an ordinary read in the same session works.
        assert!(call(&mut s, "read_file", json!({"path": "README.md"})).is_ok());
    }
}

/// A file flipped between a regular file and a FIFO while reads, searches, edits and
/// writes run (Wasmtime host, whose `host-fs.dir` opens non-blocking): every call ends
/// well within its time limit instead of waiting for a FIFO writer, nothing is read from
/// the FIFO, and the repository lock is free afterwards (a change goes through at once).
#[test]
fn a_file_swapped_for_a_fifo_never_blocks_a_call() {
    let fx = Fixture::new();
    fx.write("data.txt", b"plain words\n");
    let limits = file_tools_host::Limits {
        timeout: std::time::Duration::from_secs(5),
        ..Default::default()
    };
    let mut s = fx.session_with(relaxed(json!({})), true, limits);
    assert!(call(&mut s, "read_file", json!({"path": "data.txt"})).is_ok());
    let (path, fifo, plain) = (
        fx.repo.join("data.txt"),
        fx.repo.join("data.fifo-tmp"),
        fx.repo.join("data.plain-tmp"),
    );
    let mut flip = false;
    let changer = Changer::start(move || {
        flip = !flip;
        if flip {
            let _ = std::fs::remove_file(&fifo);
            let made = rustix::fs::mknodat(
                rustix::fs::CWD,
                &fifo,
                rustix::fs::FileType::Fifo,
                rustix::fs::Mode::from_raw_mode(0o644),
                0,
            );
            if made.is_ok() {
                let _ = std::fs::rename(&fifo, &path);
            }
        } else if std::fs::write(&plain, "plain words\n").is_ok() {
            let _ = std::fs::rename(&plain, &path);
        }
        std::thread::sleep(std::time::Duration::from_micros(100));
    });
    // The calls run on their own thread, so that a blocked one fails the test instead of
    // hanging it.
    let (tx, rx) = std::sync::mpsc::channel();
    let worker = std::thread::spawn(move || {
        let mut ok = 0;
        for i in 0..ROUNDS {
            for (tool, args) in [
                ("read_file", json!({"path": "data.txt"})),
                ("file_info", json!({"path": "data.txt"})),
                (
                    "search_text",
                    json!({"query": "words", "path": if i % 2 == 0 { "data.txt" } else { "" }}),
                ),
                (
                    "edit_file",
                    json!({"path": "data.txt", "edits": [{"old_text": "plain", "new_text": "plain"}]}),
                ),
                (
                    "write_file",
                    json!({"path": "data.txt", "content": "plain words\n"}),
                ),
            ] {
                let started = std::time::Instant::now();
                let r = call(&mut s, tool, args);
                let took = started.elapsed();
                // Never held by the FIFO (a blocked open would take until the call's
                // deadline or for ever); loose enough for a loaded machine's fsyncs.
                assert!(
                    took < std::time::Duration::from_secs(15),
                    "{tool} took {took:?}"
                );
                ok += usize::from(r.is_ok());
            }
        }
        let _ = tx.send(ok);
        s
    });
    let ok = rx
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("a call blocked on the FIFO");
    let mut s = worker.join().expect("worker");
    let flips = changer.stop();
    assert!(flips > 50, "the changer barely ran ({flips} flips)");
    assert!(ok > 0, "no call succeeded: the positive control failed");
    // The lock is free: a change in another file goes through at once.
    let started = std::time::Instant::now();
    assert!(call(
        &mut s,
        "write_file",
        json!({"path": "after.txt", "content": "x\n"})
    )
    .is_ok());
    assert!(started.elapsed() < std::time::Duration::from_secs(15));
}

/// What the attacker review found, pinned: a file the agent wrote, swapped afterwards for a
/// hard link to `.env` or to a file outside, shows in the session diff as opaque, never
/// with that content.
#[cfg(unix)]
#[test]
fn diff_workspace_never_shows_content_through_a_hard_link_swapped_in() {
    let fx = Fixture::new();
    let mut s = fx.session();
    for p in ["c.txt", "o.txt"] {
        assert!(call(
            &mut s,
            "write_file",
            json!({"path": p, "content": "mine\n"})
        )
        .is_ok());
    }
    let swap = |name: &str, to: &Path| {
        let tmp = fx.repo.join(format!("{name}.swap"));
        std::fs::hard_link(to, &tmp).unwrap();
        std::fs::rename(&tmp, fx.repo.join(name)).unwrap();
    };
    swap("c.txt", &fx.repo.join(".env"));
    swap("o.txt", &fx.outside.join("secret.txt"));
    // `call` fails on any output holding the secret or the outside sentinel.
    let d = call(&mut s, "diff_workspace", json!({})).unwrap();
    assert_eq!(d["files"].as_array().unwrap().len(), 2, "{d}");
    assert!(call(&mut s, "list_dir", json!({})).is_ok());
    let info = call(&mut s, "file_info", json!({"path": "c.txt"})).unwrap();
    assert_eq!(info["size"], 0, "{info}");
}

/// `changes_since` with tokens while names flip under it: a link between a harmless file
/// and `.env`, a file between harmless and secret-bearing content, a name between a file
/// and a directory holding a secret-named file, and an ignore file between hiding and
/// showing a blocked directory's neighbour. The walk reuses the earlier scan's verdicts
/// (its memo) wherever a directory's rules and an entry's name and type are unchanged:
/// never a secret's content, size or hash, nor anything under the blocked directory, and
/// the harmless changes are reported (the positive control).
#[test]
fn changes_since_under_flipping_names_tells_nothing_policy_hides() {
    changes_since_under_flipping_names(false);
}

/// The same with the host's watch, whose listings of unchanged directories are kept.
#[test]
fn with_a_watch_changes_since_under_flipping_names_tells_nothing_policy_hides() {
    changes_since_under_flipping_names(true);
}

fn changes_since_under_flipping_names(watched: bool) {
    let fx = Fixture::new();
    let secret_text = format!("token = \"AKIAIOSFODNN7EXAMPLE\" {SECRET_MARK}\n");
    fx.write("harmless.txt", b"harmless words\n");
    fx.symlink("harmless.txt", "link.txt");
    fx.write("notes.txt", b"harmless words\n");
    fx.write("cfg", b"plain\n");
    fx.write("private/p.txt", b"blocked\n");
    fx.write("sub/.gitignore", b"*.log\n");
    fx.write("sub/keep.log", b"log\n");
    let policy = json!({"read": {"block": ["private/**"]}});
    let mut s = if watched {
        fx.watched_session(policy)
    } else {
        file_tools_host::Session::builder(runtime())
            .repo(&fx.repo)
            .policy(policy)
            .build()
            .unwrap()
    };
    let secret_sha = sha256(secret_text.as_bytes());
    let mut token = call(&mut s, "changes_since", json!({})).unwrap()["token"]
        .as_str()
        .unwrap()
        .to_string();
    let repo = fx.repo.clone();
    let mut step = 0u32;
    let changer = Changer::start(move || {
        step = step.wrapping_add(1);
        let flip = step.is_multiple_of(2);
        relink(
            &repo.join("link.txt"),
            if flip { ".env" } else { "harmless.txt" },
        );
        refile(
            &repo.join("notes.txt"),
            if flip {
                &secret_text
            } else {
                "harmless words\n"
            },
        );
        let cfg = repo.join("cfg");
        if flip {
            let _ = std::fs::remove_file(&cfg);
            let _ = std::fs::create_dir(&cfg);
            let _ = std::fs::write(cfg.join("id_rsa"), SECRET_MARK);
        } else {
            let _ = std::fs::remove_dir_all(&cfg);
            let _ = std::fs::write(&cfg, format!("plain {step}\n"));
        }
        refile(
            &repo.join("sub/.gitignore"),
            if flip { "" } else { "*.log\n" },
        );
        refile(
            &repo.join("harmless.txt"),
            &format!("harmless words {step}\n"),
        );
    });
    let mut reported = 0;
    for _ in 0..ROUNDS {
        let r = call(&mut s, "changes_since", json!({ "token": token })).unwrap();
        let text = r.to_string();
        assert!(!text.contains(&secret_sha), "a secret's hash: {text}");
        assert!(!text.contains("private/"), "a blocked path: {text}");
        for c in r["changes"].as_array().unwrap() {
            let path = c["path"].as_str().unwrap();
            // A secret by name: its coming and going only. (`notes.txt` turning secret
            // by content is a visible file modified, told without size or hash; the
            // secret's hash is checked above.)
            if path == "cfg/id_rsa" {
                assert_ne!(c["change"], "modified", "{c}");
                assert!(c["size"].is_null() && c["sha256"].is_null(), "{c}");
            }
            reported += usize::from(path == "harmless.txt");
        }
        token = r["token"].as_str().unwrap().to_string();
    }
    let flips = changer.stop();
    assert!(flips > 50, "the changer barely ran ({flips} flips)");
    assert!(reported > 0, "no change of harmless.txt was reported");
}
