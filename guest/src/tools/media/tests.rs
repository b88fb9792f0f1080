use super::*;
use crate::rules::fsx::Fs;

fn fixture(name: &str) -> Vec<u8> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/media/");
    std::fs::read(format!("{dir}{name}")).unwrap()
}

fn session(root: &std::path::Path, policy: &str) -> Session {
    Session::new(Fs::open(root).unwrap(), Policy::from_json(policy).unwrap())
}

fn read(s: &Session, path: &str) -> ToolResult<ReadMediaResult> {
    read_media(
        s,
        &mut CallLog::default(),
        &ReadMediaArgs { path: path.into() },
    )
}

#[test]
fn every_offered_type_comes_back_whole_with_its_type_size_and_hash() {
    let tmp = tempfile::tempdir().unwrap();
    let s = session(tmp.path(), "");
    for (name, mime) in [
        ("pixels.png", "image/png"),
        ("gradient.jpg", "image/jpeg"),
        ("checks.gif", "image/gif"),
        ("pixels.webp", "image/webp"),
        ("page.pdf", "application/pdf"),
    ] {
        let bytes = fixture(name);
        std::fs::write(tmp.path().join(name), &bytes).unwrap();
        let mut log = CallLog::default();
        let r = read_media(&s, &mut log, &ReadMediaArgs { path: name.into() }).unwrap();
        assert_eq!(r.mime_type, mime, "{name}");
        assert_eq!(r.size, bytes.len() as u64);
        assert_eq!(r.sha256, crate::fs::hash::sha256_hex(&bytes));
        assert_eq!(r.data_base64, base64::encode(&bytes));
        assert!(r.summary.contains(mime), "{}", r.summary);
        assert_eq!(
            (log.paths_read, log.bytes_read),
            (vec![name.to_string()], r.size)
        );
    }
}

#[test]
fn the_content_decides_the_type_not_the_name() {
    let tmp = tempfile::tempdir().unwrap();
    let png = fixture("pixels.png");
    std::fs::write(tmp.path().join("blob.dat"), &png).unwrap();
    std::fs::write(tmp.path().join("photo.png"), fixture("gradient.jpg")).unwrap();
    std::fs::write(tmp.path().join("fake.png"), b"not an image\n").unwrap();
    std::fs::write(tmp.path().join("fake.pdf"), b"\x7fELF\x02\x01\x01\0\0\0").unwrap();
    std::fs::write(
        tmp.path().join("logo.svg"),
        b"<svg xmlns='http://www.w3.org/2000/svg'/>",
    )
    .unwrap();
    std::fs::write(tmp.path().join("notes.txt"), b"plain\n").unwrap();
    std::fs::write(tmp.path().join("empty.gif"), b"").unwrap();
    let s = session(tmp.path(), "");
    let r = read(&s, "blob.dat").unwrap();
    assert_eq!(
        (r.mime_type.as_str(), r.data_base64),
        ("image/png", base64::encode(&png))
    );
    let r = read(&s, "photo.png").unwrap();
    assert_eq!(r.mime_type, "image/jpeg");
    assert!(r.summary.contains("named as a PNG image"), "{}", r.summary);

    let e = read(&s, "fake.png").unwrap_err();
    assert_eq!(e.code, ErrorCode::UnsupportedMedia);
    assert!(
        e.message.contains("named as a PNG image but holds text"),
        "{}",
        e.message
    );
    assert!(e.message.contains("read_file"), "{}", e.message);
    assert_eq!(e.details["found"], "text");
    assert_eq!(e.details["named_as"], "image/png");
    let e = read(&s, "fake.pdf").unwrap_err();
    assert_eq!(
        (e.code, e.details["found"].as_str()),
        (ErrorCode::UnsupportedMedia, "binary")
    );
    assert!(e.message.contains("PDF document"), "{}", e.message);
    let e = read(&s, "logo.svg").unwrap_err();
    assert_eq!(e.code, ErrorCode::UnsupportedMedia);
    assert!(
        e.message.contains("SVG") && e.message.contains("read_file"),
        "{}",
        e.message
    );
    let e = read(&s, "notes.txt").unwrap_err();
    assert_eq!(e.code, ErrorCode::UnsupportedMedia);
    assert!(!e.details.contains_key("named_as"));
    assert_eq!(read(&s, "empty.gif").unwrap_err().details["found"], "empty");
}

#[test]
fn the_policy_cap_refuses_larger_files_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let png = fixture("pixels.png");
    std::fs::write(tmp.path().join("a.png"), &png).unwrap();
    let at = |cap: usize| {
        let policy = format!(r#"{{"limits":{{"max_media_bytes":{cap}}}}}"#);
        let mut log = CallLog::default();
        let r = read_media(
            &session(tmp.path(), &policy),
            &mut log,
            &ReadMediaArgs {
                path: "a.png".into(),
            },
        );
        (r, log)
    };
    let (r, _) = at(png.len());
    assert_eq!(r.unwrap().size, png.len() as u64);
    let (r, log) = at(png.len() - 1);
    let e = r.unwrap_err();
    assert_eq!(e.code, ErrorCode::FileTooLarge);
    assert!(e.message.contains("max_media_bytes"), "{}", e.message);
    assert_eq!(e.details["size"], png.len().to_string());
    assert_eq!(e.details["limit"], (png.len() - 1).to_string());
    assert_eq!((log.paths_read.len(), log.bytes_read), (0, 0));
    assert_eq!(
        Policy::from_json("").unwrap().limits().max_media_bytes,
        5 << 20
    );
}

/// A hidden image answers exactly as a missing file does; a secret one by name as any
/// secret path does, present or not; one whose content holds a key is withheld.
#[test]
fn hidden_and_secret_images_answer_as_text_files_do() {
    let tmp = tempfile::tempdir().unwrap();
    let png = fixture("pixels.png");
    for p in ["private/a.png", "keys/b.png", "pub/c.png"] {
        std::fs::create_dir_all(tmp.path().join(p).parent().unwrap()).unwrap();
        std::fs::write(tmp.path().join(p), &png).unwrap();
    }
    let mut pdf = fixture("page.pdf");
    pdf.extend_from_slice(b"\n-----BEGIN RSA PRIVATE KEY-----\nMIIE\n");
    std::fs::write(tmp.path().join("pub/key.pdf"), &pdf).unwrap();
    let s = session(
        tmp.path(),
        r#"{"read":{"block":["private/**"]},"overrides":[{"pattern":"keys/**","kind":"secret"}]}"#,
    );
    let shape = |path: &str| {
        let e = read(&s, path).unwrap_err();
        serde_json::to_string(&e).unwrap().replace(path, "P")
    };
    assert_eq!(shape("private/a.png"), shape("private/none.png"));
    assert!(shape("private/a.png").contains("NOT_FOUND"));
    assert_eq!(shape("keys/b.png"), shape("keys/none.png"));
    let e = read(&s, "keys/b.png").unwrap_err();
    assert_eq!(
        (e.code, e.reason.as_deref()),
        (ErrorCode::PolicyDenied, Some("secret"))
    );
    let e = read(&s, "pub/key.pdf").unwrap_err();
    assert_eq!(e.reason.as_deref(), Some("secret_content"));
    assert!(!e.message.contains("MIIE"));
    // Positive control: the same image where nothing hides it.
    assert_eq!(read(&s, "pub/c.png").unwrap().size, png.len() as u64);
}

#[cfg(unix)]
#[test]
fn a_link_is_read_as_its_target_and_both_are_audited() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("img")).unwrap();
    std::fs::write(tmp.path().join("img/real.gif"), fixture("checks.gif")).unwrap();
    std::os::unix::fs::symlink("img/real.gif", tmp.path().join("alias.gif")).unwrap();
    std::os::unix::fs::symlink("/etc/hostname", tmp.path().join("out.png")).unwrap();
    let s = session(tmp.path(), "");
    let mut log = CallLog::default();
    let r = read_media(
        &s,
        &mut log,
        &ReadMediaArgs {
            path: "alias.gif".into(),
        },
    )
    .unwrap();
    assert_eq!(
        (r.path.as_str(), r.mime_type.as_str()),
        ("alias.gif", "image/gif")
    );
    assert_eq!(log.paths_read, ["alias.gif", "img/real.gif"]);
    assert_eq!(
        read(&s, "out.png").unwrap_err().code,
        ErrorCode::PathRejected
    );
    assert_eq!(read(&s, "img").unwrap_err().code, ErrorCode::NotAFile);
}

#[test]
fn read_file_refuses_an_image_and_names_read_media() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("a.png"), fixture("pixels.png")).unwrap();
    // Refused by name, and (named `.dat`) by content.
    std::fs::write(tmp.path().join("a.dat"), fixture("pixels.png")).unwrap();
    let s = session(tmp.path(), "");
    for path in ["a.png", "a.dat"] {
        let args = crate::api::ReadFileArgs {
            path: path.into(),
            ..Default::default()
        };
        let e = crate::tools::read::read_file(&s, &mut CallLog::default(), &args).unwrap_err();
        assert_eq!(e.code, ErrorCode::UnsupportedBinary, "{path}");
        assert!(e.message.contains("read_media"), "{path}: {}", e.message);
    }
}
