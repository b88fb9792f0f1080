//! `read_media` through the real component: real images and a PDF read back byte for byte,
//! the type told by the content, the policy's cap, hidden and secret images invisible as
//! text files are, one audit event per call, and the CLI's JSON and text output.

use base64::Engine as _;
use serde_json::{json, Value};

use crate::cli::cli;
use crate::support::*;
use file_tools_host::tools::ReadMediaArgs;
use file_tools_host::ErrorCode;

/// Every fixture and the MIME type its content has.
const FIXTURES: &[(&str, &str)] = &[
    ("pixels.png", "image/png"),
    ("gradient.jpg", "image/jpeg"),
    ("checks.gif", "image/gif"),
    ("pixels.webp", "image/webp"),
    ("page.pdf", "application/pdf"),
];

fn fixture(name: &str) -> Vec<u8> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/media");
    std::fs::read(dir.join(name)).expect("media fixture")
}

fn decoded(v: &Value) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(v["data_base64"].as_str().expect("data_base64"))
        .expect("standard base64")
}

#[test]
fn every_type_reads_back_byte_for_byte_and_is_audited() {
    let fx = Fixture::new();
    for (name, _) in FIXTURES {
        fx.write(&format!("assets/{name}"), &fixture(name));
    }
    let mut s = fx.session();
    for (i, (name, mime)) in FIXTURES.iter().enumerate() {
        let path = format!("assets/{name}");
        let bytes = fixture(name);
        let v = call(&mut s, "read_media", json!({ "path": path })).unwrap();
        assert_eq!(decoded(&v), bytes, "{name}");
        assert_eq!(v["mime_type"], *mime, "{name}");
        assert_eq!(v["size"], bytes.len() as u64);
        assert_eq!(v["sha256"], sha256(&bytes));
        assert_eq!(v["path"], path);
        assert!(v["summary"].as_str().unwrap().contains(mime), "{v}");
        let ev = &fx.events()[i];
        assert_eq!((ev.tool.as_str(), ev.ok), ("read_media", true));
        assert_eq!(ev.paths_read, std::slice::from_ref(&path));
        assert_eq!(ev.bytes_read, bytes.len() as u64);
    }
    // The typed export gives the same.
    let typed = s
        .read_media(&ReadMediaArgs {
            path: "assets/page.pdf".into(),
        })
        .unwrap();
    assert_eq!(typed.mime_type, "application/pdf");
    assert_eq!(
        base64::engine::general_purpose::STANDARD
            .decode(&typed.data_base64)
            .unwrap(),
        fixture("page.pdf")
    );
    assert_eq!(fx.events().len(), FIXTURES.len() + 1);
}

#[test]
fn the_content_decides_the_type_and_a_name_that_lies_is_refused() {
    let fx = Fixture::new();
    fx.write("blob.dat", &fixture("pixels.png"));
    fx.write("notes.png", b"just some text\n");
    fx.write("logo.svg", b"<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n");
    fx.write("fake.webp", b"RIFF\x04\0\0\0WAVE\0\0");
    let before = fx.snapshot();
    let mut s = fx.session();
    let v = call(&mut s, "read_media", json!({ "path": "blob.dat" })).unwrap();
    assert_eq!(v["mime_type"], "image/png");
    assert_eq!(decoded(&v), fixture("pixels.png"));

    let e = call(&mut s, "read_media", json!({ "path": "notes.png" })).unwrap_err();
    assert_eq!(e.code, ErrorCode::UnsupportedMedia);
    assert!(
        e.message.contains("named as a PNG image but holds text")
            && e.message.contains("read_file"),
        "{}",
        e.message
    );
    let err = e.to_json();
    assert_eq!(err["code"], "UNSUPPORTED_MEDIA");
    assert_eq!(err["details"]["named_as"], "image/png");
    assert_eq!(err["details"]["found"], "text");
    let e = call(&mut s, "read_media", json!({ "path": "logo.svg" })).unwrap_err();
    assert_eq!(e.code, ErrorCode::UnsupportedMedia);
    assert!(e.message.contains("SVG"), "{}", e.message);
    let e = call(&mut s, "read_media", json!({ "path": "fake.webp" })).unwrap_err();
    assert_eq!(e.to_json()["details"]["found"], "binary");
    let ev = fx.events();
    assert_eq!(ev[1].error_code, Some(ErrorCode::UnsupportedMedia));
    assert_eq!(fx.snapshot(), before);
}

#[test]
fn read_file_refuses_an_image_as_binary_and_names_read_media() {
    let fx = Fixture::new();
    fx.write("pic.png", &fixture("pixels.png"));
    fx.write("pic.bin", &fixture("pixels.png"));
    let mut s = fx.session();
    for path in ["pic.png", "pic.bin"] {
        let e = call(&mut s, "read_file", json!({ "path": path })).unwrap_err();
        assert_eq!(e.code, ErrorCode::UnsupportedBinary, "{path}");
        assert!(e.message.contains("read_media"), "{path}: {}", e.message);
    }
}

#[test]
fn over_the_policy_cap_nothing_is_returned() {
    let fx = Fixture::new();
    let png = fixture("pixels.png");
    fx.write("small.png", &png);
    // Exactly the default cap passes; one byte more is refused.
    let mut big = b"\x89PNG\r\n\x1a\n".to_vec();
    big.resize(5 << 20, 0);
    fx.write("at_cap.png", &big);
    big.push(0);
    fx.write("over_cap.png", &big);
    let mut s = fx.session();
    let v = call(&mut s, "read_media", json!({ "path": "at_cap.png" })).unwrap();
    assert_eq!(v["size"], 5 << 20);
    let e = call(&mut s, "read_media", json!({ "path": "over_cap.png" })).unwrap_err();
    assert_eq!(e.code, ErrorCode::FileTooLarge);
    let err = e.to_json();
    assert_eq!(err["details"]["limit"], (5u64 << 20).to_string());
    assert_eq!(err["details"]["size"], ((5u64 << 20) + 1).to_string());
    assert!(err.get("data_base64").is_none() && !err.to_string().contains("iVBOR"));

    let cap = png.len() as u64 - 1;
    let mut s = fx.session_with(
        json!({ "limits": { "max_media_bytes": cap } }),
        false,
        Default::default(),
    );
    let e = call(&mut s, "read_media", json!({ "path": "small.png" })).unwrap_err();
    assert_eq!(e.code, ErrorCode::FileTooLarge);
    assert!(e.message.contains("max_media_bytes"), "{}", e.message);
    let ev = fx.events().pop().unwrap();
    assert_eq!(ev.error_code, Some(ErrorCode::FileTooLarge));
    assert_eq!((ev.paths_read.len(), ev.bytes_read), (0, 0));
}

/// A blocked image answers exactly as a missing file does, and as a blocked text file does
/// to `read_file`; a secret one exactly as a missing file of the same secret rule; a link
/// into the hidden area as a missing file.
#[cfg(unix)]
#[test]
fn hidden_and_secret_images_are_invisible() {
    let fx = Fixture::new();
    fx.write("private/logo.png", &fixture("pixels.png"));
    fx.write("private/notes.txt", b"hidden words\n");
    fx.write("keys/badge.png", &fixture("pixels.png"));
    fx.write("pub/logo.png", &fixture("pixels.png"));
    fx.symlink("../private/logo.png", "pub/alias.png");
    fx.symlink("../private/none.png", "pub/alias_missing.png");
    let mut s = fx.session_with(
        json!({
            "read": { "block": ["private/**"] },
            "overrides": [{ "pattern": "keys/**", "kind": "secret" }],
        }),
        false,
        Default::default(),
    );
    let mut answer = |tool: &str, path: &str| -> String {
        let e = call(&mut s, tool, json!({ "path": path })).unwrap_err();
        e.to_json().to_string().replace(path, "P")
    };
    let hidden = answer("read_media", "private/logo.png");
    assert!(hidden.contains("NOT_FOUND"), "{hidden}");
    assert_eq!(hidden, answer("read_media", "private/none.png"));
    assert_eq!(hidden, answer("read_file", "private/notes.txt"));
    assert_eq!(hidden, answer("read_file", "private/logo.png"));
    assert_eq!(
        answer("read_media", "pub/alias.png"),
        answer("read_media", "pub/alias_missing.png")
    );
    let secret = answer("read_media", "keys/badge.png");
    assert!(
        secret.contains("POLICY_DENIED") && secret.contains("\"reason\":\"secret\""),
        "{secret}"
    );
    assert_eq!(secret, answer("read_media", "keys/none.png"));
    assert_eq!(secret, answer("read_file", "keys/badge.png"));
    // Nothing was read, by any of these calls.
    assert!(fx.events().iter().all(|e| e.paths_read.is_empty()));
    // Positive control: the same image where no rule hides it.
    let v = call(&mut s, "read_media", json!({ "path": "pub/logo.png" })).unwrap();
    assert_eq!(decoded(&v), fixture("pixels.png"));
}

#[test]
fn the_cli_returns_json_and_its_text_format_the_base64_alone() {
    let fx = Fixture::new();
    fx.write("docs/page.pdf", &fixture("page.pdf"));
    let repo = fx.repo.to_str().unwrap();
    let args = r#"{"path":"docs/page.pdf"}"#;
    let (out, v) = cli(&["--repo", repo, "call", "read_media", args], None);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(v["result"]["mime_type"], "application/pdf");
    assert_eq!(decoded(&v["result"]), fixture("page.pdf"));
    let (out, _) = cli(
        &[
            "--repo",
            repo,
            "--format",
            "text",
            "call",
            "read_media",
            args,
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        base64::engine::general_purpose::STANDARD
            .decode(text.trim_end())
            .unwrap(),
        fixture("page.pdf")
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("application/pdf"));
}
