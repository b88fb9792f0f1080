#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

/// A small deterministic generator (xorshift), so that a failure can be replayed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Every file and every directory below `dir` (not through links), relative to `root`.
fn all_below(root: &Path, dir: &Path, files: &mut Vec<PathBuf>, dirs: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for e in entries {
        let (p, ty) = (e.path(), e.file_type().unwrap());
        let rel = p.strip_prefix(root).unwrap().to_path_buf();
        if ty.is_dir() {
            dirs.push(rel);
            all_below(root, &p, files, dirs);
        } else if ty.is_file() {
            files.push(rel);
        }
    }
}

/// One change of the many kinds a second process makes: files made, rewritten (to the same
/// size, with the old time put back), truncated, removed, renamed across directories,
/// given a second name (which hides them), linked to, replaced by a FIFO; directories
/// made, moved in from outside, renamed, removed whole, swapped for a look-alike, exchanged
/// with another (`RENAME_EXCHANGE`); ignore rules changed.
fn change(rng: &mut Rng, repo: &Path, outside: &Path, round: usize) -> String {
    let (mut files, mut dirs) = (Vec::new(), vec![PathBuf::new()]);
    all_below(repo, repo, &mut files, &mut dirs);
    let file = files.get(rng.below(files.len().max(1))).cloned();
    let dir = dirs[rng.below(dirs.len())].clone();
    let (f, d) = (file.as_deref().map(|f| repo.join(f)), repo.join(&dir));
    let what = rng.below(15);
    match (what, f) {
        (0, _) => write(&d.join(format!("n{round}.txt")), "amber new\n"),
        (1, Some(f)) => {
            let old = std::fs::metadata(&f).unwrap();
            let len = old.len() as usize;
            write(
                &f,
                &"x".repeat(len.saturating_sub(1))
                    .chars()
                    .chain(['\n'])
                    .collect::<String>()[..len],
            );
            let file = std::fs::File::options().write(true).open(&f).unwrap();
            file.set_modified(old.modified().unwrap()).unwrap();
        }
        (2, Some(f)) => std::fs::remove_file(f).unwrap(),
        (3, Some(f)) => std::fs::rename(f, d.join(format!("moved{round}.txt"))).unwrap(),
        (4, _) => {
            let made = d.join(format!("m{round}/deep"));
            write(&made.join("a.txt"), "amber made\n");
            write(&made.join("b.txt"), "basil made\n");
        }
        (5, _) => {
            let away = outside.join(format!("in{round}"));
            write(&away.join("sub/c.txt"), "amber moved in\n");
            std::fs::rename(&away, d.join(format!("in{round}"))).unwrap();
        }
        (6, _) if !dir.as_os_str().is_empty() => {
            let to = repo.join(format!("renamed{round}"));
            std::fs::rename(&d, to).unwrap();
        }
        (7, _) if !dir.as_os_str().is_empty() => std::fs::remove_dir_all(&d).unwrap(),
        (8, Some(f)) => std::fs::hard_link(&f, d.join(format!("link{round}.txt"))).unwrap(),
        (9, Some(f)) => std::os::unix::fs::symlink(&f, d.join(format!("sym{round}"))).unwrap(),
        (10, Some(f)) => {
            let file = std::fs::File::options().write(true).open(&f).unwrap();
            file.set_len(3).unwrap();
        }
        (11, _) => write(&d.join(".gitignore"), &format!("n{}*\n", round % 7)),
        (12, _) if !dir.as_os_str().is_empty() => {
            // A look-alike: the same subdirectories, other files.
            let like = outside.join(format!("like{round}"));
            for sub in ["s0", "s1", "s2", "s0/deep"] {
                write(
                    &like.join(sub).join(format!("l{round}.txt")),
                    "amber look-alike\n",
                );
            }
            std::fs::rename(&d, outside.join(format!("gone{round}"))).unwrap();
            std::fs::rename(&like, &d).unwrap();
        }
        (13, _) if !dir.as_os_str().is_empty() => {
            let other = dirs[rng.below(dirs.len())].clone();
            let (a, b) = (d.clone(), repo.join(&other));
            if !a.starts_with(&b) && !b.starts_with(&a) {
                rustix::fs::renameat_with(
                    rustix::fs::CWD,
                    &a,
                    rustix::fs::CWD,
                    &b,
                    rustix::fs::RenameFlags::EXCHANGE,
                )
                .unwrap();
            }
        }
        (14, Some(f)) => {
            std::fs::remove_file(&f).unwrap();
            rustix::fs::mknodat(
                rustix::fs::CWD,
                &f,
                rustix::fs::FileType::Fifo,
                rustix::fs::Mode::from_raw_mode(0o644),
                0,
            )
            .unwrap();
        }
        _ => return "nothing".into(),
    }
    format!("change {what} at '{}'", dir.display())
}

/// `changes_since` of each session against its own token, as the changes alone.
fn changes(s: &mut crate::Session, token: &mut Value) -> Value {
    let mut v = s
        .call("changes_since", &json!({ "token": token }).to_string())
        .unwrap();
    *token = v["token"].take();
    v["changes"].take()
}

/// What `on` (a session whose host keeps listings while its watch runs) answers is what
/// `off` (one that lists every directory every time) answers, after each of many random
/// changes: `changes_since`, `find_files`, `list_dir` and a search. And `on` did answer
/// listings from its cache, and `changes_since` from the watch's stamps, listing only the
/// directories they name (else the comparison tells nothing).
#[test]
fn kept_listings_answer_what_fresh_ones_do_after_every_kind_of_change() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, outside) = (tmp.path().join("repo"), tmp.path().join("outside"));
    for d in 0..5 {
        for s in 0..3 {
            for f in 0..4 {
                let word = ["amber", "basil", "cedar"][(d + s + f) % 3];
                write(
                    &repo.join(format!("d{d}/s{s}/f{f}.txt")),
                    &format!("{word} {d}{s}{f}\n"),
                );
            }
        }
        write(&repo.join(format!("d{d}/top.txt")), "amber top\n");
    }
    std::fs::create_dir_all(&outside).unwrap();
    let rt = crate::Runtime::builder()
        .cache_dir(tmp.path().join("cache"))
        .build()
        .unwrap();
    let open = |state: &str, watch: bool| {
        crate::Session::builder(&rt)
            .repo(&repo)
            .state_dir(tmp.path().join(state))
            .policy(json!({ "limits": { "max_index_bytes": if watch { 1 << 26 } else { 0 } } }))
            .watch_tree(watch)
            .build()
            .unwrap()
    };
    let (mut on, mut off) = (open("state-on", true), open("state-off", false));
    let first = json!({});
    let mut tokens = [Value::Null, Value::Null];
    for (s, t) in [&mut on, &mut off].into_iter().zip(&mut tokens) {
        *t = s.call("changes_since", &first.to_string()).unwrap()["token"].take();
    }
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    // Calls of `changes_since` that listed fewer than half the directories: only those the
    // watch stamped, and those holding a file with other names or one written within the
    // timestamp step of the last snapshot (most files here: their number varies with the
    // machine's speed, 13 to 25 rounds seen; without the stamps, 1).
    let mut stamped_only = 0;
    for round in 0..120 {
        let what = change(&mut rng, &repo, &outside, round);
        let [a, b] = &mut tokens;
        let asked = on.listings_asked();
        assert_eq!(
            changes(&mut on, a),
            changes(&mut off, b),
            "round {round}: {what}"
        );
        let (mut dirs, mut files) = (vec![PathBuf::new()], Vec::new());
        all_below(&repo, &repo, &mut files, &mut dirs);
        // A whole walk lists every directory (from the cache or not).
        stamped_only += usize::from((on.listings_asked() - asked) * 2 < dirs.len() as u64);
        let listed = dirs[rng.below(dirs.len())].to_string_lossy().into_owned();
        let calls = [
            (
                "find_files",
                json!({ "patterns": ["**"], "include_hidden": true }),
            ),
            ("list_dir", json!({ "path": listed, "max_depth": 3 })),
            (
                "search_text",
                json!({ "query": "amber", "output": "count" }),
            ),
        ];
        for (tool, args) in calls {
            let strip = |mut v: Value| {
                v.as_object_mut().unwrap().remove("next_cursor");
                v
            };
            let got = on.call(tool, &args.to_string()).map(strip);
            let want = off.call(tool, &args.to_string()).map(strip);
            assert_eq!(
                got.map_err(|e| e.message),
                want.map_err(|e| e.message),
                "round {round}: {what}: {tool} {args}"
            );
        }
    }
    assert!(
        on.listings_answered() > 100,
        "positive control: listings were answered from the cache ({})",
        on.listings_answered()
    );
    assert_eq!(off.listings_answered(), 0);
    assert!(
        stamped_only > 5,
        "positive control: changes_since listed only the stamped directories in {stamped_only} of 120 rounds"
    );
}
