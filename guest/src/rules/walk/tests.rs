use super::*;
use std::fs;

fn setup() -> (tempfile::TempDir, Fs) {
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path();
    for (p, c) in [
        ("src/main.rs", "fn main() {}"),
        ("src/gen/out.rs", "x"),
        ("README.md", "hi"),
        (".gitignore", "*.log\nsrc/gen/\n"),
        ("debug.log", "log"),
        (".hidden/x", "x"),
        ("target/debug/app", "bin"),
        ("sub/.gitignore", "!keep.log\n"),
        ("sub/keep.log", "k"),
        ("sub/drop.tmp", "d"),
    ] {
        let full = r.join(p);
        fs::create_dir_all(full.parent().unwrap()).unwrap();
        fs::write(full, c).unwrap();
    }
    fs::create_dir_all(r.join(".git")).unwrap();
    let fsx = Fs::open(r).unwrap();
    (tmp, fsx)
}

fn names(fsx: &Fs, start: &str, opts: WalkOptions) -> (Vec<String>, Skips) {
    let pol = Policy::from_json("").unwrap();
    let mut skips = Skips::default();
    let mut out = Vec::new();
    walk(
        fsx,
        &pol,
        &LogicalPath::parse_dir(start).unwrap(),
        &opts,
        &mut skips,
        |e| {
            out.push(e.path.to_string());
            Flow::Continue
        },
    )
    .unwrap();
    (out, skips)
}

fn opts() -> WalkOptions {
    WalkOptions {
        with_stat: false,
        include_hidden: false,
        respect_ignore: true,
        max_depth: usize::MAX,
        shard: None,
    }
}

#[test]
fn honours_ignore_files_hidden_and_generated() {
    let (_t, fsx) = setup();
    let (got, skips) = names(&fsx, "", opts());
    assert_eq!(
        got,
        [
            "README.md",
            "src",
            "src/main.rs",
            "sub",
            "sub/drop.tmp",
            "sub/keep.log"
        ]
    );
    assert_eq!(skips.get("ignored"), 2);
    assert_eq!(skips.get("generated"), 1);
    assert_eq!(skips.get("git_internal"), 1);
    assert!(skips.get("hidden") >= 2);
}

#[test]
fn ancestors_ignore_rules_apply_to_a_subdirectory_walk() {
    let (_t, fsx) = setup();
    let (got, _) = names(&fsx, "src", opts());
    assert_eq!(got, ["src/main.rs"]);
}

#[test]
fn without_ignore_rules_everything_but_git_shows() {
    let (_t, fsx) = setup();
    let o = WalkOptions {
        include_hidden: true,
        respect_ignore: false,
        ..opts()
    };
    let (got, skips) = names(&fsx, "", o);
    assert!(got.contains(&"debug.log".to_string()));
    assert!(got.contains(&"target/debug/app".to_string()));
    assert!(got.contains(&".hidden/x".to_string()));
    assert!(!got.iter().any(|p| p.starts_with(".git/") || p == ".git"));
    assert_eq!(skips.get("git_internal"), 1);
}

#[test]
fn depth_limit_lists_only_own_entries() {
    let (_t, fsx) = setup();
    let o = WalkOptions {
        max_depth: 1,
        ..opts()
    };
    let (got, _) = names(&fsx, "", o);
    assert_eq!(got, ["README.md", "src", "sub"]);
}

#[cfg(unix)]
#[test]
fn symlinked_directories_are_not_followed() {
    let (t, fsx) = setup();
    std::os::unix::fs::symlink("src", t.path().join("srclink")).unwrap();
    let (got, _) = names(&fsx, "", opts());
    assert!(got.contains(&"srclink".to_string()));
    assert!(!got.iter().any(|p| p.starts_with("srclink/")));
}

/// The walk classifies and checks each entry from its directory's scope; the answers
/// must be those of classifying and checking the entry's whole path.
#[test]
fn scoped_classification_matches_whole_path_classification() {
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path();
    for p in [
        "app/Cargo.toml",
        "app/target/debug/x.rs",
        "app/src/target/y.rs",
        "web/node_modules/m/index.js",
        "lib/vendor/dep/a.go",
        "lib/vendor/dep/.env",
        "docs/build/out.html",
        "docs/notes/keep.md",
        "cfg/private/key.txt",
        "cfg/public/readme.txt",
        "gen/proto/a.pb.go",
        "x/y/z/Cargo.lock",
    ] {
        let full = r.join(p);
        fs::create_dir_all(full.parent().unwrap()).unwrap();
        fs::write(full, "x").unwrap();
    }
    let pol = Policy::from_json(
        r#"{"overrides":[{"pattern":"docs/build","kind":"source"},{"pattern":"*.md","kind":"secret"},{"pattern":"gen/**","kind":"generated"}],
            "read":{"block":["cfg/private"]}}"#,
    )
    .unwrap()
    ;
    let fsx = Fs::open(r).unwrap();
    let pol = pol.with_fs(&fsx);
    let o = WalkOptions {
        include_hidden: true,
        respect_ignore: false,
        ..opts()
    };
    let mut skips = Skips::default();
    let mut seen = Vec::new();
    walk(&fsx, &pol, &LogicalPath::root(), &o, &mut skips, |e| {
        let is_dir = e.ty == EntryType::Dir;
        assert_eq!(e.kind, pol.kind_of(&e.path, is_dir), "{}", e.path);
        assert!(!pol.hides(&e.path, e.kind), "{}", e.path);
        seen.push((e.path.to_string(), e.kind));
        Flow::Continue
    })
    .unwrap();
    let kind = |p: &str| seen.iter().find(|(q, _)| q == p).map(|(_, k)| *k);
    assert_eq!(kind("app/target/debug/x.rs"), Some(Kind::Generated));
    assert_eq!(kind("app/src/target/y.rs"), Some(Kind::Source));
    assert_eq!(kind("lib/vendor/dep/.env"), Some(Kind::Secret));
    assert_eq!(kind("lib/vendor/dep/a.go"), Some(Kind::Vendored));
    assert_eq!(kind("docs/build/out.html"), Some(Kind::Source));
    assert_eq!(kind("docs/notes/keep.md"), Some(Kind::Secret));
    assert_eq!(kind("gen/proto/a.pb.go"), Some(Kind::Generated));
    assert_eq!(kind("x/y/z/Cargo.lock"), Some(Kind::Lockfile));
    assert_eq!(kind("cfg/private"), None);
    assert_eq!(kind("cfg/public/readme.txt"), Some(Kind::Doc));
    assert_eq!(skips.get("policy"), 0, "hidden paths are not even counted");
}

/// Sharded walks visit disjoint sets of entries whose union is the whole walk, and
/// their skip counts add up to the whole walk's.
#[test]
fn shards_partition_entries_and_skip_counts() {
    let (_t, fsx) = setup();
    let pol = Policy::from_json("").unwrap();
    let run = |shard| {
        let mut skips = Skips::default();
        let mut out = Vec::new();
        let o = WalkOptions { shard, ..opts() };
        walk(&fsx, &pol, &LogicalPath::root(), &o, &mut skips, |e| {
            out.push(e.path.to_string());
            Flow::Continue
        })
        .unwrap();
        (out, skips)
    };
    let (all, all_skips) = run(None);
    for n in [2u32, 3, 5] {
        let mut union = Vec::new();
        let mut skips = Skips::default();
        for i in 0..n {
            let (got, sk) = run(Some((i, n)));
            assert!(got.iter().all(|p| shard_of(p, n) == i), "{got:?}");
            union.extend(got);
            skips.merge(&sk);
        }
        union.sort();
        let mut want = all.clone();
        want.sort();
        assert_eq!(union, want, "{n} shards");
        assert_eq!(
            skips.iter().collect::<Vec<_>>(),
            all_skips.iter().collect::<Vec<_>>(),
            "{n} shards"
        );
    }
}

#[test]
fn a_git_shape_is_seen_under_long_spellings_where_names_fold() {
    use crate::fs::port::EntryType;
    use crate::rules::fold::CaseMode;
    let listing = |head: &str| -> Vec<DirItem> {
        vec![
            (Ok(head.to_owned()), EntryType::File),
            (Ok("objects".to_owned()), EntryType::Dir),
            (Ok("refs".to_owned()), EntryType::Dir),
        ]
    };
    // `HEAD` padded far past any short-name limit with code points folding drops.
    let padded = format!("HE{}AD", "\u{200C}".repeat(40));
    let dotted = format!("HEAD{}", ".".repeat(100));
    for head in ["HEAD", "head", padded.as_str(), dotted.as_str()] {
        assert!(
            git_shaped_listing(&listing(head), CaseMode::Unknown),
            "{head}"
        );
    }
    // Positive controls: git itself opens only `HEAD` where names do not fold, and a
    // long plain name is never one of the four.
    assert!(git_shaped_listing(&listing("HEAD"), CaseMode::Sensitive));
    assert!(!git_shaped_listing(&listing(&padded), CaseMode::Sensitive));
    assert!(!git_shaped_listing(
        &listing("HEADQUARTERS"),
        CaseMode::Unknown
    ));
}
