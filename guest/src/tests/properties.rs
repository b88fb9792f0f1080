//! Property tests of the guest's logic, run natively on temporary directories:
//! - any path string is either rejected or names something under the root;
//! - a refused mutation never changes the tree, and a dry run never changes any file;
//! - the patch parser never panics, whatever it is given.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use proptest::prelude::*;

use crate::audit::CallLog;
use crate::error::ErrorCode;
use crate::rules::fsx::Fs;
use crate::rules::path::LogicalPath;
use crate::rules::policy::Policy;
use crate::tools::call_value;
use crate::tools::session::Session;

/// Pieces that paths are built from: the tricky ones often.
fn path_piece() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("..".to_string()),
        Just(".".to_string()),
        Just("/".to_string()),
        Just("\\".to_string()),
        Just("~".to_string()),
        Just("C:".to_string()),
        Just("\0".to_string()),
        Just(".git".to_string()),
        Just(".env".to_string()),
        Just("src".to_string()),
        Just("link".to_string()),
        Just("a".to_string()),
        Just("é".to_string()),
        Just("\n".to_string()),
        "[a-z]{1,3}",
    ]
}

fn path_string() -> impl Strategy<Value = String> {
    prop::collection::vec(path_piece(), 0..8).prop_map(|v| v.concat())
}

fn snapshot(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            let key = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            let ft = e.file_type().unwrap();
            if ft.is_symlink() {
                out.insert(
                    key,
                    fs::read_link(&p)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned()
                        .into_bytes(),
                );
            } else if ft.is_dir() {
                out.insert(key, b"<dir>".to_vec());
                stack.push(p);
            } else {
                out.insert(key, fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// A repository below `tmp/repo` with a sentinel beside it and a few links.
fn repo(tmp: &Path) -> Session {
    let root = tmp.join("repo");
    for (p, c) in [
        ("src/a.rs", "fn a() {}\nfn b() {}\n"),
        ("README.md", "readme\n"),
        (".env", "K=V\n"),
        ("Cargo.lock", "lock\n"),
    ] {
        let f = root.join(p);
        fs::create_dir_all(f.parent().unwrap()).unwrap();
        fs::write(f, c).unwrap();
    }
    fs::create_dir_all(tmp.join("outside")).unwrap();
    fs::write(tmp.join("outside/x"), "sentinel").unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("../outside", root.join("link")).unwrap();
        std::os::unix::fs::symlink("src", root.join("srclink")).unwrap();
    }
    let state = tmp.join("state");
    fs::create_dir_all(&state).unwrap();
    Session::new(Fs::open(&root).unwrap(), Policy::from_json("").unwrap()).with_state_dir(state)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_path_is_rejected_or_stays_under_the_root(input in path_string()) {
        match LogicalPath::parse(&input) {
            Err(e) => prop_assert_eq!(e.code, ErrorCode::PathRejected),
            Ok(p) => {
                prop_assert!(!p.is_root());
                for part in p.parts() {
                    prop_assert!(!part.is_empty() && part != "." && part != "..");
                    prop_assert!(!part.contains('/') && !part.contains('\\') && !part.contains('\0'));
                }
                let real = Path::new("/repo").join(p.as_str());
                prop_assert!(real.starts_with("/repo") && real != Path::new("/repo"));
            }
        }
    }

    #[test]
    fn resolution_never_leaves_the_root(input in path_string()) {
        let tmp = tempfile::tempdir().unwrap();
        let s = repo(tmp.path());
        if let Ok(p) = LogicalPath::parse(&input) {
            if let Ok(r) = s.fs.resolve(&p) {
                // The target is reached from the root without any link, and is what was seen.
                let direct = s.fs.stat_nofollow(&r.target).map(|m| m.ty);
                prop_assert_eq!(direct, r.meta.map(|m| m.ty));
                prop_assert!(!r.target.parts().any(|c| c == ".."));
            }
        }
    }

    #[test]
    fn refused_mutations_and_dry_runs_change_nothing(
        path in path_string(),
        old in prop_oneof![Just("fn a() {}".to_string()), Just("fn".to_string()), "[a-z ]{0,6}"],
        new in "[a-z\n]{0,6}",
        tool in 0usize..5,
        dry in any::<bool>(),
    ) {
        let tmp = tempfile::tempdir().unwrap();
        let s = repo(tmp.path());
        let before = snapshot(tmp.path());
        let args = match tool {
            0 => serde_json::json!({ "path": path, "content": new, "dry_run": dry }),
            1 => serde_json::json!({ "path": path, "edits": [{ "old_text": old, "new_text": new }], "dry_run": dry }),
            2 => serde_json::json!({ "patch": format!("--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-{old}\n+{new}\n"), "dry_run": dry }),
            3 => serde_json::json!({ "path": path, "dry_run": dry }),
            _ => serde_json::json!({ "path": path, "content": new, "dry_run": dry }),
        };
        let name = ["write_file", "edit_file", "apply_patch", "delete_file", "append_file"][tool];
        let r = call_value(&s, &mut CallLog::default(), name, &args.to_string());
        let after = snapshot(tmp.path());
        if r.is_err() || dry {
            prop_assert_eq!(&after, &before, "{} {} changed the tree ({:?})", name, args, r.err());
        }
        // Whatever happened, nothing outside the repository changed.
        prop_assert_eq!(after.get("outside/x"), before.get("outside/x"));
    }

    #[test]
    fn the_patch_parser_never_panics(lines in prop::collection::vec(prop_oneof![
        Just("--- a/x\n".to_string()), Just("+++ b/x\n".to_string()), Just("@@ -1,2 +1,2 @@\n".to_string()),
        Just("@@\n".to_string()), Just("diff --git a/x b/x\n".to_string()), Just("\\ No newline at end of file\n".to_string()),
        Just("*** Begin Patch\n".to_string()), Just("*** End Patch\n".to_string()), Just("*** Update File: x\n".to_string()),
        Just("*** Add File: \"q\\\n".to_string()), Just("rename from a\n".to_string()), Just("new file mode 120000\n".to_string()),
        Just("\n".to_string()), "[ +\\-@\\\\][a-z\"\\\\ ]{0,8}\n", "[^\n]{0,12}",
    ], 0..24)) {
        let text = lines.concat();
        let _ = crate::tools::patch::parse(&text);
        for end in (0..text.len()).filter(|&i| text.is_char_boundary(i)) {
            let _ = crate::tools::patch::parse(&text[..end]);
        }
    }
}

/// Lines of ignore files, built from the syntax's special forms.
fn ignore_line() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("*".to_string()),
        Just("**".to_string()),
        Just("?".to_string()),
        Just("[ab]".to_string()),
        Just("a".to_string()),
        Just("b.c".to_string()),
        Just("d".to_string()),
        Just(".x".to_string()),
        // Globs within a name, such as the rules matched against names alone use.
        Just("a*".to_string()),
        Just("*.c".to_string()),
        Just(".*".to_string()),
        Just("?.c".to_string()),
        Just("[!a]*".to_string()),
    ];
    (
        prop_oneof![
            Just(""),
            Just("!"),
            Just("/"),
            Just("!/"),
            Just("#"),
            Just("\\!")
        ],
        proptest::collection::vec(piece, 1..4),
        prop_oneof![Just(""), Just("/"), Just("   "), Just("/**")],
    )
        .prop_map(|(pre, parts, post)| format!("{pre}{}{post}", parts.join("/")))
}

fn rel_path() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just("a"),
            Just("b.c"),
            Just("d"),
            Just(".x"),
            Just("ab"),
            Just("e.c"),
            Just(".c"),
            Just("x.c")
        ],
        1..5,
    )
    .prop_map(|v| v.join("/"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    /// Our matcher answers like the `ignore` crate (what ripgrep uses) for any rule set.
    #[test]
    fn ignore_rules_agree_with_the_reference(
        lines in proptest::collection::vec(ignore_line(), 1..6),
        path in rel_path(),
        is_dir in any::<bool>(),
    ) {
        use crate::rules::ignore_rules::{IgnoreRules, Verdict};
        let text = lines.join("\n");
        let mut b = ignore::gitignore::GitignoreBuilder::new("/r");
        for l in &lines {
            let _ = b.add_line(None, l);
        }
        let reference = b.build().unwrap();
        let want = reference.matched(Path::new(&path), is_dir);
        let got = IgnoreRules::parse(&[text.as_bytes()])
            .map_or(Verdict::None, |r| r.matched(&path, is_dir));
        let want = if want.is_ignore() {
            Verdict::Ignore
        } else if want.is_whitelist() {
            Verdict::Keep
        } else {
            Verdict::None
        };
        prop_assert_eq!(got, want, "rules {:?} path {} dir {}", lines, path, is_dir);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    /// Literal searches (exact, and ASCII case-folded) find exactly the lines, columns and
    /// counts the regex finds, in texts long enough to cross the literal scan's blocks.
    #[test]
    fn literal_search_agrees_with_the_regex(
        query in "[aAkKsS_\\-\\.]{1,4}",
        ci in any::<bool>(),
        ascii in any::<bool>(),
        text in proptest::collection::vec(
            prop_oneof![
                Just("a"), Just("A"), Just("k"), Just("K"), Just("s"), Just("S"), Just("_"),
                Just("-"), Just("."), Just("\n"), Just("\r\n"), Just("\u{212A}"), Just("\u{17F}"), Just(" ")
            ],
            0..300,
        ),
    ) {
        use crate::api::SearchTextArgs;
        use crate::tools::search::compile;
        // Half the texts keep only their ASCII pieces, so the folding literal runs on long
        // texts too (a non-ASCII text goes to the regex).
        let buf: String = text.iter().filter(|t| !ascii || t.is_ascii()).copied().collect();
        let a = SearchTextArgs {
            query: query.clone(),
            case_insensitive: Some(ci),
            ..Default::default()
        };
        let pol = Policy::from_json("").unwrap();
        let fast = compile(&a, &pol).unwrap();
        // The same query as a regex never takes the literal path.
        let slow = compile(
            &SearchTextArgs {
                query: regex::escape(&query),
                regex: Some(true),
                ..a.clone()
            },
            &pol,
        )
        .unwrap();
        same_search_results(&fast, &slow, buf.as_bytes())?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    /// Passing over files that lack one of a regex's required literals never changes what
    /// a search finds.
    #[test]
    fn required_literals_never_change_regex_results(
        pieces in proptest::collection::vec(
            prop_oneof![
                Just("ab"), Just("ba"), Just("a"), Just("b"), Just("[ab]"), Just("\\s"), Just("."),
                Just("(ab|b)"), Just("(a)+"), Just("a*"), Just("b?"), Just("(ba){1,2}"), Just("x"),
                Just("^"), Just("$"), Just("\\n"), Just("(?:xa)+")
            ],
            1..6,
        ),
        text in proptest::collection::vec(
            prop_oneof![Just("a"), Just("b"), Just(" "), Just("\n"), Just("ab"), Just("x"), Just("\r\n")],
            // Short texts, so that many lack one piece or another.
            0..16,
        ),
    ) {
        use crate::api::SearchTextArgs;
        use crate::tools::search::compile;
        let buf = text.concat();
        let a = SearchTextArgs {
            query: pieces.concat(),
            regex: Some(true),
            ..Default::default()
        };
        let pol = Policy::from_json("").unwrap();
        let fast = compile(&a, &pol).unwrap();
        let slow = compile(&a, &pol).unwrap().without_required();
        same_search_results(&fast, &slow, buf.as_bytes())?;
    }
}

/// Both matchers find the same count and the same lines (number, column, text and one
/// line of context either side) in `buf`.
fn same_search_results(
    fast: &crate::tools::search::Matcher,
    slow: &crate::tools::search::Matcher,
    buf: &[u8],
) -> Result<(), TestCaseError> {
    use crate::tools::search::{search_buffer, FileMatches};
    let f = search_buffer(fast, "f", buf, 1, 100);
    let r = search_buffer(slow, "f", buf, 1, 100);
    prop_assert_eq!(f.count, r.count);
    let key = |m: &FileMatches| {
        m.lines
            .iter()
            .map(|l| {
                (
                    l.line,
                    l.column,
                    l.text.clone(),
                    l.before.clone(),
                    l.after.clone(),
                )
            })
            .collect::<Vec<_>>()
    };
    prop_assert_eq!(key(&f), key(&r));
    Ok(())
}

/// Texts made of a few distinct lines, so that they share runs at the start, the end and
/// in between, with and without a final line break.
fn lines_text() -> impl Strategy<Value = String> {
    (
        proptest::collection::vec(
            prop_oneof![Just("a"), Just("b"), Just("c"), Just(""), Just("a b")],
            0..24,
        ),
        any::<bool>(),
    )
        .prop_map(|(lines, final_break)| {
            let mut t = lines.join("\n");
            if final_break && !t.is_empty() {
                t.push('\n');
            }
            t
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The diff a mutation reports, applied to the old text by `apply_patch`, gives the new
    /// text, and its line counts are those of the diff's own `+` and `-` lines.
    #[test]
    fn reported_diffs_apply_back_to_the_new_text(old in lines_text(), new in lines_text()) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("r");
        fs::create_dir_all(&root).unwrap();
        fs::write(root.join("f.txt"), &old).unwrap();
        let s = Session::new(Fs::open(&root).unwrap(), Policy::from_json("").unwrap());
        let planned = call_value(
            &s,
            &mut CallLog::default(),
            "write_file",
            &serde_json::json!({
                "path": "f.txt", "content": new, "dry_run": true,
                "expected_sha256": crate::fs::hash::sha256_hex(old.as_bytes()),
            })
            .to_string(),
        )
        .unwrap();
        let diff = planned["diff"].as_str().unwrap().to_string();
        let plus = diff.lines().filter(|l| l.starts_with('+') && !l.starts_with("+++")).count();
        let minus = diff.lines().filter(|l| l.starts_with('-') && !l.starts_with("---")).count();
        prop_assert_eq!(planned["insertions"].as_u64(), Some(plus as u64));
        prop_assert_eq!(planned["deletions"].as_u64(), Some(minus as u64));
        if old != new {
            call_value(
                &s,
                &mut CallLog::default(),
                "apply_patch",
                &serde_json::json!({ "patch": diff }).to_string(),
            )
            .map_err(|e| TestCaseError::fail(format!("{e}\n{diff}")))?;
        } else {
            prop_assert!(diff.is_empty());
        }
        prop_assert_eq!(fs::read_to_string(root.join("f.txt")).unwrap(), new);
    }
}
