//! Which encoding a file's bytes are in, judged by content alone, and conservatively: a
//! guess that could be wrong is no guess.
//!
//! 1. A byte-order mark decides: UTF-8, UTF-32 (LE before UTF-16 LE, whose mark it starts
//!    with), UTF-16. A UTF-16 or UTF-32 file is still binary when its first
//!    [`WINDOW`] bytes hold U+0000.
//! 2. A NUL byte in the window means binary, unless the window reads as UTF-16 without a
//!    mark in exactly one byte order, as text: no U+0000, no control character but tab,
//!    line feed, form feed and carriage return, no broken pair, and at least half of its
//!    characters ASCII (so that the order's zero bytes fall where ASCII puts them).
//! 3. Valid UTF-8 is UTF-8.
//! 4. Otherwise windows-1252, when the bytes look like Western legacy text: no control
//!    character but those four, none of the five bytes windows-1252 leaves undefined, no
//!    valid multi-byte UTF-8 sequence at all (text mostly UTF-8 with one stray byte is
//!    broken UTF-8, not Latin-1), and at most three bytes in ten outside ASCII.
//! 5. Anything else is [`Verdict::Unknown`]: not UTF-8, and no encoding it surely is.

use super::{Encoding, WINDOWS_1252};

/// How many leading bytes the checks that need not read everything look at (the same
/// window as the binary check of classification).
pub const WINDOW: usize = 8192;

/// What bytes are, by content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Text in `encoding`, after a byte-order mark of `bom` bytes (0 for none).
    Text { encoding: Encoding, bom: usize },
    /// Binary data.
    Binary,
    /// Not valid UTF-8, and not surely any other encoding.
    Unknown,
}

/// The byte-order mark `bytes` start with: its encoding and its length.
pub fn bom(bytes: &[u8]) -> Option<(Encoding, usize)> {
    [
        Encoding::Utf8,
        Encoding::Utf32Le,
        Encoding::Utf32Be,
        Encoding::Utf16Le,
        Encoding::Utf16Be,
    ]
    .into_iter()
    .find(|e| bytes.starts_with(e.bom()))
    .map(|e| (e, e.bom().len()))
}

/// Whether `bytes` are UTF-8 without a NUL in the window (a prefix of a longer file when
/// not `whole`: a character cut at its end does not count against it). The first check
/// every reader makes: an ordinary file answers yes, and nothing more is looked at.
pub fn plain_utf8(bytes: &[u8], whole: bool) -> bool {
    let window = &bytes[..bytes.len().min(WINDOW)];
    if memchr::memchr(0, window).is_some() {
        return false;
    }
    if crate::text::bytes::is_utf8(bytes) {
        return true;
    }
    // A prefix may end inside a character.
    !whole && std::str::from_utf8(bytes).is_err_and(|e| e.error_len().is_none())
}

/// What `bytes` (a whole file when `whole`, else its first part) are.
pub fn detect(bytes: &[u8], whole: bool) -> Verdict {
    if let Some((encoding, bom)) = wide(bytes, !whole) {
        return Verdict::Text { encoding, bom };
    }
    let window = &bytes[..bytes.len().min(WINDOW)];
    if bom(window).is_some_and(|(e, _)| e.is_wide()) || memchr::memchr(0, window).is_some() {
        return Verdict::Binary;
    }
    if let Some((encoding, n)) = bom(window) {
        // UTF-8, with no NUL in the window.
        return Verdict::Text { encoding, bom: n };
    }
    if plain_utf8(bytes, whole) {
        return Verdict::Text {
            encoding: Encoding::Utf8,
            bom: 0,
        };
    }
    if western(bytes) {
        Verdict::Text {
            encoding: WINDOWS_1252,
            bom: 0,
        }
    } else {
        Verdict::Unknown
    }
}

/// The UTF-16 or UTF-32 text `bytes` hold (judged by their first [`WINDOW`] bytes, `cut`
/// when that is not all of the file), NUL bytes and all: marked, or UTF-16 in exactly one
/// plausible byte order. What classification and sniffing ask before calling NUL bytes
/// binary; ordinary text answers after a look at its first bytes and one `memchr`.
pub fn wide(bytes: &[u8], cut: bool) -> Option<(Encoding, usize)> {
    let cut = cut || bytes.len() > WINDOW;
    let window = &bytes[..bytes.len().min(WINDOW)];
    if let Some((encoding, n)) = bom(window) {
        return (encoding.is_wide() && wide_text(encoding, &window[n..])).then_some((encoding, n));
    }
    memchr::memchr(0, window)?;
    utf16_unmarked(window, cut).map(|e| (e, 0))
}

/// The code units of `bytes` in `encoding` (UTF-16 or UTF-32), whole units only.
fn units(encoding: Encoding, bytes: &[u8]) -> Vec<u32> {
    match encoding {
        Encoding::Utf16Le => bytes
            .chunks_exact(2)
            .map(|p| u32::from(u16::from_le_bytes([p[0], p[1]])))
            .collect(),
        Encoding::Utf16Be => bytes
            .chunks_exact(2)
            .map(|p| u32::from(u16::from_be_bytes([p[0], p[1]])))
            .collect(),
        Encoding::Utf32Le => bytes
            .chunks_exact(4)
            .map(|q| u32::from_le_bytes([q[0], q[1], q[2], q[3]]))
            .collect(),
        Encoding::Utf32Be => bytes
            .chunks_exact(4)
            .map(|q| u32::from_be_bytes([q[0], q[1], q[2], q[3]]))
            .collect(),
        _ => Vec::new(),
    }
}

/// The characters of `bytes` in a wide encoding; `None` when a unit is not one (a broken
/// surrogate pair, a value past U+10FFFF), except for an incomplete pair or unit at the
/// end of a `cut` window.
fn wide_chars(encoding: Encoding, bytes: &[u8], cut: bool) -> Option<Vec<char>> {
    let width = if matches!(encoding, Encoding::Utf16Le | Encoding::Utf16Be) {
        2
    } else {
        4
    };
    if !cut && !bytes.len().is_multiple_of(width) {
        return None;
    }
    let mut u = units(encoding, bytes);
    if width == 2 {
        if cut && u.last().is_some_and(|&x| (0xD800..0xDC00).contains(&x)) {
            u.pop();
        }
        char::decode_utf16(u.into_iter().map(|x| x as u16))
            .collect::<Result<Vec<char>, _>>()
            .ok()
    } else {
        u.into_iter().map(char::from_u32).collect()
    }
}

/// A marked UTF-16 or UTF-32 window is text unless it holds U+0000 (a broken unit does
/// not make it binary: strict decoding refuses it with its offset).
fn wide_text(encoding: Encoding, body: &[u8]) -> bool {
    !units(encoding, body).contains(&0)
}

/// Tab, line feed, form feed, carriage return: the control characters text may hold
/// where detection has to guess.
fn allowed_control(c: u32) -> bool {
    matches!(c, 0x09 | 0x0A | 0x0C | 0x0D)
}

/// UTF-16 without a mark: the one byte order in which the window reads as text.
fn utf16_unmarked(window: &[u8], cut: bool) -> Option<Encoding> {
    let reads = |e| {
        wide_chars(e, window, cut).is_some_and(|cs| {
            let plain = cs
                .iter()
                .all(|&c| !(u32::from(c) < 0x20 && !allowed_control(c.into()) || c == '\x7f'));
            let ascii = cs.iter().filter(|c| c.is_ascii()).count();
            plain && !cs.is_empty() && ascii * 2 >= cs.len()
        })
    };
    match (reads(Encoding::Utf16Le), reads(Encoding::Utf16Be)) {
        (true, false) => Some(Encoding::Utf16Le),
        (false, true) => Some(Encoding::Utf16Be),
        _ => None,
    }
}

/// Whether bytes that are not UTF-8 look like Western legacy text (windows-1252).
pub fn western(bytes: &[u8]) -> bool {
    let mut high = 0usize;
    for &b in bytes {
        match b {
            0x09 | 0x0A | 0x0C | 0x0D => {}
            0x00..=0x1F | 0x7F | 0x81 | 0x8D | 0x8F | 0x90 | 0x9D => return false,
            0x80..=0xFF => high += 1,
            _ => {}
        }
    }
    high > 0 && high * 10 <= bytes.len() * 3 && bytes.utf8_chunks().all(|c| c.valid().is_ascii())
}
