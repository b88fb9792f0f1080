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
    let mut restore = vec!["checkout", "-q", "--"];
    restore.extend(chosen.iter().map(String::as_str));
    git(&copy, &restore);
}
