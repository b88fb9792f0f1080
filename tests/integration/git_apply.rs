//! Differential test: random changes to a small repository are turned into patches by
//! `git diff`, then applied to fresh copies by `apply_patch` and by `git apply`; the two
//! trees must be identical (and equal to the tree git diffed).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use crate::support::*;

/// A small deterministic generator (xorshift64*), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "core.autocrlf=false",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git must be installed for this test");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn base_files(rng: &mut Rng) -> BTreeMap<String, String> {
    let mut files = BTreeMap::new();
    for f in 0..6 {
        let n = 5 + rng.below(40);
        let body: String = (0..n)
            .map(|i| format!("file {f} line {i} {}\n", rng.below(4)))
            .collect();
        files.insert(format!("d{}/f{f}.txt", f % 3), body);
    }
    files
}

fn mutate(rng: &mut Rng, files: &mut BTreeMap<String, String>) {
    for _ in 0..1 + rng.below(4) {
        let keys: Vec<String> = files.keys().cloned().collect();
        let k = keys[rng.below(keys.len())].clone();
        let mut lines: Vec<String> = files[&k]
            .split_inclusive('\n')
            .map(str::to_string)
            .collect();
        match rng.below(8) {
            0..=2 if !lines.is_empty() => {
                let i = rng.below(lines.len());
                lines[i] = format!("changed {}\n", rng.next() % 1000);
            }
            3 => {
                let i = rng.below(lines.len() + 1);
                lines.insert(i, format!("inserted {}\n", rng.next() % 1000));
            }
            4 if lines.len() > 1 => {
                let i = rng.below(lines.len());
                lines.remove(i);
            }
            5 => {
                if let Some(l) = lines.last_mut() {
                    if l.ends_with('\n') {
                        l.pop();
                    } else {
                        l.push('\n');
                    }
                }
            }
            6 => {
                files.insert(
                    format!("new/n{}.txt", rng.next() % 100),
                    "brand\nnew\n".into(),
                );
                continue;
            }
            7 if files.len() > 2 => {
                files.remove(&k);
                continue;
            }
            _ => {}
        }
        files.insert(k, lines.concat());
    }
}

fn write_tree(dir: &Path, files: &BTreeMap<String, String>) {
    for (p, c) in files {
        write(&dir.join(p), c.as_bytes());
    }
}

fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut t = snapshot(dir);
    t.retain(|p, _| !p.starts_with(".git"));
    t
}

#[test]
fn apply_patch_agrees_with_git_apply_on_generated_diffs() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..30 {
        let tmp = tempfile::tempdir().unwrap();
        let base = base_files(&mut rng);
        let mut changed = base.clone();
        mutate(&mut rng, &mut changed);

        let work = tmp.path().join("work");
        write_tree(&work, &base);
        git(&work, &["init", "-q"]);
        git(&work, &["add", "-A"]);
        git(&work, &["commit", "-qm", "base"]);
        for p in base.keys() {
            std::fs::remove_file(work.join(p)).unwrap();
        }
        write_tree(&work, &changed);
        git(&work, &["add", "-A"]);
        let patch = git(&work, &["diff", "--cached", "-M"]);
        if patch.is_empty() {
            continue;
        }
        let target = tree(&work);

        let ours = tmp.path().join("ours");
        write_tree(&ours, &base);
        let mut s = file_tools_host::Session::builder(runtime())
            .repo(&ours)
            .writable(true)
            .build()
            .unwrap();
        let r = s.call("apply_patch", &json!({ "patch": patch }).to_string());
        assert!(r.is_ok(), "round {round}: {r:?}\n{patch}");

        let theirs = tmp.path().join("theirs");
        write_tree(&theirs, &base);
        git(&theirs, &["init", "-q"]);
        let pf = tmp.path().join("p.diff");
        std::fs::write(&pf, &patch).unwrap();
        git(&theirs, &["apply", pf.to_str().unwrap()]);

        assert_eq!(
            tree(&ours),
            tree(&theirs),
            "round {round}: ours and git apply differ\n{patch}"
        );
        assert_eq!(
            tree(&ours),
            target,
            "round {round}: result differs from the diffed tree\n{patch}"
        );
    }
}

#[test]
fn our_diffs_apply_with_git_apply() {
    let fx = Fixture::new();
    let copy = fx.repo.parent().unwrap().join("copy");
    let mut s = fx.session_with(
        relaxed(json!({ "allow_move": true })),
        true,
        Default::default(),
    );
    let tools_base = tree(&fx.repo);
    write_tree(&copy, &BTreeMap::new());
    for (p, c) in &tools_base {
        if std::fs::metadata(fx.repo.join(p)).unwrap().is_file() {
            write(&copy.join(p), c);
        }
    }
    call(&mut s, "edit_file", json!({ "path": "src/lib.rs", "edits": [{ "old_text": "a - b", "new_text": "a.saturating_sub(b)" }] })).unwrap();
    call(
        &mut s,
        "write_file",
        json!({ "path": "docs/new.md", "content": "no newline at end" }),
    )
    .unwrap();
    call(&mut s, "delete_file", json!({ "path": "pom.xml" })).unwrap();
    call(
        &mut s,
        "move_file",
        json!({ "from": "docs/guide.md", "to": "docs/manual.md" }),
    )
    .unwrap();
    call(
        &mut s,
        "edit_file",
        json!({ "path": "crlf.txt", "edits": [{ "old_text": "two", "new_text": "deux" }] }),
    )
    .unwrap();
    let d = call(&mut s, "diff_workspace", json!({})).unwrap();
    let pf = fx.repo.parent().unwrap().join("ws.diff");
    std::fs::write(&pf, d["diff"].as_str().unwrap()).unwrap();
    git(&copy, &["init", "-q"]);
    git(&copy, &["apply", pf.to_str().unwrap()]);
    for p in ["src/lib.rs", "docs/new.md", "docs/manual.md", "crlf.txt"] {
        assert_eq!(
            std::fs::read(copy.join(p)).unwrap(),
            std::fs::read(fx.repo.join(p)).unwrap(),
            "{p}"
        );
    }
    assert!(!copy.join("pom.xml").exists() && !copy.join("docs/guide.md").exists());
}
