//! Files search reads as text in another encoding than UTF-8.
//!
//! An ordinary file costs what it always did: its first bytes are looked at for a mark and
//! a NUL (which the binary check needed anyway), and nothing else. UTF-16 and UTF-32 text
//! is decoded whole. Text that is not UTF-8 in an ASCII-compatible encoding (windows-1252
//! as detection finds it, or what the repository declares) is decoded only when it
//! matters: when the query could match a character beyond ASCII
//! (`text::encoding::reach`), or when a line to show is not UTF-8; for any other query its
//! bytes match on the same lines as its text, since its ASCII characters are their own
//! bytes. The repository's declarations (`.editorconfig`, `.gitattributes`) are read only
//! for such text that detection leaves open, each configuration file once per call. NUL
//! bytes that are no marked UTF-16 or UTF-32, nor unmarked UTF-16 in one plausible byte
//! order, are binary whatever is declared (a declaration is not looked up for every binary
//! file a search meets; reads and changes do honour a declared UTF-16).

use crate::audit::CallLog;
use crate::rules::path::LogicalPath;
use crate::text::encoding::detect::{self, WINDOW};
use crate::text::encoding::stream::decode_lossy;
use crate::text::encoding::WINDOWS_1252;
use crate::tools::conventions::Seen;
use crate::tools::session::Session;

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
    if crate::rules::classify::looks_binary(buf) {
        return Err(Binary);
    }
    match detect::wide(buf, false) {
        Some((encoding, bom)) => Ok(Some(decode_lossy(encoding, &buf[bom..]).0)),
        None => Ok(None),
    }
}

/// The text of content that is not UTF-8: windows-1252 when it surely is, else in the
/// encoding the repository declares for `path` (its configuration read once per call, in
/// `seen`). With `window`, content whose first 8 KiB are UTF-8 is taken for UTF-8 without
/// a look further (as the binary check looks no further for a NUL): what a query beyond
/// ASCII costs stays bounded per file.
pub fn legacy_text(
    s: &Session,
    path: &LogicalPath,
    buf: &[u8],
    window: bool,
    seen: &mut Seen,
) -> Option<String> {
    if window && detect::plain_utf8(&buf[..buf.len().min(WINDOW)], buf.len() <= WINDOW) {
        return None;
    }
    if crate::text::bytes::is_utf8(buf) {
        return None;
    }
    if detect::western(buf) {
        return Some(decode_lossy(WINDOWS_1252, buf).0);
    }
    // The configuration's reads are not listed, as the walk's own reads are not.
    let mut log = CallLog::default();
    let mut declare = || crate::tools::conventions::declared_encoding_in(s, &mut log, path, seen);
    let form = crate::tools::text_file::form_of(path.as_str(), buf, true, &mut declare).ok()?;
    form.declared
        .map(|_| decode_lossy(form.encoding, &buf[form.bom..]).0)
}
