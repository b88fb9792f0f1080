//! The `changes` section: `changes_since` on the Linux tree, unchanged and after 100
//! modified files, against `git status` on the same tree. Both run on a copy of the tree
//! (made once, mtimes kept, committed to a git repository of its own) so that neither the
//! corpus nor its timestamps move; the copy is put back with `git checkout` afterwards.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use file_tools_host::tools::ChangesSinceArgs;
use file_tools_host::Runtime;

use super::{best, ms, session};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The copy of `linux` below `scratch`, made and committed on first use.
fn prepared(linux: &Path, scratch: &Path) -> std::path::PathBuf {
    let copy = scratch.join("linux-changes");
    if !copy.join(".git").is_dir() {
        let _ = std::fs::remove_dir_all(&copy);
        std::fs::create_dir_all(scratch).expect("scratch dir");
        let ok = Command::new("cp")
            .arg("-a")
            .arg(std::fs::canonicalize(linux).expect("the corpus's linux tree"))
            .arg(&copy)
            .status()
            .expect("cp runs");
        assert!(ok.success(), "copying the tree failed");
        let _ = std::fs::remove_file(copy.join(".extracted"));
        git(&copy, &["init", "-q"]);
        git(&copy, &["add", "-A"]);
        git(
            &copy,
            &[
                "-c",
                "user.name=bench",
                "-c",
                "user.email=bench@localhost",
                "commit",
                "-q",
                "-m",
                "tree",
            ],
        );
    }
    // Refresh the index once, so that git status is measured on a settled index too.
    git(&copy, &["status", "--porcelain"]);
    copy
}

fn args(token: Option<String>) -> ChangesSinceArgs {
    ChangesSinceArgs {
        token,
        path: None,
        max_changes: None,
        include_hidden: None,
        respect_ignore: None,
        cursor: None,
    }
}

/// Appends a line to 100 C files spread over the tree; returns their paths.
fn modify_100(copy: &Path) -> Vec<String> {
    let all = git(copy, &["ls-files", "*.c"]);
    let files: Vec<&str> = all.lines().collect();
    let step = (files.len() / 100).max(1);
    let chosen: Vec<String> = files
        .iter()
        .step_by(step)
        .take(100)
        .map(|s| s.to_string())
        .collect();
    for f in &chosen {
        let p = copy.join(f);
        let mut data = std::fs::read(&p).expect("read");
        data.extend_from_slice(b"/* changed by the benchmark */\n");
        std::fs::write(&p, data).expect("write");
    }
    chosen
}

pub fn changes_rows(rt: &Runtime, linux: &Path, scratch: &Path) {
    println!("\n## changes_since\n");
    let copy = prepared(linux, scratch);
    // Past the racy window of files put back by an earlier run (the first snapshot would
    // otherwise hash them again at every call).
    std::thread::sleep(Duration::from_millis(2100));
    let mut s = session(rt, &copy, false);
    let t = Instant::now();
    let first = s.changes_since(&args(None)).expect("first token");
    println!(
        "first token (every readable file hashed): {} ({} files hashed)\n",
        ms(t.elapsed()),
        first.rehashed
    );
    println!(
        "| tree | changes_since | git status --porcelain | ratio | files re-hashed | changes |"
    );
    println!("|---|---|---|---|---|---|");
    let row = |what: &str, s: &mut file_tools_host::Session, token: &str| {
        let (ours, r) = best(5, || {
            s.changes_since(&args(Some(token.to_string())))
                .expect("changes")
        });
        let (theirs, porcelain) = best(5, || git(&copy, &["status", "--porcelain"]));
        println!(
            "| {what} | {} | {} | {:.2}x | {} | {} (git: {}) |",
            ms(ours),
            ms(theirs),
            ours.as_secs_f64() / theirs.as_secs_f64().max(1e-9),
            r.rehashed,
            r.changes.len(),
            porcelain.lines().count()
        );
    };
    // Past the racy window of the first snapshot, as an agent's next call would be.
    std::thread::sleep(Duration::from_millis(2100));
    row("unchanged (78k files)", &mut s, &first.token);
    let chosen = modify_100(&copy);
    row("100 files modified", &mut s, &first.token);
    restore(&copy, &chosen);
    watched_rows(rt, &copy);
}

/// Puts the files `modify_100` changed back as committed.
fn restore(copy: &Path, chosen: &[String]) {
    let mut restore = vec!["checkout", "-q", "--"];
    restore.extend(chosen.iter().map(String::as_str));
    git(copy, &restore);
}

/// `changes_since` in a session with the host's watch (the MCP server's kind): unchanged,
/// its count answers; after 100 files modified, the next call walks again only the
/// directories the watch stamped. That call is timed alone, three times, each after a
/// line more is appended to the same 100 files (put back by `git checkout` only at the
/// end: a file removed and made again stamps its name for good, see the host's
/// `tree_watch`); `git status` best of 5 on the same modified tree. Then the same with a
/// `git status` run before each call, which makes the watch stamp everything.
fn watched_rows(rt: &Runtime, copy: &Path) {
    let mut p = super::policy();
    p["limits"]["max_index_bytes"] = serde_json::json!(1u64 << 30);
    let state = tempfile::tempdir().expect("state dir");
    let mut w = super::builder(rt, copy, false)
        .policy(p)
        .state_dir(state.path())
        .watch_tree(true)
        .build()
        .expect("session");
    std::thread::sleep(Duration::from_millis(2100));
    let first = w.changes_since(&args(None)).expect("first token");
    std::thread::sleep(Duration::from_millis(2100));
    let (ours, _) = best(5, || {
        w.changes_since(&args(Some(first.token.clone())))
            .expect("changes")
    });
    let (theirs, _) = best(5, || git(copy, &["status", "--porcelain"]));
    println!(
        "| unchanged, with a watch | {} | {} | {:.3}x | | |",
        ms(ours),
        ms(theirs),
        ours.as_secs_f64() / theirs.as_secs_f64().max(1e-9)
    );
    // The agent's way: each call with the token the previous one returned. The first
    // call after the `git status` runs above scans the whole tree (see below).
    let mut token = w
        .changes_since(&args(Some(first.token.clone())))
        .expect("changes")
        .token;
    let mut times = Vec::new();
    let (mut found, mut rehashed) = (0, 0);
    let mut chosen = Vec::new();
    for _ in 0..3 {
        chosen = modify_100(copy);
        let t = Instant::now();
        let r = w.changes_since(&args(Some(token))).expect("changes");
        times.push(t.elapsed());
        (found, rehashed, token) = (r.changes.len(), r.rehashed, r.token);
    }
    let (theirs, _) = best(5, || git(copy, &["status", "--porcelain"]));
    times.sort();
    println!(
        "| 100 files modified, with a watch (the next call with the last token, median of 3) | {} | {} | {:.3}x | {rehashed} | {found} |",
        ms(times[1]),
        ms(theirs),
        times[1].as_secs_f64() / theirs.as_secs_f64().max(1e-9)
    );
    // After a `git status`: git makes and removes its lock file, a file made and removed
    // before the watch's thread confirmed it, for which the watch stamps everything; the
    // call then lists every directory (from the kept listings) and scans the whole tree.
    let mut times = Vec::new();
    for _ in 0..3 {
        chosen = modify_100(copy);
        git(copy, &["status", "--porcelain"]);
        let t = Instant::now();
        let r = w.changes_since(&args(Some(token))).expect("changes");
        times.push(t.elapsed());
        (found, rehashed, token) = (r.changes.len(), r.rehashed, r.token);
    }
    restore(copy, &chosen);
    times.sort();
    let ours = times[1];
    println!(
        "| 100 files modified, with a watch, a `git status` before the call (median of 3) | {} | {} | {:.3}x | {rehashed} | {found} |",
        ms(ours),
        ms(theirs),
        ours.as_secs_f64() / theirs.as_secs_f64().max(1e-9)
    );
}
