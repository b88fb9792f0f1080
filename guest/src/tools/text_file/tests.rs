use super::*;
use crate::text::encoding::WINDOWS_1252;

fn none() -> Option<Declared> {
    None
}

fn declared(label: &str) -> impl FnMut() -> Option<Declared> + use<> {
    let label = Encoding::for_label(label).unwrap();
    move || {
        Some(Declared {
            label,
            source: ".editorconfig [*] charset".into(),
        })
    }
}

fn decode(bytes: &[u8]) -> ToolResult<TextFile> {
    TextFile::decode("f", bytes, &mut none)
}

fn utf16(text: &str, big: bool) -> Vec<u8> {
    text.encode_utf16()
        .flat_map(|u| {
            if big {
                u.to_be_bytes()
            } else {
                u.to_le_bytes()
            }
        })
        .collect()
}

/// Decoding, the LF view and encoding give back every byte, in every encoding and style.
fn round_trips(bytes: &[u8], decl: &mut dyn FnMut() -> Option<Declared>) -> TextFile {
    let f = TextFile::decode("f", bytes, decl).unwrap();
    assert_eq!(f.encode("f", &f.lf_view(), decl).unwrap(), bytes);
    f
}

#[test]
fn crlf_files_round_trip_through_the_lf_view() {
    let f = decode(b"\xEF\xBB\xBFa\r\nb\r\n").unwrap();
    assert!(f.bom);
    assert_eq!(f.ending, LineEnding::Crlf);
    assert_eq!(f.lf_view(), "a\nb\n");
    assert_eq!(
        f.encode("f", "a\nc\nb\n", &mut none).unwrap(),
        b"\xEF\xBB\xBFa\r\nc\r\nb\r\n"
    );
}

/// A carriage return before a CRLF came back as one CRLF: a byte outside the change lost.
#[test]
fn a_lone_cr_before_a_crlf_is_kept() {
    let f = round_trips(b"a\r\r\nb\r\n", &mut none);
    assert_eq!(f.lf_view(), "a\r\nb\n");
    assert_eq!(
        f.encode("f", "a\r\nB\n", &mut none).unwrap(),
        b"a\r\r\nB\r\n"
    );
}

#[test]
fn mixed_files_are_left_as_they_are() {
    let f = decode(b"a\r\nb\n").unwrap();
    assert_eq!(f.ending, LineEnding::Mixed);
    assert_eq!(f.lf_view(), "a\r\nb\n");
    assert_eq!(f.encode("f", "a\r\nb\n", &mut none).unwrap(), b"a\r\nb\n");
}

#[test]
fn binary_and_broken_utf8_are_refused() {
    assert_eq!(
        decode(b"a\0b").unwrap_err().code,
        ErrorCode::UnsupportedBinary
    );
    // Mostly UTF-8 with a stray byte: not surely anything else.
    let e = decode(
        "Grüße caf\u{e9}\n"
            .as_bytes()
            .iter()
            .chain(b"\xE9")
            .copied()
            .collect::<Vec<_>>()
            .as_slice(),
    )
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::EncodingError);
    assert!(e.message.contains("not valid UTF-8"), "{}", e.message);
    // Control characters: no guess either.
    assert_eq!(
        decode(b"caf\xE9\x1b[0m").unwrap_err().code,
        ErrorCode::EncodingError
    );
}

#[test]
fn every_encoding_round_trips_byte_for_byte() {
    let text = "/* Grüße aus München */\r\nint x;\r\n";
    let le = [b"\xFF\xFE".to_vec(), utf16(text, false)].concat();
    let f = round_trips(&le, &mut none);
    assert_eq!(
        (f.encoding, f.bom, f.ending),
        (Encoding::Utf16Le, true, LineEnding::Crlf)
    );
    assert_eq!(f.lf_view(), "/* Grüße aus München */\nint x;\n");
    let be = [b"\xFE\xFF".to_vec(), utf16("a\nb", true)].concat();
    assert_eq!(round_trips(&be, &mut none).encoding, Encoding::Utf16Be);
    let unmarked = utf16("plain\nascii\n", false);
    let f = round_trips(&unmarked, &mut none);
    assert_eq!((f.encoding, f.bom), (Encoding::Utf16Le, false));
    let utf32 = [
        b"\0\0\xFE\xFF".to_vec(),
        Encoding::Utf32Be.encode("x\r\ny\n").unwrap(),
    ]
    .concat();
    let f = round_trips(&utf32, &mut none);
    assert_eq!(
        (f.encoding, f.ending),
        (Encoding::Utf32Be, LineEnding::Mixed)
    );
    let western = b"/* Gr\xFC\xDFe aus M\xFCnchen */\n\x93quoted\x94 \x80 \x81\n".to_vec();
    // The undefined 0x81 makes detection refuse; declared, it is windows-1252 and kept.
    assert_eq!(decode(&western).unwrap_err().code, ErrorCode::EncodingError);
    let f = round_trips(&western, &mut declared("windows-1252"));
    assert_eq!(f.encoding, WINDOWS_1252);
    assert!(f.body.contains("“quoted” € \u{81}"));
    let f = round_trips(&western[..western.len() - 3], &mut none);
    assert_eq!((f.encoding, f.declared), (WINDOWS_1252, None));
}

#[test]
fn a_change_leaves_every_other_byte_alone() {
    let before = b"caf\xE9 one\r\n\x93two\x94\r\nthree \xFC\r\n";
    let f = decode(before).unwrap();
    assert_eq!(f.encoding, WINDOWS_1252);
    let view = f.lf_view();
    let after = f
        .encode("f", &view.replace("two", "deux"), &mut none)
        .unwrap();
    assert_eq!(after, b"caf\xE9 one\r\n\x93deux\x94\r\nthree \xFC\r\n");
    let le = [b"\xFF\xFE".to_vec(), utf16("é\r\nx\r\n", false)].concat();
    let f = decode(&le).unwrap();
    let after = f.encode("f", "é\ny\n", &mut none).unwrap();
    assert_eq!(after[..le.len() - 6], le[..le.len() - 6]);
    assert_eq!(after[le.len() - 6..], utf16("y\r\n", false));
}

#[test]
fn a_character_the_encoding_lacks_is_refused_with_its_name() {
    let f = TextFile::decode("a.c", b"/* M\xFCnchen */\n", &mut declared("latin1")).unwrap();
    assert_eq!(f.encoding, Encoding::Latin1);
    let e = f
        .encode("a.c", "/* München */\n/* Łódź */\n", &mut none)
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::EncodingError);
    assert!(e.message.contains("'Ł' (U+0141, line 2"), "{}", e.message);
    assert!(
        e.message.contains("iso-8859-1") && e.message.contains("charset"),
        "{}",
        e.message
    );
    assert_eq!(
        e.details.get("character").map(String::as_str),
        Some("U+0141")
    );
    assert_eq!(
        e.details.get("encoding").map(String::as_str),
        Some("iso-8859-1")
    );
    // The euro sign: in windows-1252, not in ISO-8859-1.
    assert!(f.encode("a.c", "5 €\n", &mut none).is_err());
    let w = decode(b"caf\xE9\n").unwrap();
    assert_eq!(w.encode("f", "5 €\n", &mut none).unwrap(), b"5 \x80\n");
}

#[test]
fn a_declaration_decides_what_content_leaves_open() {
    // 0x93 is a curly quote in windows-1252 and a C1 control in ISO-8859-1.
    let bytes = b"\x93quoted\x94 caf\xE9\n";
    let f = TextFile::decode("f", bytes, &mut declared("latin1")).unwrap();
    assert_eq!(f.body, "\u{93}quoted\u{94} café\n");
    assert_eq!(f.declared.as_deref(), Some(".editorconfig [*] charset"));
    assert_eq!(decode(bytes).unwrap().body, "“quoted” café\n");
    // UTF-8 content is UTF-8 whatever is declared; a BOM decides over a declaration.
    assert_eq!(
        TextFile::decode("f", "é\n".as_bytes(), &mut declared("latin1"))
            .unwrap()
            .encoding,
        Encoding::Utf8
    );
    let le = [b"\xFF\xFE".to_vec(), utf16("x\n", false)].concat();
    assert_eq!(
        TextFile::decode("f", &le, &mut declared("latin1"))
            .unwrap()
            .encoding,
        Encoding::Utf16Le
    );
    // `utf-16` alone: the content tells the byte order.
    let be = utf16("é\nabc\n", true);
    let f = TextFile::decode("f", &be, &mut declared("utf-16")).unwrap();
    assert_eq!(
        (f.encoding, f.body.as_str()),
        (Encoding::Utf16Be, "é\nabc\n")
    );
    // Declared UTF-16LE, bytes that cannot be: refused with the declaration named.
    let e = TextFile::decode("f", b"\x00\xD8\x41", &mut declared("utf-16le")).unwrap_err();
    assert_eq!(e.code, ErrorCode::EncodingError);
    assert!(
        e.message.contains("utf-16le, as .editorconfig"),
        "{}",
        e.message
    );
    // A declaration does not make binary data text.
    assert_eq!(
        TextFile::decode("f", b"\xE9\0\x01", &mut declared("latin1"))
            .unwrap_err()
            .code,
        ErrorCode::UnsupportedBinary
    );
}

#[test]
fn an_ascii_file_takes_its_declared_encoding_for_new_characters() {
    let f = decode(b"plain\n").unwrap();
    assert!(f.open);
    assert_eq!(
        f.encode("f", "plain ü\n", &mut declared("latin1")).unwrap(),
        b"plain \xFC\n"
    );
    assert_eq!(
        f.encode("f", "plain ü\n", &mut none).unwrap(),
        "plain ü\n".as_bytes()
    );
    // Declared UTF-16 cannot be what ASCII bytes are: the file stays UTF-8.
    assert_eq!(
        f.encode("f", "ü\n", &mut declared("utf-16le")).unwrap(),
        "ü\n".as_bytes()
    );
    // ASCII text does not ask.
    let mut asked = false;
    f.encode("f", "still ascii\n", &mut || {
        asked = true;
        None
    })
    .unwrap();
    assert!(!asked);
}

#[test]
fn line_numbers_of_offsets() {
    assert_eq!(line_of("a\nb\nc", 0), 1);
    assert_eq!(line_of("a\nb\nc", 4), 3);
    assert_eq!(to_crlf("a\nb\r\n"), "a\r\nb\r\n");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]

    /// Whatever the bytes and whatever is declared: decoding never panics, and a file that
    /// decodes is written back byte for byte through its LF view (lines end in LF, CRLF or
    /// either, and may end in a CR of their own).
    #[test]
    fn what_decodes_writes_back_byte_for_byte(
        lines in proptest::collection::vec(
            proptest::collection::vec(
                proptest::prop_oneof![
                    4 => proptest::prelude::any::<u8>(),
                    4 => 0x20u8..0x7F,
                    1 => proptest::prelude::Just(b'\r'),
                ],
                0..12,
            ),
            0..8,
        ),
        crlf in 0usize..3,
        mark in 0usize..5,
        label in 0usize..8,
    ) {
        let marks: [&[u8]; 5] = [b"", b"\xEF\xBB\xBF", b"\xFF\xFE", b"\xFE\xFF", b"\xFF\xFE\0\0"];
        let labels = ["", "latin1", "windows-1252", "utf-16le", "utf-16be", "shift_jis", "utf-32", "koi8-r"];
        let mut input = marks[mark].to_vec();
        for (k, line) in lines.iter().enumerate() {
            input.extend(line.iter().filter(|&&b| b != b'\n'));
            let cr = crlf == 1 || (crlf == 2 && k % 2 == 0);
            input.extend_from_slice(if cr { b"\r\n" } else { b"\n" });
        }
        let mut decl: Box<dyn FnMut() -> Option<Declared>> = if labels[label].is_empty() {
            Box::new(none)
        } else {
            Box::new(declared(labels[label]))
        };
        if let Ok(f) = TextFile::decode("f", &input, &mut *decl) {
            let back = f.encode("f", &f.lf_view(), &mut *decl).unwrap();
            proptest::prop_assert_eq!(back, input);
        }
    }
}
