use super::*;

fn form(content: &[u8]) -> Form {
    form_of("f", content, true, &mut || None).unwrap()
}

fn run(content: &[u8], start: u32, max_lines: u32, max_bytes: usize) -> ReadFileResult {
    let mut c = Collector::new(start, max_lines, max_bytes, &form(content));
    // Feed in small pieces to exercise chunk boundaries.
    for piece in content.chunks(3) {
        c.feed(piece);
    }
    c.finish("f".into(), Kind::Text, false)
}

/// Fed whole or in pieces of any size, a file gives the same result, hash included.
#[test]
fn whole_and_chunked_feeds_agree_for_every_range() {
    let content = b"one\r\ntwo\n\nfour has more\nfive\nsix";
    for start in 1..8 {
        for max_lines in 1..7 {
            for max_bytes in [3, 9, 1000] {
                let mut whole = Collector::new(start, max_lines, max_bytes, &form(content));
                whole.feed_whole(content, &crate::rules::services::NoServices);
                let whole = whole.finish("f".into(), Kind::Text, false);
                for size in [1, 2, 5, 64] {
                    let mut c = Collector::new(start, max_lines, max_bytes, &form(content));
                    for piece in content.chunks(size) {
                        c.feed(piece);
                    }
                    let r = c.finish("f".into(), Kind::Text, false);
                    assert_eq!(
                        (
                            &r.content,
                            r.end_line,
                            r.total_lines,
                            r.truncated,
                            &r.sha256
                        ),
                        (
                            &whole.content,
                            whole.end_line,
                            whole.total_lines,
                            whole.truncated,
                            &whole.sha256
                        ),
                        "start {start} max_lines {max_lines} max_bytes {max_bytes} pieces {size}"
                    );
                }
                assert_eq!(whole.total_lines, 6);
                assert_eq!(whole.sha256, crate::fs::hash::sha256_hex(content));
            }
        }
    }
}

#[test]
fn whole_file_with_counts_and_hash() {
    let r = run(b"a\nb\nc\n", 1, 100, 1000);
    assert_eq!(r.content, "a\nb\nc\n");
    assert_eq!((r.start_line, r.end_line, r.total_lines), (1, 3, 3));
    assert!(!r.truncated);
    assert_eq!(r.sha256, crate::fs::hash::sha256_hex(b"a\nb\nc\n"));
    assert_eq!(r.line_ending, LineEnding::Lf);
}

#[test]
fn ranges_and_truncation() {
    let r = run(b"1\n2\n3\n4\n5", 2, 2, 1000);
    assert_eq!(r.content, "2\n3\n");
    assert_eq!((r.end_line, r.total_lines), (3, 5));
    assert!(r.truncated);
    let r = run(b"1\n2\n3\n4\n5", 4, 10, 1000);
    assert_eq!(r.content, "4\n5");
    assert!(!r.truncated);
    let r = run(b"1\n2\n", 9, 10, 1000);
    assert_eq!((r.content.as_str(), r.end_line), ("", 8));
}

#[test]
fn byte_budget_stops_at_a_line_boundary_or_cuts_one_long_line() {
    let r = run(b"aaaa\nbbbb\ncccc\n", 1, 10, 12);
    assert_eq!(r.content, "aaaa\nbbbb\n");
    assert!(r.truncated);
    let r = run("ééééé\n".as_bytes(), 1, 10, 5);
    assert_eq!(r.content, "éé");
    assert!(r.truncated && r.valid_utf8);
}

#[test]
fn crlf_mixed_bom_and_none() {
    let r = run(b"\xEF\xBB\xBFa\r\nb\r\n", 1, 10, 100);
    assert!(r.bom);
    assert_eq!(r.content, "a\r\nb\r\n");
    assert_eq!(r.line_ending, LineEnding::Crlf);
    assert_eq!(run(b"a\r\nb\n", 1, 10, 100).line_ending, LineEnding::Mixed);
    assert_eq!(run(b"abc", 1, 10, 100).line_ending, LineEnding::None);
    assert_eq!(run(b"", 1, 10, 100).total_lines, 0);
}

#[test]
fn invalid_utf8_is_flagged_and_binary_refused() {
    // Broken UTF-8 (not surely anything else) is shown with replacements, and says so.
    let r = run(b"caf\xE9 \xC3\xA9\n", 1, 10, 100);
    assert!(!r.valid_utf8);
    assert_eq!(r.encoding, "utf-8");
    assert_eq!(
        form_of("f", b"ab\0cd", true, &mut || None)
            .unwrap_err()
            .code,
        ErrorCode::UnsupportedBinary
    );
}

/// Text in another encoding is read as text: decoded, lines and line endings counted
/// in it, BOM reported, size and hash of the bytes; fed whole or in any pieces alike.
#[test]
fn other_encodings_are_decoded_in_any_pieces() {
    let utf16le: Vec<u8> = "\u{feff}/* Grüße */\r\nint x;\r\n"
        .encode_utf16()
        .flat_map(u16::to_le_bytes)
        .collect();
    let cases: [(&[u8], &str, &str, bool); 3] = [
        (
            b"/* Gr\xFC\xDFe aus M\xFCnchen */\n\x93q\x94\n",
            "windows-1252",
            "/* Grüße aus München */\n“q”\n",
            false,
        ),
        (&utf16le, "utf-16le", "/* Grüße */\r\nint x;\r\n", true),
        (b"\xEF\xBB\xBFa\r\nb", "utf-8", "a\r\nb", true),
    ];
    for (bytes, encoding, text, bom) in cases {
        for size in [1, 2, 3, 5, 1000] {
            let mut c = Collector::new(1, 100, 1000, &form(bytes));
            for piece in bytes.chunks(size) {
                c.feed(piece);
            }
            let r = c.finish("f".into(), Kind::Text, false);
            assert_eq!(
                (r.content.as_str(), r.encoding.as_str(), r.bom, r.valid_utf8),
                (text, encoding, bom, true),
                "{size}"
            );
            assert_eq!((r.total_lines, r.size), (2, bytes.len() as u64));
            assert_eq!(r.sha256, crate::fs::hash::sha256_hex(bytes));
        }
    }
    let r = run(&utf16le, 2, 1, 100);
    assert_eq!(
        (r.content.as_str(), r.line_ending),
        ("int x;\r\n", LineEnding::Crlf)
    );
    assert!(r.summary.contains("(utf-16le)"), "{}", r.summary);
    // A UTF-16 file cut inside a character: replaced, and said to be.
    let r = run(&utf16le[..utf16le.len() - 1], 1, 10, 100);
    assert!(
        !r.valid_utf8 && r.content.ends_with('\u{fffd}'),
        "{:?}",
        r.content
    );
}

#[test]
fn numbering() {
    assert_eq!(number_lines("a\nb", 9), "     9\ta\n    10\tb");
}
