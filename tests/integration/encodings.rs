//! Text in other encodings than UTF-8 through the component: the corpus in
//! `tests/fixtures/encodings` (a Latin-1 C file, windows-1252 with curly quotes, UTF-16LE
//! and UTF-16BE with BOMs, UTF-8 with a BOM, mixed line endings) read with its encoding
//! named, searched, edited and reverted byte for byte; a change the encoding cannot hold
//! refused with nothing written; declared encodings honoured. The edit and patch scenarios
//! (`scenarios.rs`, 030-043) compare more changes with expected bytes.

use std::path::Path;

use serde_json::{json, Value};

use crate::support::*;

const CORPUS: [&str; 6] = [
    "gruss.c",
    "quotes.txt",
    "utf16le.txt",
    "utf16be.txt",
    "utf8bom.txt",
    "mixed.txt",
];

fn corpus_file(name: &str) -> Vec<u8> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/encodings");
    std::fs::read(dir.join(name)).unwrap()
}

/// The standard fixture with the corpus under `enc/`.
fn fixture() -> Fixture {
    let fx = Fixture::new();
    for name in CORPUS {
        fx.write(&format!("enc/{name}"), &corpus_file(name));
    }
    fx
}

fn edit(path: &str, old: &str, new: &str) -> Value {
    json!({ "path": path, "edits": [{ "old_text": old, "new_text": new }] })
}

#[test]
fn reads_name_the_encoding_and_decode_the_text() {
    let fx = fixture();
    let mut s = fx.session();
    let cases: Vec<Value> =
        serde_json::from_slice(&corpus_file("first-lines.json")).expect("the corpus table");
    for case in &cases {
        let name = case["name"].as_str().expect("name");
        let (encoding, bom, first) = (&case["encoding"], &case["bom"], &case["first"]);
        let path = format!("enc/{name}");
        let v = call(&mut s, "read_file", json!({ "path": path, "max_lines": 1 })).unwrap();
        assert_eq!(
            (&v["encoding"], &v["bom"], &v["content"]),
            (encoding, bom, first),
            "{name}: {v}"
        );
        assert_eq!(v["valid_utf8"], true, "{name}");
        let bytes = corpus_file(name);
        assert_eq!(
            v["sha256"],
            sha256(&bytes),
            "{name}: the hash is of the bytes"
        );
        assert_eq!(v["size"], bytes.len(), "{name}");
    }
    // The README's own file stays UTF-8.
    let v = call(&mut s, "read_file", json!({ "path": "README.md" })).unwrap();
    assert_eq!(v["encoding"], "utf-8");
}

#[test]
fn a_large_utf16_file_is_read_by_range_streamed() {
    let fx = Fixture::new();
    let mut text = String::from("\u{feff}");
    for i in 1..=3000 {
        text.push_str(&format!("Zeile {i:04}: Grüße\r\n"));
    }
    let bytes: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
    fx.write("big16.txt", &bytes);
    let mut s = fx.session_with(
        json!({ "limits": { "max_whole_read_bytes": 10_000 } }),
        true,
        Default::default(),
    );
    let v = call(
        &mut s,
        "read_file",
        json!({ "path": "big16.txt", "start_line": 2999, "max_lines": 5 }),
    )
    .unwrap();
    assert_eq!(v["content"], "Zeile 2999: Grüße\r\nZeile 3000: Grüße\r\n");
    assert_eq!(
        (v["total_lines"].as_u64(), v["encoding"].as_str()),
        (Some(3000), Some("utf-16le"))
    );
    assert_eq!(v["sha256"], sha256(&bytes));
}

#[test]
fn search_finds_words_with_umlauts_in_latin1_and_utf16() {
    let fx = fixture();
    let mut s = fx.session();
    let v = call(
        &mut s,
        "search_text",
        json!({ "query": "Grüße", "path": "enc" }),
    )
    .unwrap();
    let found: Vec<(String, u64, String)> = v["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["path"].as_str().unwrap().to_string(),
                m["line"].as_u64().unwrap(),
                m["text"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            ("enc/gruss.c".into(), 1, "/* Grüße aus München */".into()),
            ("enc/utf16le.txt".into(), 1, "Grüße aus Zürich".into()),
        ]
    );
    // A word in the UTF-16BE file, and an ASCII word whose line is shown decoded.
    let v = call(&mut s, "search_text", json!({ "query": "テキスト" })).unwrap();
    assert_eq!(v["matches"][0]["path"], "enc/utf16be.txt");
    let v = call(
        &mut s,
        "search_text",
        json!({ "query": "Price", "path": "enc" }),
    )
    .unwrap();
    assert_eq!(v["matches"][0]["text"], "Price: 5 € per “unit”.");
    // UTF-16 files are searched, not skipped as binary; the binary fixture still is.
    let v = call(&mut s, "search_text", json!({ "query": "second line" })).unwrap();
    assert_eq!(v["total_matches"], 1, "{v}");
    assert!(v["skipped"].to_string().contains("binary"), "{v}");
}

#[test]
fn an_edit_writes_the_encoding_back_and_revert_restores_every_byte() {
    let fx = fixture();
    let mut s = fx.session();
    let before = fx.snapshot();
    let v = call(
        &mut s,
        "edit_file",
        edit("enc/gruss.c", "return 0;", "return 1; /* Größe */"),
    )
    .unwrap();
    let after = std::fs::read(fx.repo.join("enc/gruss.c")).unwrap();
    let mut want = corpus_file("gruss.c");
    let at = want.windows(9).position(|w| w == b"return 0;").unwrap();
    want.splice(at..at + 9, b"return 1; /* Gr\xF6\xDFe */".iter().copied());
    assert_eq!(after, want);
    // The result's diff shows the text; the audit records the bytes' hashes.
    assert!(
        v["diff"]
            .as_str()
            .unwrap()
            .contains("+    return 1; /* Größe */\n"),
        "{v}"
    );
    let last = fx.events().pop().unwrap();
    assert_eq!(
        last.files[0].sha256_after.as_deref(),
        Some(sha256(&after).as_str())
    );
    call(
        &mut s,
        "edit_file",
        edit("enc/utf16le.txt", "zweite Zeile", "Zeile zwei"),
    )
    .unwrap();
    let d = call(&mut s, "diff_workspace", json!({})).unwrap();
    let diff = d["diff"].as_str().unwrap();
    assert!(diff.contains("-zweite Zeile\r\n+Zeile zwei\r\n"), "{diff}");
    assert!(!diff.contains("Binary files"), "{diff}");
    call(
        &mut s,
        "revert",
        json!({ "paths": ["enc/gruss.c", "enc/utf16le.txt"] }),
    )
    .unwrap();
    assert_eq!(fx.snapshot(), before);
}

#[test]
fn a_character_the_encoding_lacks_is_refused_and_nothing_is_written() {
    let fx = fixture();
    let mut s = fx.session();
    let before = fx.snapshot();
    let events = fx.events().len();
    let r = call(&mut s, "edit_file", edit("enc/gruss.c", "München", "Łódź"));
    let e = r.unwrap_err();
    assert_eq!(file_tools_host::code_name(e.code), "ENCODING_ERROR");
    assert!(e.message.contains("'Ł' (U+0141"), "{}", e.message);
    assert!(e.message.contains("windows-1252"), "{}", e.message);
    assert_eq!(
        e.details
            .iter()
            .find(|d| d.key == "character")
            .map(|d| d.value.as_str()),
        Some("U+0141")
    );
    // A patch and an append are refused alike.
    let p = "*** Begin Patch\n*** Update File: enc/gruss.c\n@@\n-int main(void)\n+int main(void) // →\n*** End Patch\n";
    let r = call(&mut s, "apply_patch", json!({ "patch": p }));
    assert_eq!(code(&r), "ENCODING_ERROR");
    let r = call(
        &mut s,
        "append_file",
        json!({ "path": "enc/quotes.txt", "content": "ĉ\n" }),
    );
    assert_eq!(code(&r), "ENCODING_ERROR");
    assert_eq!(fx.snapshot(), before);
    assert_eq!(fx.events().len(), events + 3);
}

#[test]
fn a_declared_charset_decides_what_detection_leaves_open() {
    let fx = Fixture::new();
    // Mostly letters above 0x7F: detection makes no guess; `latin1` declared reads it.
    fx.write("de/umlaute.txt", b"\xC4\xD6\xDC\xE4\xF6\xFC\xDF\n");
    let mut s = fx.session();
    let v = call(&mut s, "read_file", json!({ "path": "de/umlaute.txt" })).unwrap();
    assert_eq!(
        (v["encoding"].as_str(), v["valid_utf8"].as_bool()),
        (Some("utf-8"), Some(false))
    );
    let r = call(&mut s, "edit_file", edit("de/umlaute.txt", "\n", "!\n"));
    assert_eq!(code(&r), "ENCODING_ERROR");
    fx.write("de/.editorconfig", b"[*.txt]\ncharset = latin1\n");
    let v = call(&mut s, "read_file", json!({ "path": "de/umlaute.txt" })).unwrap();
    assert_eq!(
        (
            v["encoding"].as_str(),
            v["content"].as_str(),
            v["valid_utf8"].as_bool()
        ),
        (Some("iso-8859-1"), Some("ÄÖÜäöüß\n"), Some(true))
    );
    let v = call(&mut s, "search_text", json!({ "query": "äöü" })).unwrap();
    assert_eq!(v["matches"][0]["text"], "ÄÖÜäöüß", "{v}");
    call(&mut s, "edit_file", edit("de/umlaute.txt", "ÄÖÜ", "ÄÖÜ!")).unwrap();
    assert_eq!(
        std::fs::read(fx.repo.join("de/umlaute.txt")).unwrap(),
        b"\xC4\xD6\xDC!\xE4\xF6\xFC\xDF\n"
    );
    // A new file where UTF-16 is declared is written in it.
    fx.write(
        ".gitattributes",
        b"*.ps1 working-tree-encoding=UTF-16LE-BOM\n",
    );
    call(
        &mut s,
        "write_file",
        json!({ "path": "run.ps1", "content": "Write-Host 'Grüße'\n" }),
    )
    .unwrap();
    let want: Vec<u8> = "\u{feff}Write-Host 'Grüße'\n"
        .encode_utf16()
        .flat_map(u16::to_le_bytes)
        .collect();
    assert_eq!(std::fs::read(fx.repo.join("run.ps1")).unwrap(), want);
}
