//! Answers an agent can act on (issue 15, section 4): clipped search lines that keep the
//! match, no-match errors that show the difference, new files in the repository's line
//! endings, envelopes as models write them, and opt-in relaxed patch matching.

use serde_json::json;

use crate::support::*;

#[test]
fn search_shows_a_match_at_column_5001_of_a_long_line_and_marks_the_cuts() {
    let fx = Fixture::new();
    let line = format!("{}needle_here{}\n", "é".repeat(2500), "z".repeat(3000));
    fx.write("long.txt", line.as_bytes());
    let mut s = fx.session();
    let v = call(&mut s, "search_text", json!({ "query": "needle_here" })).unwrap();
    let m = &v["matches"][0];
    assert_eq!(m["column"], 5001);
    let text = m["text"].as_str().unwrap();
    assert!(text.contains("needle_here"), "{text}");
    let (before, after) = (
        m["cut_before"].as_u64().unwrap(),
        m["cut_after"].as_u64().unwrap(),
    );
    assert!(before > 4000 && after > 2000, "{m}");
    assert!(
        text.starts_with(&format!("[…{before} bytes cut]")),
        "{text}"
    );
    assert!(text.ends_with(&format!("[{after} bytes cut…]")), "{text}");
    let at = m["match_start"].as_u64().unwrap() as usize;
    assert_eq!(&text[at..at + 11], "needle_here");
}

#[test]
fn padded_envelope_markers_and_a_file_without_final_newline() {
    let fx = Fixture::new();
    fx.write("tail.txt", b"first\nlast");
    let mut s = fx.session();
    let p = " *** Begin Patch \n  *** Update File: tail.txt \n@@\n first\n-last\n+LAST\n*** End Patch \n";
    call(&mut s, "apply_patch", json!({ "patch": p })).unwrap();
    assert_eq!(
        std::fs::read(fx.repo.join("tail.txt")).unwrap(),
        b"first\nLAST"
    );
}

#[test]
fn add_file_onto_an_existing_file_is_refused_without_its_sha256_and_done_with_it() {
    let fx = Fixture::new();
    fx.write("notes.txt", b"old\n");
    let mut s = fx.session();
    let p = "*** Begin Patch\n*** Add File: notes.txt\n+new\n*** End Patch\n";
    let r = call(&mut s, "apply_patch", json!({ "patch": p }));
    assert_eq!(code(&r), "PATCH_CONFLICT");
    let r = call(
        &mut s,
        "apply_patch",
        json!({ "patch": p, "expected_sha256s": { "notes.txt": sha256(b"other\n") } }),
    );
    assert_eq!(code(&r), "WRITE_CONFLICT");
    assert_eq!(std::fs::read(fx.repo.join("notes.txt")).unwrap(), b"old\n");
    call(
        &mut s,
        "apply_patch",
        json!({ "patch": p, "expected_sha256s": { "notes.txt": sha256(b"old\n") } }),
    )
    .unwrap();
    assert_eq!(std::fs::read(fx.repo.join("notes.txt")).unwrap(), b"new\n");
}

#[test]
fn relaxed_patch_matching_is_reported_in_the_result_and_the_audit_event() {
    let fx = Fixture::new();
    fx.write(
        "q.txt",
        "say \u{201c}hi\u{201d}\u{a0}now\nkeep\n".as_bytes(),
    );
    let mut s = fx.session();
    let p = "--- a/q.txt\n+++ b/q.txt\n@@ -1,2 +1,2 @@\n-say \"hi\" now\n+say \"bye\" now\n keep\n";
    let r = call(&mut s, "apply_patch", json!({ "patch": p }));
    assert_eq!(code(&r), "PATCH_CONFLICT");
    let msg = r.unwrap_err().message;
    assert!(msg.contains("⟨NBSP⟩"), "{msg}");
    let v = call(
        &mut s,
        "apply_patch",
        json!({ "patch": p, "match": "punctuation" }),
    )
    .unwrap();
    assert_eq!(v["relaxed_hunks"][0]["level"], "punctuation");
    assert_eq!(
        std::fs::read_to_string(fx.repo.join("q.txt")).unwrap(),
        "say \"bye\" now\nkeep\n"
    );
    let last = fx.events().last().cloned().unwrap();
    assert!(
        last.notes.iter().any(|n| n.contains("punctuation")),
        "{:?}",
        last.notes
    );
}

#[test]
fn edit_no_match_shows_where_and_why_the_closest_lines_differ() {
    let fx = Fixture::new();
    fx.write("t.py", b"def f():\n\treturn 1  \n");
    let mut s = fx.session();
    let r = call(
        &mut s,
        "edit_file",
        json!({ "path": "t.py", "edits": [{ "old_text": "def f():\n    return 2", "new_text": "x" }] }),
    );
    assert_eq!(code(&r), "EDIT_NO_MATCH");
    let e = r.unwrap_err();
    assert!(e.message.contains("⟨TAB⟩return 1⟨SP⟩⟨SP⟩"), "{}", e.message);
    assert_eq!(e.detail("diverges_at_line"), Some("2"));
    assert_eq!(e.detail("diverges_at_column"), Some("1"));
}

#[test]
fn new_files_follow_gitattributes_and_editorconfig_existing_ones_keep_theirs() {
    let fx = Fixture::new();
    fx.write(".gitattributes", b"*.bat eol=crlf\n");
    fx.write(
        ".editorconfig",
        b"root = true\n[*.md]\ninsert_final_newline = true\n",
    );
    let mut s = fx.session();
    let v = call(
        &mut s,
        "write_file",
        json!({ "path": "run.bat", "content": "a\nb\n" }),
    )
    .unwrap();
    assert_eq!(
        std::fs::read(fx.repo.join("run.bat")).unwrap(),
        b"a\r\nb\r\n"
    );
    assert!(v["warnings"].to_string().contains("eol=crlf"), "{v}");
    assert!(fx
        .events()
        .last()
        .unwrap()
        .notes
        .iter()
        .any(|n| n.contains("CRLF")));
    call(
        &mut s,
        "append_file",
        json!({ "path": "n.md", "content": "# t" }),
    )
    .unwrap();
    assert_eq!(std::fs::read(fx.repo.join("n.md")).unwrap(), b"# t\n");
    // An existing LF .bat stays LF.
    fx.write("old.bat", b"x\n");
    call(
        &mut s,
        "append_file",
        json!({ "path": "old.bat", "content": "y\n" }),
    )
    .unwrap();
    assert_eq!(std::fs::read(fx.repo.join("old.bat")).unwrap(), b"x\ny\n");
}
