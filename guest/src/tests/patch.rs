//! `apply_patch` end to end on a native tree: envelopes as models write them, files
//! without a final newline, adds and moves onto existing files, relaxed matching.

use serde_json::{json, Value};

use crate::audit::CallLog;
use crate::error::{ErrorCode, ToolError};
use crate::rules::fsx::Fs;
use crate::rules::policy::Policy;
use crate::tools::session::Session;

struct Tree {
    dir: tempfile::TempDir,
    s: Session,
}

fn tree(files: &[(&str, &str)], policy: &str) -> Tree {
    let dir = tempfile::tempdir().unwrap();
    for (p, c) in files {
        let path = dir.path().join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, c).unwrap();
    }
    let s = Session::new(
        Fs::open(dir.path()).unwrap(),
        Policy::from_json(policy).unwrap(),
    );
    Tree { dir, s }
}

impl Tree {
    fn patch(&self, args: Value) -> (Result<Value, ToolError>, CallLog) {
        let mut log = CallLog::default();
        let r = crate::tools::call_value(&self.s, &mut log, "apply_patch", &args.to_string());
        (r, log)
    }

    fn read(&self, p: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(p)).unwrap_or_else(|_| "<missing>".into())
    }
}

fn sha(s: &str) -> String {
    crate::fs::hash::sha256_hex(s.as_bytes())
}

#[test]
fn a_padded_envelope_applies() {
    let t = tree(&[("a.txt", "one\ntwo\n")], "");
    let p = " *** Begin Patch \n  *** Update File: a.txt \n@@\n one\n-two\n+TWO\n*** End Patch \n";
    let (r, _) = t.patch(json!({ "patch": p }));
    r.unwrap();
    assert_eq!(t.read("a.txt"), "one\nTWO\n");
}

#[test]
fn the_last_line_of_a_file_without_final_newline_is_patched_and_stays_so() {
    let t = tree(&[("a.txt", "one\ntwo")], "");
    let p = "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+2\n*** End of File\n*** End Patch\n";
    let (r, _) = t.patch(json!({ "patch": p }));
    let v = r.unwrap();
    assert_eq!(t.read("a.txt"), "one\n2");
    assert!(
        v["warnings"].to_string().contains("no final newline"),
        "{v}"
    );
}

#[test]
fn add_or_move_onto_an_existing_file_needs_its_sha256() {
    let t = tree(
        &[("a.txt", "old a\n"), ("b.txt", "old b\n")],
        r#"{"allow_move":true}"#,
    );
    let add = "*** Begin Patch\n*** Add File: a.txt\n+new a\n*** End Patch\n";
    let (r, _) = t.patch(json!({ "patch": add }));
    let e = r.unwrap_err();
    assert_eq!(e.code, ErrorCode::PatchConflict);
    assert!(e.message.contains("expected_sha256s"), "{}", e.message);
    let (r, _) = t.patch(json!({ "patch": add, "expected_sha256s": { "a.txt": sha("stale\n") } }));
    assert_eq!(r.unwrap_err().code, ErrorCode::WriteConflict);
    assert_eq!(t.read("a.txt"), "old a\n");
    let (r, _) = t.patch(json!({ "patch": add, "expected_sha256s": { "a.txt": sha("old a\n") } }));
    r.unwrap();
    assert_eq!(t.read("a.txt"), "new a\n");

    let mv = "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n-new a\n+moved a\n*** End Patch\n";
    let (r, _) = t.patch(json!({ "patch": mv }));
    assert_eq!(r.unwrap_err().code, ErrorCode::PatchConflict);
    assert_eq!(
        (t.read("a.txt"), t.read("b.txt")),
        ("new a\n".into(), "old b\n".into())
    );
    let (r, _) = t.patch(json!({ "patch": mv, "expected_sha256s": { "b.txt": sha("old b\n") } }));
    r.unwrap();
    assert_eq!(
        (t.read("a.txt"), t.read("b.txt")),
        ("<missing>".into(), "moved a\n".into())
    );
}

#[test]
fn relaxed_matching_is_opt_in_reported_per_hunk_and_keeps_the_files_text() {
    let file = "fn f() {\n\tlet s = \u{201c}hi\u{201d};  \n\tg();\n}\n";
    let t = tree(&[("a.rs", file)], "");
    let p = "--- a/a.rs\n+++ b/a.rs\n@@ -1,4 +1,4 @@\n fn f() {\n     let s = \"hi\";\n-    g();\n+    h();\n }\n";
    let (r, _) = t.patch(json!({ "patch": p }));
    let e = r.unwrap_err();
    assert_eq!(e.code, ErrorCode::PatchConflict);
    assert!(e.message.contains("⟨TAB⟩"), "{}", e.message);
    assert!(e.message.contains("\"match\""), "{}", e.message);
    // Whitespace alone is not enough: the quotes differ too.
    let (r, _) = t.patch(json!({ "patch": p, "match": "whitespace" }));
    assert_eq!(r.unwrap_err().code, ErrorCode::PatchConflict);
    assert_eq!(t.read("a.rs"), file);
    let (r, log) = t.patch(json!({ "patch": p, "match": "punctuation" }));
    let v = r.unwrap();
    // Only the changed line is the patch's, in the file's indentation (a tab, not the
    // patch's four spaces); the context lines keep the file's bytes.
    assert_eq!(
        t.read("a.rs"),
        "fn f() {\n\tlet s = \u{201c}hi\u{201d};  \n\th();\n}\n"
    );
    assert_eq!(
        v["relaxed_hunks"],
        json!([{ "path": "a.rs", "hunk": 1, "line": 1, "level": "punctuation" }])
    );
    assert!(
        log.notes.iter().any(|n| n.contains("punctuation")),
        "{:?}",
        log.notes
    );
    // Exact patches report nothing relaxed.
    let p = "--- a/a.rs\n+++ b/a.rs\n@@ -4 +4 @@\n-}\n+} // end\n";
    let (r, log) = t.patch(json!({ "patch": p, "match": "punctuation" }));
    assert_eq!(r.unwrap()["relaxed_hunks"], json!([]));
    assert!(log.notes.is_empty());
}

#[test]
fn an_unknown_match_level_is_invalid_input() {
    let t = tree(&[("a.txt", "x\n")], "");
    let (r, _) = t.patch(
        json!({ "patch": "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-x\n+y\n", "match": "fuzzy" }),
    );
    assert_eq!(r.unwrap_err().code, ErrorCode::InvalidInput);
    assert_eq!(t.read("a.txt"), "x\n");
}
