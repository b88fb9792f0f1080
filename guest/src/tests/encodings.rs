//! Files in other encodings than UTF-8 through the tools on a native tree: reads name the
//! encoding, search finds their words, diffs show their text, secrets in UTF-16 stay
//! withheld, and changes write them back byte for byte (the edit and patch scenarios in
//! `tests/fixtures/scenarios` cover more of those, through the component).

use serde_json::{json, Value};

use crate::audit::CallLog;
use crate::error::ErrorCode;
use crate::rules::fsx::Fs;
use crate::rules::policy::Policy;
use crate::tools::session::Session;

const GRUSS: &[u8] = include_bytes!("../../../tests/fixtures/encodings/gruss.c");
const QUOTES: &[u8] = include_bytes!("../../../tests/fixtures/encodings/quotes.txt");
const UTF16LE: &[u8] = include_bytes!("../../../tests/fixtures/encodings/utf16le.txt");
const UTF16BE: &[u8] = include_bytes!("../../../tests/fixtures/encodings/utf16be.txt");
const UTF8BOM: &[u8] = include_bytes!("../../../tests/fixtures/encodings/utf8bom.txt");
const MIXED: &[u8] = include_bytes!("../../../tests/fixtures/encodings/mixed.txt");
/// Each corpus file's encoding, BOM and first line as a read returns them.
const FIRST_LINES: &str = include_str!("../../../tests/fixtures/encodings/first-lines.json");

fn corpus() -> (tempfile::TempDir, Session) {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in [
        ("gruss.c", GRUSS),
        ("quotes.txt", QUOTES),
        ("utf16le.txt", UTF16LE),
        ("utf16be.txt", UTF16BE),
        ("utf8bom.txt", UTF8BOM),
        ("mixed.txt", MIXED),
        ("plain.rs", b"fn main() {}\n".as_slice()),
    ] {
        std::fs::write(dir.path().join(name), bytes).unwrap();
    }
    let s = Session::new(
        Fs::open(dir.path()).unwrap(),
        Policy::from_json("").unwrap(),
    );
    (dir, s)
}

fn call(s: &Session, tool: &str, args: Value) -> Result<Value, crate::error::ToolError> {
    crate::tools::call_value(s, &mut CallLog::default(), tool, &args.to_string())
}

#[test]
fn reads_decode_and_name_the_encoding() {
    let (_dir, s) = corpus();
    // The corpus's table, shared with the integration tests, and a plain UTF-8 file.
    let mut cases: Vec<Value> = serde_json::from_str(FIRST_LINES).unwrap();
    cases.push(
        json!({ "name": "plain.rs", "encoding": "utf-8", "bom": false, "first": "fn main() {}\n" }),
    );
    for case in &cases {
        let (path, encoding, bom, first) = (
            &case["name"],
            &case["encoding"],
            &case["bom"],
            &case["first"],
        );
        let v = call(&s, "read_file", json!({ "path": path, "max_lines": 1 })).unwrap();
        assert_eq!(&v["encoding"], encoding, "{path}: {v}");
        assert_eq!(&v["bom"], bom, "{path}");
        assert_eq!(&v["content"], first, "{path}");
        assert_eq!(v["valid_utf8"], true, "{path}");
    }
    let v = call(&s, "read_file", json!({ "path": "mixed.txt" })).unwrap();
    assert_eq!(
        (v["line_ending"].as_str(), v["total_lines"].as_u64()),
        (Some("mixed"), Some(3))
    );
    assert_eq!(v["size"], MIXED.len());
    assert_eq!(v["sha256"], crate::fs::hash::sha256_hex(MIXED));
}

#[test]
fn search_finds_words_in_every_encoding() {
    let (_dir, s) = corpus();
    let hits = |q: &str, regex: bool| {
        let v = call(&s, "search_text", json!({ "query": q, "regex": regex })).unwrap();
        v["matches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                format!(
                    "{}:{}:{}",
                    m["path"].as_str().unwrap(),
                    m["line"],
                    m["text"].as_str().unwrap()
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        hits("Grüße", false),
        [
            "gruss.c:1:/* Grüße aus München */",
            "utf16le.txt:1:Grüße aus Zürich"
        ]
    );
    assert_eq!(
        hits("“unit”", false),
        ["quotes.txt:2:Price: 5 € per “unit”."]
    );
    assert_eq!(hits("テキスト", false), ["utf16be.txt:1:日本語のテキスト"]);
    // An ASCII query finds the line in the bytes, and shows it decoded.
    assert_eq!(
        hits("printf", false),
        ["gruss.c:6:    printf(\"Größe: %d\\n\", 42);"]
    );
    assert_eq!(hits("aus", false).len(), 2);
    // A regex whose class takes the file's other characters, and a case-insensitive one.
    assert_eq!(
        hits("Gr\\w+e:", true),
        ["gruss.c:6:    printf(\"Größe: %d\\n\", 42);"]
    );
    assert_eq!(hits("(?i)DEUXIÈME", true), ["mixed.txt:2:deuxième ligne"]);
    let v = call(
        &s,
        "search_text",
        json!({ "query": "ligne", "output": "count" }),
    )
    .unwrap();
    assert_eq!(v["total_matches"], 2);
    assert_eq!(v["skipped"], json!([]), "{v}");
}

#[test]
fn diffs_of_changes_show_the_text() {
    let (_dir, s) = corpus();
    let v = call(
        &s,
        "edit_file",
        json!({ "path": "utf16le.txt", "edits": [{ "old_text": "zweite", "new_text": "dritte" }] }),
    )
    .unwrap();
    let diff = v["diff"].as_str().unwrap();
    assert!(
        diff.contains("-zweite Zeile\r\n+dritte Zeile\r\n"),
        "{diff}"
    );
    call(
        &s,
        "edit_file",
        json!({ "path": "gruss.c", "edits": [{ "old_text": "return 0;", "new_text": "return 1; // Grüße" }] }),
    )
    .unwrap();
    let v = call(&s, "diff_workspace", json!({})).unwrap();
    let diff = v["diff"].as_str().unwrap();
    assert!(diff.contains("+    return 1; // Grüße\n"), "{diff}");
    assert!(diff.contains("+dritte Zeile\r\n"), "{diff}");
    assert!(!diff.contains("Binary files"), "{diff}");
}

#[test]
fn a_secret_in_utf16_text_stays_withheld() {
    let dir = tempfile::tempdir().unwrap();
    let text = "\u{feff}config\r\ntoken = ghp_abcdefghijklmnopqrstuvwxyz0123456789\r\n";
    let bytes: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
    std::fs::write(dir.path().join("notes.txt"), &bytes).unwrap();
    let s = Session::new(
        Fs::open(dir.path()).unwrap(),
        Policy::from_json("").unwrap(),
    );
    let e = call(&s, "read_file", json!({ "path": "notes.txt" })).unwrap_err();
    assert_eq!(e.code, ErrorCode::PolicyDenied);
    let v = call(&s, "search_text", json!({ "query": "config" })).unwrap();
    assert_eq!(v["total_matches"], 0, "{v}");
    let e = call(
        &s,
        "edit_file",
        json!({ "path": "notes.txt", "edits": [{ "old_text": "config", "new_text": "x" }] }),
    )
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::PolicyDenied);
}

#[test]
fn an_unencodable_change_writes_nothing_and_says_why() {
    let (dir, s) = corpus();
    let e = call(
        &s,
        "edit_file",
        json!({ "path": "gruss.c", "edits": [{ "old_text": "München", "new_text": "Łódź" }] }),
    )
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::EncodingError);
    assert_eq!(e.details["character"], "U+0141");
    assert_eq!(e.details["encoding"], "windows-1252");
    assert!(e.message.contains("'Ł'") && e.message.contains("nothing was written"));
    assert_eq!(std::fs::read(dir.path().join("gruss.c")).unwrap(), GRUSS);
    let e = call(
        &s,
        "append_file",
        json!({ "path": "quotes.txt", "content": "→\n" }),
    )
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::EncodingError);
    assert_eq!(
        std::fs::read(dir.path().join("quotes.txt")).unwrap(),
        QUOTES
    );
}

#[test]
fn search_reads_a_declared_encoding_that_detection_leaves_open() {
    let dir = tempfile::tempdir().unwrap();
    // Mostly letters above 0x7F: no guess without the declaration.
    std::fs::write(dir.path().join("u.txt"), b"\xC4\xD6\xDC\xE4\xF6\xFC\xDF\n").unwrap();
    let s = Session::new(
        Fs::open(dir.path()).unwrap(),
        Policy::from_json("").unwrap(),
    );
    let found = |s: &Session, q: &str| {
        call(s, "search_text", json!({ "query": q })).unwrap()["total_matches"].clone()
    };
    assert_eq!(found(&s, "äöü"), 0);
    std::fs::write(
        dir.path().join(".editorconfig"),
        b"[*.txt]\ncharset = latin1\n",
    )
    .unwrap();
    assert_eq!(found(&s, "äöü"), 1);
    // Each configuration file is read once per call: many such files cost one lookup.
    for i in 0..50 {
        std::fs::write(
            dir.path().join(format!("u{i}.txt")),
            b"\xC4\xD6\xDC\xE4\xF6\xFC\xDF\n",
        )
        .unwrap();
    }
    assert_eq!(found(&s, "äöü"), 51);
}

/// A session on a tree holding `late.c`: `header` 400 times (more than 8 KiB of ASCII),
/// then `tail` in Latin-1; and the file's bytes.
fn late_legacy(header: &str, tail: &[u8]) -> (tempfile::TempDir, Session, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = header.repeat(400).into_bytes();
    bytes.extend_from_slice(tail);
    std::fs::write(dir.path().join("late.c"), &bytes).unwrap();
    let s = Session::new(
        Fs::open(dir.path()).unwrap(),
        Policy::from_json("").unwrap(),
    );
    (dir, s, bytes)
}

/// A read takes ordinary text as UTF-8 by its first 8 KiB; a Latin-1 file whose first
/// non-ASCII byte comes later is judged whole and decoded all the same.
#[test]
fn a_legacy_byte_after_the_first_8_kib_is_still_decoded() {
    let (dir, s, bytes) = late_legacy("/* a long ASCII header */\n", b"/* Gr\xFC\xDFe */\n");
    let v = call(
        &s,
        "read_file",
        json!({ "path": "late.c", "start_line": 401 }),
    )
    .unwrap();
    assert_eq!(
        (
            v["encoding"].as_str(),
            v["content"].as_str(),
            v["valid_utf8"].as_bool()
        ),
        (Some("windows-1252"), Some("/* Grüße */\n"), Some(true))
    );
    call(
        &s,
        "edit_file",
        json!({ "path": "late.c", "edits": [{ "old_text": "Grüße", "new_text": "Größe" }] }),
    )
    .unwrap();
    let after = std::fs::read(dir.path().join("late.c")).unwrap();
    assert_eq!(after[..bytes.len() - 10], bytes[..bytes.len() - 10]);
    assert!(after.ends_with(b"/* Gr\xF6\xDFe */\n"));
}

/// Search takes a file for UTF-8 by its first 8 KiB (as it takes it for text); a line it
/// shows that is not UTF-8 makes it judge the whole file, and show the line decoded.
#[test]
fn a_late_legacy_line_found_by_an_ascii_query_is_shown_decoded() {
    let (_dir, s, _) = late_legacy(
        "// a long ASCII header\n",
        b"// Gr\xFC\xDFe aus M\xFCnchen\n",
    );
    let v = call(
        &s,
        "search_text",
        json!({ "query": "aus", "context_lines": 1 }),
    )
    .unwrap();
    assert_eq!(v["matches"][0]["text"], "// Grüße aus München", "{v}");
    assert_eq!(v["matches"][0]["line"], 401);
    assert_eq!(v["matches"][0]["before"], json!(["// a long ASCII header"]));
}

/// A call that asks for many files' declared encodings reads each configuration once.
#[test]
fn declarations_are_read_once_per_call() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join(".editorconfig"),
        b"[*.txt]\ncharset = latin1\n",
    )
    .unwrap();
    let s = Session::new(
        Fs::open(dir.path()).unwrap(),
        Policy::from_json("").unwrap(),
    );
    let mut seen = crate::tools::conventions::Seen::default();
    let mut log = CallLog::default();
    let path = |p: &str| crate::rules::path::LogicalPath::parse(p).unwrap();
    let ask = |log: &mut CallLog, seen: &mut crate::tools::conventions::Seen, p: &str| {
        crate::tools::conventions::declared_encoding_in(&s, log, &path(p), seen)
            .map(|d| d.label.encoding)
    };
    assert_eq!(
        ask(&mut log, &mut seen, "a.txt"),
        Some(crate::text::encoding::Encoding::Latin1)
    );
    std::fs::remove_file(dir.path().join(".editorconfig")).unwrap();
    // The same call remembers what it read; a new one reads again.
    assert_eq!(
        ask(&mut log, &mut seen, "b.txt"),
        Some(crate::text::encoding::Encoding::Latin1)
    );
    assert_eq!(ask(&mut log, &mut Default::default(), "b.txt"), None);
}
