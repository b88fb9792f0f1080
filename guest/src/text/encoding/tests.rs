use super::detect::{detect, wide, Verdict};
use super::stream::{decode_lossy, Stream};
use super::*;

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

#[test]
fn windows_1252_maps_every_byte_and_writes_each_back() {
    let all: Vec<u8> = (0..=255u8).collect();
    let text = WINDOWS_1252.decode(&all).unwrap();
    assert_eq!(text.chars().count(), 256);
    assert_eq!(WINDOWS_1252.encode(&text).unwrap(), all);
    // The curly quotes and the euro sign are where windows-1252 puts them; the five bytes
    // it leaves undefined come back as the C1 controls of the same number.
    assert!(text.contains("\u{201c}\u{201d}") && text.contains('€'));
    assert_eq!(WINDOWS_1252.decode(b"\x81\x9d").unwrap(), "\u{81}\u{9d}");
}

#[test]
fn latin1_is_the_identity_and_refuses_what_it_lacks() {
    let all: Vec<u8> = (0..=255u8).collect();
    let text = Encoding::Latin1.decode(&all).unwrap();
    assert!(text
        .chars()
        .enumerate()
        .all(|(i, c)| u32::from(c) == i as u32));
    assert_eq!(Encoding::Latin1.encode(&text).unwrap(), all);
    assert_eq!(
        Encoding::Latin1.encode("Grüße"),
        Ok(b"Gr\xFC\xDFe".to_vec())
    );
    assert_eq!(Encoding::Latin1.encode("Łódź"), Err('Ł'));
    // windows-1252 has the euro sign, ISO-8859-1 does not.
    assert_eq!(Encoding::Latin1.encode("5 €"), Err('€'));
    assert_eq!(WINDOWS_1252.encode("5 €"), Ok(b"5 \x80".to_vec()));
    assert_eq!(WINDOWS_1252.encode("→"), Err('→'));
}

#[test]
fn utf16_and_utf32_round_trip_and_name_the_first_bad_byte() {
    let text = "a\r\nü€𝄞\n";
    for (e, big) in [(Encoding::Utf16Le, false), (Encoding::Utf16Be, true)] {
        let bytes = utf16(text, big);
        assert_eq!(e.encode(text).unwrap(), bytes);
        assert_eq!(e.decode(&bytes).unwrap(), text);
        let mut odd = bytes.clone();
        odd.push(b'x');
        assert_eq!(e.decode(&odd), Err(bytes.len()));
        // A lone high surrogate after "a".
        let lone = [utf16("a", big), utf16("b", big)].concat();
        let mut broken = lone[..2].to_vec();
        broken.extend_from_slice(&if big { [0xD8, 0x00] } else { [0x00, 0xD8] });
        broken.extend_from_slice(&lone[2..]);
        assert_eq!(e.decode(&broken), Err(2));
    }
    for e in [Encoding::Utf32Le, Encoding::Utf32Be] {
        let bytes = e.encode(text).unwrap();
        assert_eq!(bytes.len(), 4 * text.chars().count());
        assert_eq!(e.decode(&bytes).unwrap(), text);
        let mut bad = bytes.clone();
        bad.extend_from_slice(
            &e.encode("x")
                .unwrap()
                .iter()
                .map(|_| 0xFF)
                .collect::<Vec<_>>(),
        );
        assert_eq!(e.decode(&bad), Err(bytes.len()));
        assert_eq!(e.decode(&bytes[..5]), Err(4));
    }
}

#[test]
fn strict_decoding_names_the_offset_and_never_replaces() {
    assert_eq!(Encoding::Utf8.decode(b"caf\xE9!"), Err(3));
    // Shift_JIS: a lead byte followed by a byte that cannot trail it.
    let sjis = Encoding::Table(encoding_rs::SHIFT_JIS);
    assert_eq!(sjis.decode(b"ab\x81\x20"), Err(2));
    assert!(!sjis.decode(b"ab").unwrap().contains('\u{fffd}'));
}

#[test]
fn a_table_sequence_that_would_be_written_back_otherwise_is_refused() {
    // Shift_JIS maps some byte pairs to characters it writes with other bytes (the IBM
    // and NEC extensions): decoding such a file and writing it back would change it.
    let sjis = Encoding::Table(encoding_rs::SHIFT_JIS);
    let mut refused = 0;
    for lead in 0x81..=0xFCu8 {
        for trail in 0x40..=0xFCu8 {
            let pair = [lead, trail];
            let (text, replaced) = decode_lossy(sjis, &pair);
            if replaced {
                continue;
            }
            let back = sjis.encode(&text).ok();
            match sjis.decode(&pair) {
                Ok(t) => assert_eq!((back, t), (Some(pair.to_vec()), text)),
                Err(at) => {
                    assert_ne!(back, Some(pair.to_vec()));
                    assert!(at < 2);
                    refused += 1;
                }
            }
        }
    }
    assert!(refused > 0, "no Shift_JIS pair maps two ways");
}

#[test]
fn declared_names() {
    let enc = |l: &str| Encoding::for_label(l).map(|l| (l.encoding, l.bom, l.any_order));
    assert_eq!(enc("latin1"), Some((Encoding::Latin1, false, false)));
    assert_eq!(enc(" ISO-8859-1 "), Some((Encoding::Latin1, false, false)));
    assert_eq!(enc("utf-8"), Some((Encoding::Utf8, false, false)));
    assert_eq!(enc("utf-8-bom"), Some((Encoding::Utf8, true, false)));
    assert_eq!(enc("utf-16le"), Some((Encoding::Utf16Le, false, false)));
    assert_eq!(enc("UTF-16BE-BOM"), Some((Encoding::Utf16Be, true, false)));
    assert_eq!(enc("UTF-16"), Some((Encoding::Utf16Le, true, true)));
    assert_eq!(enc("utf-32be"), Some((Encoding::Utf32Be, false, false)));
    assert_eq!(enc("CP1252"), Some((WINDOWS_1252, false, false)));
    assert_eq!(
        enc("Shift_JIS"),
        Some((Encoding::Table(encoding_rs::SHIFT_JIS), false, false))
    );
    for refused in [
        "ISO-2022-JP",
        "x-user-defined",
        "replacement",
        "latin1-bom",
        "utf-7",
        "",
    ] {
        assert_eq!(enc(refused), None, "{refused}");
    }
    assert_eq!(WINDOWS_1252.name(), "windows-1252");
    assert_eq!(Encoding::Latin1.name(), "iso-8859-1");
    assert_eq!(Encoding::Table(encoding_rs::SHIFT_JIS).name(), "shift_jis");
}

fn verdict(bytes: &[u8]) -> Verdict {
    detect(bytes, true)
}

fn text(encoding: Encoding, bom: usize) -> Verdict {
    Verdict::Text { encoding, bom }
}

#[test]
fn byte_order_marks_decide() {
    let le = [b"\xFF\xFE".to_vec(), utf16("Grüße\r\n", false)].concat();
    assert_eq!(verdict(&le), text(Encoding::Utf16Le, 2));
    let be = [b"\xFE\xFF".to_vec(), utf16("日本語\n", true)].concat();
    assert_eq!(verdict(&be), text(Encoding::Utf16Be, 2));
    let le32 = [
        b"\xFF\xFE\0\0".to_vec(),
        Encoding::Utf32Le.encode("hi\n").unwrap(),
    ]
    .concat();
    assert_eq!(verdict(&le32), text(Encoding::Utf32Le, 4));
    let be32 = [
        b"\0\0\xFE\xFF".to_vec(),
        Encoding::Utf32Be.encode("hi\n").unwrap(),
    ]
    .concat();
    assert_eq!(verdict(&be32), text(Encoding::Utf32Be, 4));
    assert_eq!(verdict(b"\xEF\xBB\xBFhi"), text(Encoding::Utf8, 3));
    // A mark does not make binary data text: U+0000 in the window, or a NUL after a
    // UTF-8 mark.
    assert_eq!(verdict(b"\xFF\xFEa\0\0\0b\0"), Verdict::Binary);
    assert_eq!(verdict(b"\xEF\xBB\xBFa\0b"), Verdict::Binary);
}

#[test]
fn unmarked_utf16_only_where_one_byte_order_reads_as_text() {
    assert_eq!(
        verdict(&utf16("fn main() {}\r\n", false)),
        text(Encoding::Utf16Le, 0)
    );
    assert_eq!(
        verdict(&utf16("Straße\n", true)),
        text(Encoding::Utf16Be, 0)
    );
    // Mostly not ASCII: either order could be text.
    assert_eq!(verdict(&utf16("ĀāĂăĄą", false)), Verdict::Binary);
    // Odd length, control characters, structures of small numbers: binary.
    let mut odd = utf16("abc", false);
    odd.push(b'x');
    assert_eq!(verdict(&odd), Verdict::Binary);
    assert_eq!(verdict(&utf16("a\u{1}b", false)), Verdict::Binary);
    assert_eq!(verdict(b"\x01\x00\x02\x00\x03\x00"), Verdict::Binary);
    assert_eq!(
        verdict(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10"),
        Verdict::Binary
    );
    assert_eq!(verdict(b"a\0"), text(Encoding::Utf16Le, 0));
    assert_eq!(verdict(b"\0\0\0\0"), Verdict::Binary);
}

#[test]
fn western_text_is_recognised_conservatively() {
    let c = b"/* Gr\xFC\xDFe aus M\xFCnchen */\nint x;\n";
    assert_eq!(verdict(c), text(WINDOWS_1252, 0));
    assert_eq!(
        verdict(b"\x93quoted\x94 and \x85 more text\r\n"),
        text(WINDOWS_1252, 0)
    );
    // Valid UTF-8 stays UTF-8, even when windows-1252 would read it too.
    assert_eq!(verdict("Grüße".as_bytes()), text(Encoding::Utf8, 0));
    // UTF-8 with one stray byte: broken UTF-8, not Latin-1.
    assert_eq!(
        verdict(&[b"Gr\xC3\xBC\xC3\x9Fe ".as_slice(), b"\xFF"].concat()),
        Verdict::Unknown
    );
    let stray = [
        b"caf".to_vec(),
        vec![0xE9],
        " und Grüße".as_bytes().to_vec(),
    ]
    .concat();
    assert_eq!(verdict(&stray), Verdict::Unknown);
    // Controls, bytes windows-1252 leaves undefined, or mostly high bytes: no guess.
    assert_eq!(verdict(b"caf\xE9\x1b[0m"), Verdict::Unknown);
    assert_eq!(verdict(b"caf\xE9 \x81"), Verdict::Unknown);
    assert_eq!(verdict(b"\xE9\xE8\xE0\xF9 ab"), Verdict::Unknown);
    let noise: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8 | 1)
        .collect();
    assert_ne!(verdict(&noise), text(WINDOWS_1252, 0));
}

#[test]
fn a_prefix_may_end_inside_a_character() {
    let s = "aé".as_bytes();
    assert_eq!(detect(&s[..2], false), text(Encoding::Utf8, 0));
    assert_eq!(detect(&s[..2], true), Verdict::Unknown);
    // A window cut inside a surrogate pair of unmarked UTF-16.
    let mut big = utf16(&"ab𝄞".repeat(3000), false);
    big.truncate(super::detect::WINDOW + 2);
    assert_eq!(detect(&big, false), text(Encoding::Utf16Le, 0));
    assert_eq!(wide(&big, true), Some((Encoding::Utf16Le, 0)));
    assert_eq!(wide(b"plain\n", false), None);
}

#[test]
fn streams_fed_in_pieces_decode_as_in_one_go() {
    let sample = "Grüße, “quoted” 𝄞 €\r\n";
    let cases = [
        Encoding::Utf8,
        Encoding::Utf16Le,
        Encoding::Utf16Be,
        Encoding::Utf32Le,
        Encoding::Utf32Be,
        WINDOWS_1252,
    ];
    for e in cases {
        let text = if e == WINDOWS_1252 {
            "Grüße, “quoted” €\r\n"
        } else {
            sample
        };
        let bytes = e.encode(text).unwrap();
        for size in 1..7 {
            let mut s = Stream::new(e);
            let mut out = String::new();
            let pieces: Vec<&[u8]> = bytes.chunks(size).collect();
            for (i, p) in pieces.iter().enumerate() {
                s.feed(p, i + 1 == pieces.len(), &mut out);
            }
            assert_eq!((out.as_str(), s.replaced()), (text, false), "{e:?} {size}");
        }
    }
    let latin = decode_lossy(Encoding::Latin1, b"M\xFCnchen");
    assert_eq!(latin, ("München".to_string(), false));
    // Broken input is replaced, and said to be.
    assert_eq!(
        decode_lossy(Encoding::Utf16Le, b"a\0b"),
        ("a\u{fffd}".to_string(), true)
    );
    assert_eq!(
        decode_lossy(Encoding::Utf32Be, b"\0\0\0a\xFF\xFF\xFF\xFF"),
        ("a\u{fffd}".to_string(), true)
    );
}
