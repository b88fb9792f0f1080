//! The walk's memo changes nothing a scan finds: a scan that reuses the earlier scan's
//! verdicts equals one that judges every entry afresh, through random changes to a tree
//! (ignore files rewritten, build files appearing beside `target/`, files turned into
//! directories, secrets and hidden names coming and going), and it does reuse them.

#![allow(clippy::unwrap_used)]

use std::fs;
use std::path::Path;

use super::scan::{scan, ScanStats};
use super::snapshot::Snapshot;
use crate::rules::fsx::Fs;
use crate::rules::path::LogicalPath;
use crate::rules::policy::Policy;
use crate::rules::walk::{walk_with, Flow, Skips, WalkOptions};
use crate::rules::walk_memo::{self, WalkMemo};
use crate::tools::session::Session;

const DIRS: &[&str] = &["", "src", "src/sub", "target", "build", "lib", "lib/target"];
const NAMES: &[&str] = &[
    "a.rs",
    "keep.log",
    "notes.log",
    ".env",
    "id_rsa",
    ".hidden",
    "Cargo.toml",
    "package.json",
    "app.min.js",
    "yarn.lock",
    "target",
    "build",
    "node_modules",
    "HEAD",
    "objects",
    "refs",
    "sub",
];
const RULES: &[&str] = &[
    "*.log",
    "!keep.log",
    "target/",
    "build",
    "/a.rs",
    "sub/",
    "*.js",
    "",
    "!*.rs",
];

/// A small deterministic generator (xorshift), so that a failure repeats.
struct Draw(u64);

impl Draw {
    fn next(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.next(from.len())]
    }
}

/// One random change to the tree below `root`.
fn change(root: &Path, d: &mut Draw) {
    let dir = root.join(d.pick(DIRS));
    let _ = fs::create_dir_all(&dir);
    let at = dir.join(d.pick(NAMES));
    match d.next(6) {
        0 | 1 => {
            let _ = fs::remove_dir_all(&at);
            let _ = fs::write(&at, format!("{}\n", d.next(1000)));
        }
        2 => {
            let _ = fs::remove_file(&at);
            let _ = fs::create_dir_all(at.join("inner"));
            let _ = fs::write(at.join("inner/f.c"), "x\n");
        }
        3 => {
            let _ = fs::remove_file(&at);
            let _ = fs::remove_dir_all(&at);
        }
        _ => {
            let name = if d.next(3) == 0 {
                ".ignore"
            } else {
                ".gitignore"
            };
            let rules: Vec<&str> = (0..d.next(4)).map(|_| d.pick(RULES)).collect();
            let _ = fs::write(dir.join(name), rules.join("\n"));
        }
    }
}

fn opts(include_hidden: bool, respect_ignore: bool) -> WalkOptions {
    WalkOptions {
        include_hidden,
        respect_ignore,
        max_depth: usize::MAX,
        shard: None,
        with_stat: false,
    }
}

fn same(a: &(Snapshot, ScanStats), b: &(Snapshot, ScanStats)) -> bool {
    a.0.files == b.0.files && a.1.skips.iter().eq(b.1.skips.iter())
}

/// What a walk visits (path, type and classification) and passes over, with the memo
/// `earlier` when given; and the memo it leaves.
fn walked(
    s: &Session,
    o: &WalkOptions,
    earlier: Option<&[u8]>,
) -> (Vec<String>, Vec<(&'static str, u32)>, Vec<u8>) {
    let binding = walk_memo::binding(&s.policy, o.include_hidden, o.respect_ignore);
    let mut memo = WalkMemo::new(&binding, earlier);
    let (mut seen, mut skips) = (Vec::new(), Skips::default());
    s.policy.forget_lookups();
    let root = LogicalPath::root();
    walk_with(
        &s.fs,
        &s.policy,
        &root,
        o,
        &mut skips,
        Some(&mut memo),
        |e| {
            seen.push(format!("{} {:?} {:?}", e.path, e.ty, e.kind));
            Flow::Continue
        },
    )
    .unwrap();
    (seen, skips.iter().collect(), memo.into_bytes())
}

#[test]
fn a_scan_that_reuses_verdicts_finds_what_a_fresh_one_does() {
    for (seed, policy) in [
        (1, "{}"),
        (7, r#"{"read": {"block": ["lib/**"]}}"#),
        (42, r#"{"read": {"allow": ["src/**", "lib/**"]}}"#),
    ] {
        for (hidden, ignore) in [(false, true), (true, true), (false, false)] {
            let t = tempfile::tempdir().unwrap();
            let root = t.path();
            let mut d = Draw(seed * 7919 + u64::from(hidden) * 31 + u64::from(ignore));
            for _ in 0..30 {
                change(root, &mut d);
            }
            let s = Session::new(Fs::open(root).unwrap(), Policy::from_json(policy).unwrap());
            let o = opts(hidden, ignore);
            let start = LogicalPath::root();
            let mut prev = scan::<String>(&s, &start, &o, None, None).unwrap();
            let mut walk_memo = walked(&s, &o, None).2;
            let mut reused = 0;
            for round in 0..40 {
                let changes = d.next(3);
                for _ in 0..changes {
                    change(root, &mut d);
                }
                s.policy.forget_lookups();
                let fresh = scan(&s, &start, &o, Some(&prev.0), None).unwrap();
                s.policy.forget_lookups();
                let memo = prev.1.memo.clone();
                let kept = scan(&s, &start, &o, Some(&prev.0), Some(&memo)).unwrap();
                assert!(
                    same(&fresh, &kept),
                    "{policy} hidden={hidden} ignore={ignore} round {round}:\n{:?}\n{:?}\nvs\n{:?}\n{:?}",
                    fresh.0.files.iter().map(|f| &f.0).collect::<Vec<_>>(),
                    fresh.1.skips.describe(),
                    kept.0.files.iter().map(|f| &f.0).collect::<Vec<_>>(),
                    kept.1.skips.describe(),
                );
                // What the scan found as it went is the reference comparison's answer.
                assert_eq!(kept.1.same_as_old, prev.0.same_visible(&kept.0));
                assert_eq!(fresh.1.same_as_old, prev.0.same_visible(&fresh.0));
                if changes == 0 {
                    // Nothing changed: every verdict but those that look beside them.
                    assert!(kept.1.reused > 0, "round {round}: nothing reused");
                }
                reused += kept.1.reused;
                prev = kept;
                // The walk itself: every entry visited with the same classification.
                let (fresh, fresh_skips, _) = walked(&s, &o, None);
                let (again, again_skips, memo) = walked(&s, &o, Some(&walk_memo));
                assert_eq!(fresh, again, "{policy} round {round}");
                assert_eq!(fresh_skips, again_skips, "{policy} round {round}");
                walk_memo = memo;
            }
            assert!(reused > 100, "{reused} verdicts reused");
        }
    }
}

/// The cases the random changes may miss, each beside its control: the memo of a tree
/// where `.env` was ignored, `target/` was source and `conf` a file, reused after the
/// ignore rule went, `Cargo.toml` came beside `target/` and `conf` became a directory.
#[test]
fn a_verdict_is_judged_again_when_its_rules_or_its_type_moved() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path();
    fs::create_dir_all(root.join("src/target")).unwrap();
    fs::write(root.join("src/target/t.c"), "t\n").unwrap();
    fs::write(root.join("src/a.rs"), "a\n").unwrap();
    fs::write(root.join("src/conf"), "c\n").unwrap();
    fs::write(root.join("src/b.log"), "b\n").unwrap();
    fs::write(root.join(".gitignore"), "*.log\n").unwrap();
    let s = Session::new(Fs::open(root).unwrap(), Policy::from_json("{}").unwrap());
    let o = opts(false, true);
    let start = LogicalPath::root();
    let first = scan::<String>(&s, &start, &o, None, None).unwrap();
    let paths =
        |r: &(Snapshot, ScanStats)| r.0.files.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>();
    assert_eq!(paths(&first), ["src/a.rs", "src/conf", "src/target/t.c"]);
    // Unchanged: every verdict of `src` reused (the control).
    let again = scan(&s, &start, &o, Some(&first.0), Some(&first.1.memo)).unwrap();
    assert_eq!(paths(&again), paths(&first));
    assert!(again.1.reused >= 3, "{}", again.1.reused);
    fs::write(root.join(".gitignore"), "").unwrap();
    fs::write(root.join("src/Cargo.toml"), "[package]\n").unwrap();
    fs::remove_file(root.join("src/conf")).unwrap();
    fs::create_dir(root.join("src/conf")).unwrap();
    fs::write(root.join("src/conf/c.toml"), "c\n").unwrap();
    s.policy.forget_lookups();
    let after = scan(&s, &start, &o, Some(&first.0), Some(&first.1.memo)).unwrap();
    assert_eq!(
        paths(&after),
        ["src/Cargo.toml", "src/a.rs", "src/b.log", "src/conf/c.toml"]
    );
    // `src/target` beside `Cargo.toml` is build output now; `.gitignore` is hidden.
    assert_eq!(after.1.skips.describe(), "1 generated, 1 hidden");
}

/// A walk whose memo answers for every entry compiles no ignore file but a large one
/// (each session here starts with an empty cache of compiled rules); an entry the memo
/// does not know has the rules it is judged by compiled, and no others.
#[test]
fn ignore_rules_are_compiled_only_for_entries_the_memo_cannot_answer() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path();
    fs::create_dir_all(root.join("src")).unwrap();
    fs::create_dir_all(root.join("lib")).unwrap();
    fs::write(root.join(".gitignore"), "*.log\n").unwrap();
    fs::write(root.join("top.log"), "t\n").unwrap();
    fs::write(root.join("src/.gitignore"), "*.tmp\n").unwrap();
    fs::write(root.join("src/a.rs"), "a\n").unwrap();
    fs::write(root.join("src/b.tmp"), "b\n").unwrap();
    fs::write(root.join("lib/.gitignore"), "*.o\n").unwrap();
    fs::write(root.join("lib/x.c"), "x\n").unwrap();
    // Rules too large to hold until needed: compiled when their directory is entered.
    fs::create_dir_all(root.join("big")).unwrap();
    let many: String = (0..2000).map(|i| format!("generated_{i:05}.c\n")).collect();
    assert!(many.len() > 16 << 10);
    fs::write(root.join("big/.gitignore"), many).unwrap();
    fs::write(root.join("big/generated_00001.c"), "g\n").unwrap();
    fs::write(root.join("big/kept.c"), "k\n").unwrap();
    let o = opts(false, true);
    let session = || Session::new(Fs::open(root).unwrap(), Policy::from_json("{}").unwrap());
    let first = session();
    let (seen, skips, memo) = walked(&first, &o, None);
    assert_eq!(seen.len(), 6, "{seen:?}");
    // Without a memo every directory's rules are compiled (the control).
    assert_eq!(first.fs.ignore_cache().compiled(), 4);
    let again = session();
    let (seen_again, skips_again, _) = walked(&again, &o, Some(&memo));
    assert_eq!((&seen_again, &skips_again), (&seen, &skips));
    assert_eq!(
        again.fs.ignore_cache().compiled(),
        1,
        "the large rules only"
    );
    // A new name in `src` is judged: by `src`'s rules, which ignore it, and by no others.
    fs::write(root.join("src/c.tmp"), "c\n").unwrap();
    let third = session();
    let (seen_third, skips_third, _) = walked(&third, &o, Some(&memo));
    assert_eq!(seen_third, seen);
    assert_ne!(skips_third, skips, "the new file is counted as ignored");
    assert_eq!(third.fs.ignore_cache().compiled(), 2);
}
