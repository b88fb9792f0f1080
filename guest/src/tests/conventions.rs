//! New files through the tools on a native tree with `.gitattributes` and `.editorconfig`.

use serde_json::json;

use crate::audit::CallLog;
use crate::rules::fsx::Fs;
use crate::rules::policy::Policy;
use crate::tools::session::Session;

fn tree(files: &[(&str, &[u8])], policy: &str) -> (tempfile::TempDir, Session) {
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
    (dir, s)
}

fn call(s: &Session, tool: &str, args: serde_json::Value) -> (serde_json::Value, CallLog) {
    let mut log = CallLog::default();
    let v = crate::tools::call_value(s, &mut log, tool, &args.to_string()).unwrap();
    (v, log)
}

const ATTRS: &[u8] = b"* text=auto\n*.bat eol=crlf\n*.bin -text\n";
const EDITOR: &[u8] = b"root = true\n[*]\ninsert_final_newline = true\n[*.ps1]\nend_of_line = crlf\ncharset = utf-8-bom\n";

#[test]
fn write_file_creates_files_in_the_declared_style() {
    // Regression: new files were written as given, whatever the repository declares.
    let (dir, s) = tree(&[(".gitattributes", ATTRS), (".editorconfig", EDITOR)], "");
    let (v, log) = call(
        &s,
        "write_file",
        json!({ "path": "tools/run.bat", "content": "@echo off\nexit" }),
    );
    assert_eq!(
        std::fs::read(dir.path().join("tools/run.bat")).unwrap(),
        b"@echo off\r\nexit\r\n"
    );
    assert!(v["warnings"].to_string().contains("eol=crlf"), "{v}");
    assert!(
        log.notes.iter().any(|n| n.contains("CRLF")),
        "{:?}",
        log.notes
    );
    call(
        &s,
        "write_file",
        json!({ "path": "a.ps1", "content": "x\n" }),
    );
    assert_eq!(
        std::fs::read(dir.path().join("a.ps1")).unwrap(),
        "\u{feff}x\r\n".as_bytes()
    );
    // -text: exactly as given, final newline rule or not.
    call(
        &s,
        "write_file",
        json!({ "path": "blob.bin", "content": "a\nb" }),
    );
    assert_eq!(std::fs::read(dir.path().join("blob.bin")).unwrap(), b"a\nb");
}

#[test]
fn existing_files_keep_their_own_style() {
    let (dir, s) = tree(
        &[(".gitattributes", ATTRS), ("old.bat", b"a\nb\n")],
        r#"{"allow_overwrite_without_sha256":true}"#,
    );
    call(
        &s,
        "write_file",
        json!({ "path": "old.bat", "content": "c\nd\n" }),
    );
    assert_eq!(
        std::fs::read(dir.path().join("old.bat")).unwrap(),
        b"c\nd\n"
    );
    call(
        &s,
        "append_file",
        json!({ "path": "old.bat", "content": "e\n" }),
    );
    assert_eq!(
        std::fs::read(dir.path().join("old.bat")).unwrap(),
        b"c\nd\ne\n"
    );
}

#[test]
fn append_file_and_patch_adds_follow_the_style() {
    let (dir, s) = tree(
        &[
            (".gitattributes", ATTRS),
            ("sub/.editorconfig", b"[*.txt]\nend_of_line = crlf\n"),
        ],
        "",
    );
    call(
        &s,
        "append_file",
        json!({ "path": "new.bat", "content": "a\nb\n" }),
    );
    assert_eq!(
        std::fs::read(dir.path().join("new.bat")).unwrap(),
        b"a\r\nb\r\n"
    );
    let p = "*** Begin Patch\n*** Add File: sub/x.txt\n+one\n+two\n*** End Patch\n";
    call(&s, "apply_patch", json!({ "patch": p }));
    assert_eq!(
        std::fs::read(dir.path().join("sub/x.txt")).unwrap(),
        b"one\r\ntwo\r\n"
    );
    // Outside `sub/` the nested .editorconfig does not apply.
    let p = "*** Begin Patch\n*** Add File: y.txt\n+one\n*** End Patch\n";
    call(&s, "apply_patch", json!({ "patch": p }));
    assert_eq!(std::fs::read(dir.path().join("y.txt")).unwrap(), b"one\n");
}

#[test]
fn hostile_configuration_never_fails_a_write() {
    let huge = vec![b'*'; (crate::tools::conventions::MAX_CONFIG_BYTES + 10) as usize];
    let (dir, s) = tree(
        &[
            (".gitattributes", &huge),
            (".editorconfig", b"\xff\xfe[*]\nend_of_line=crlf\n"),
        ],
        "",
    );
    let (v, _) = call(
        &s,
        "write_file",
        json!({ "path": "a.txt", "content": "x\n" }),
    );
    assert_eq!(std::fs::read(dir.path().join("a.txt")).unwrap(), b"x\n");
    let w = v["warnings"].to_string();
    // The oversized file is passed over without telling its size; the other gets its note.
    assert!(
        w.contains("not UTF-8") && !w.contains("65536") && !w.contains("bytes"),
        "{w}"
    );
    // A directory in the config's place is passed over.
    let (dir, s) = tree(&[(".gitattributes/x", b"")], "");
    call(
        &s,
        "write_file",
        json!({ "path": "a.txt", "content": "x\n" }),
    );
    assert_eq!(std::fs::read(dir.path().join("a.txt")).unwrap(), b"x\n");
}

#[test]
fn configuration_the_policy_hides_is_not_used_or_mentioned() {
    let (dir, s) = tree(
        &[
            (".gitattributes", b"*.bat eol=crlf\n"),
            ("priv/.editorconfig", &[0xff; 10]),
        ],
        r#"{"read":{"block":[".gitattributes","priv/**"]},"write":{"block":[]}}"#,
    );
    let (v, log) = call(
        &s,
        "write_file",
        json!({ "path": "run.bat", "content": "a\n" }),
    );
    assert_eq!(std::fs::read(dir.path().join("run.bat")).unwrap(), b"a\n");
    assert_eq!(v["warnings"], json!([]));
    assert!(log.paths_read.is_empty(), "{:?}", log.paths_read);
}

#[test]
fn a_deep_tree_of_large_configurations_costs_one_budget() {
    // Regression: 200 nested directories, each with large configurations of slow globs,
    // made a new file's write run out of fuel.
    let junk: Vec<u8> = (0..1500)
        .flat_map(|i| format!("*[!a]*[!b]*{i} eol=crlf\n").into_bytes())
        .collect();
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    let mut dir = String::new();
    for i in 0..40 {
        dir.push_str(&format!("d{i}/"));
        files.push((format!("{dir}.gitattributes"), junk.clone()));
        files.push((format!("{dir}.editorconfig"), junk.clone()));
    }
    let refs: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_slice()))
        .collect();
    let (root, s) = tree(&refs, "");
    let target = format!("{dir}new.txt");
    let (_, log) = call(
        &s,
        "write_file",
        json!({ "path": target, "content": "x\n" }),
    );
    assert!(
        log.bytes_read <= crate::tools::conventions::MAX_CONFIG_BYTES,
        "{} bytes of configuration read",
        log.bytes_read
    );
    assert!(root.path().join(&target).exists());
}
