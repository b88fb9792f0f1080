//! Files search reads as text in another encoding than UTF-8, judged by content alone
//! (search reads no `.editorconfig` or `.gitattributes`).
//!
//! An ordinary file costs what it always did: its first bytes are looked at for a mark and
//! a NUL (which the binary check needed anyway), and nothing else. UTF-16 and UTF-32 text
//! is decoded whole. windows-1252 text is decoded only when it matters: when the query
//! could match one of its characters above 0x7F (`text::encoding::reach`), or when a line
//! to show is not UTF-8; for any other query its bytes match on the same lines as its
//! text, since its ASCII characters are their own bytes and its others never form UTF-8.

use crate::text::encoding::detect::{self, WINDOW};
use crate::text::encoding::stream::decode_lossy;
use crate::text::encoding::WINDOWS_1252;

/// Content that is binary data.
#[derive(Debug)]
pub struct Binary;

/// The decoded text of UTF-16 or UTF-32 content; `Ok(None)` for content to search as it
/// is, [`Binary`] for NUL bytes that are no wide text.
pub fn wide_text(buf: &[u8]) -> Result<Option<String>, Binary> {
    let window = &buf[..buf.len().min(WINDOW)];
    let marked = detect::bom(window).is_some_and(|(e, _)| e.is_wide());
    if !marked && memchr::memchr(0, window).is_none() {
        return Ok(None);
    }
    match detect::wide(buf, false) {
        Some((encoding, bom)) => Ok(Some(decode_lossy(encoding, &buf[bom..]).0)),
        None => Err(Binary),
    }
}

/// The text of content that is not UTF-8 and surely windows-1252.
pub fn western_text(buf: &[u8]) -> Option<String> {
    if crate::text::bytes::is_ascii(buf)
        || std::str::from_utf8(buf).is_ok()
        || !detect::western(buf)
    {
        return None;
    }
    Some(decode_lossy(WINDOWS_1252, buf).0)
}
