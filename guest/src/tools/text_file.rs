//! Text files as the mutation tools see them: in their own encoding, with their own BOM,
//! in one line-ending style. Edits work on an LF view of a CRLF file and are written back
//! in CRLF, so that an agent never has to type `\r` and never corrupts a Windows file.
//!
//! Which encoding a file is in ([`form_of`]): a byte-order mark decides; else UTF-8 without
//! a NUL byte is UTF-8; else the encoding the repository declares for the file
//! (`.gitattributes` `working-tree-encoding`, `.editorconfig` `charset`: see
//! `conventions`); else what its content surely is (`text::encoding::detect`: UTF-16
//! without a mark, windows-1252). A file of plain ASCII is open: the declared encoding,
//! if any, decides how new text that is not ASCII is written into it.
//!
//! Decoding is strict and encoding refuses what the encoding cannot hold, so a change
//! never writes U+FFFD for bytes it could not read nor `?` for a character: it is refused
//! (`ENCODING_ERROR`) and nothing is written. Every character outside a change is written
//! back as the same bytes (the legacy tables are checked to round-trip when decoding).

use crate::api::LineEnding;
use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::text::encoding::detect::{self, Verdict};
use crate::text::encoding::{Encoding, Label};

const BOM: char = '\u{feff}';

/// An encoding the repository declares for a file, and the rule that declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declared {
    pub label: Label,
    /// The file and line or section, for messages (`.editorconfig [*.c] charset = latin1`).
    pub source: String,
}

/// Asks for the file's declared encoding (read from the repository only when needed).
pub type Declare<'a> = &'a mut dyn FnMut() -> Option<Declared>;

/// How a file's bytes are to be taken as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Form {
    pub encoding: Encoding,
    /// Length of the byte-order mark the bytes start with (0 for none).
    pub bom: usize,
    /// The declaration that chose the encoding, if one did.
    pub declared: Option<String>,
}

impl Form {
    /// UTF-8 without a BOM.
    pub fn utf8() -> Form {
        Form::of(Encoding::Utf8, 0)
    }

    fn of(encoding: Encoding, bom: usize) -> Form {
        Form {
            encoding,
            bom,
            declared: None,
        }
    }
}

/// The error for content that is binary.
pub fn binary_error(path: &str) -> ToolError {
    ToolError::new(
        ErrorCode::UnsupportedBinary,
        format!("'{path}' holds binary data; only text files can be changed with this tool"),
    )
    .with_path(path)
}

/// How to read `bytes` (the whole file when `whole`, else its first part): see the module
/// docs. Content that is not UTF-8 and surely nothing else is taken as UTF-8, which strict
/// decoding then refuses and reading shows with replacements.
///
/// # Errors
/// `UNSUPPORTED_BINARY` for binary content (a NUL byte in the first 8 KiB that no wide
/// encoding explains, or U+0000 in a marked or declared one).
pub fn form_of(path: &str, bytes: &[u8], whole: bool, declared: Declare<'_>) -> ToolResult<Form> {
    let window = &bytes[..bytes.len().min(detect::WINDOW)];
    if detect::bom(window).is_some() {
        return match detect::detect(bytes, whole) {
            Verdict::Text { encoding, bom } => Ok(Form::of(encoding, bom)),
            _ => Err(binary_error(path)),
        };
    }
    if detect::plain_utf8(bytes, whole) {
        return Ok(Form::of(Encoding::Utf8, 0));
    }
    if let Some(d) = declared() {
        let mut encoding = d.label.encoding;
        if d.label.any_order {
            // `utf-16` or `utf-32` alone: the content says which byte order, if it can.
            if let Some((found, _)) = detect::wide(bytes, !whole) {
                if found.unit_width() == encoding.unit_width() {
                    encoding = found;
                }
            }
        }
        if has_nul(encoding, window) {
            return Err(binary_error(path));
        }
        return Ok(Form {
            encoding,
            bom: 0,
            declared: Some(d.source),
        });
    }
    match detect::detect(bytes, whole) {
        Verdict::Text { encoding, bom } => Ok(Form::of(encoding, bom)),
        Verdict::Binary => Err(binary_error(path)),
        Verdict::Unknown => Ok(Form::of(Encoding::Utf8, 0)),
    }
}

/// Whether the window holds U+0000 in `encoding` (whole code units of a wide one).
fn has_nul(encoding: Encoding, window: &[u8]) -> bool {
    let w = encoding.unit_width();
    window.chunks_exact(w).any(|u| u.iter().all(|&b| b == 0))
}

/// A decoded text file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextFile {
    /// Content without the BOM, in the file's own line endings.
    pub body: String,
    pub bom: bool,
    pub ending: LineEnding,
    pub encoding: Encoding,
    /// The declaration that chose the encoding, if one did.
    pub declared: Option<String>,
    /// The file is ASCII without a BOM: the declared encoding, if any, writes new text.
    pub open: bool,
}

impl TextFile {
    /// Decodes a whole file's bytes in its encoding (see [`form_of`]).
    ///
    /// # Errors
    /// `UNSUPPORTED_BINARY` for binary content, `ENCODING_ERROR` for bytes not valid in
    /// the file's encoding (or that would not be written back as they are).
    pub fn decode(path: &str, bytes: &[u8], declared: Declare<'_>) -> ToolResult<TextFile> {
        // Ordinary UTF-8 (with or without its BOM) in one pass; any other mark makes it
        // invalid UTF-8, and it goes the long way.
        let window = &bytes[..bytes.len().min(detect::WINDOW)];
        if memchr::memchr(0, window).is_none() {
            let utf8_bom = Encoding::Utf8.bom();
            let bom = bytes.starts_with(utf8_bom);
            let rest = &bytes[if bom { utf8_bom.len() } else { 0 }..];
            if let Ok(text) = std::str::from_utf8(rest) {
                return Ok(TextFile {
                    ending: ending_of(text),
                    body: text.to_string(),
                    bom,
                    encoding: Encoding::Utf8,
                    declared: None,
                    open: !bom && crate::text::bytes::is_ascii(rest),
                });
            }
        }
        let form = form_of(path, bytes, true, declared)?;
        let body = form.encoding.decode(&bytes[form.bom..]).map_err(|at| {
            let at = at + form.bom;
            let msg = match (&form.declared, form.encoding) {
                (None, Encoding::Utf8) => format!(
                    "'{path}' is not valid UTF-8 (first bad byte at offset {at}) and not surely any other encoding; it cannot be edited as text without corrupting it (if it is in another encoding, declare it with .editorconfig charset or .gitattributes working-tree-encoding)"
                ),
                (declared, e) => format!(
                    "'{path}' is not valid {}{} (first bad byte at offset {at}); it cannot be edited as text without corrupting it",
                    e.name(),
                    declared.as_ref().map(|d| format!(", as {d} declares")).unwrap_or_default()
                ),
            };
            ToolError::new(ErrorCode::EncodingError, msg)
                .with_path(path)
                .with_detail("encoding", form.encoding.name())
                .with_detail("offset", at.to_string())
        })?;
        Ok(TextFile {
            ending: ending_of(&body),
            body,
            bom: form.bom > 0,
            open: form.encoding == Encoding::Utf8 && form.bom == 0 && bytes.is_ascii(),
            encoding: form.encoding,
            declared: form.declared,
        })
    }

    /// The body with every CRLF turned into LF when the file is CRLF throughout;
    /// otherwise the body as it is.
    pub fn lf_view(&self) -> String {
        if self.ending == LineEnding::Crlf {
            self.body.replace("\r\n", "\n")
        } else {
            self.body.clone()
        }
    }

    /// Encodes an LF-view body back in this file's style: BOM, line endings (every LF of
    /// a CRLF file's view was a CRLF) and encoding.
    ///
    /// # Errors
    /// `ENCODING_ERROR` naming the first character the encoding cannot hold.
    pub fn encode(&self, path: &str, lf_body: &str, declared: Declare<'_>) -> ToolResult<Vec<u8>> {
        let body = if self.ending == LineEnding::Crlf {
            lf_body.replace('\n', "\r\n")
        } else {
            lf_body.to_string()
        };
        let text = if self.bom {
            format!("{BOM}{body}")
        } else {
            body
        };
        self.encode_whole(path, text, declared)
    }

    /// Encodes text as it stands (a BOM only where it starts with U+FEFF) in this file's
    /// encoding, or, when the file was plain ASCII and the text is not, in the encoding
    /// the repository declares for it.
    ///
    /// # Errors
    /// `ENCODING_ERROR` naming the first character the encoding cannot hold.
    pub fn encode_whole(
        &self,
        path: &str,
        text: String,
        declared: Declare<'_>,
    ) -> ToolResult<Vec<u8>> {
        let mut encoding = self.encoding;
        let mut source = self.declared.clone();
        if self.open && !text.is_ascii() {
            if let Some(d) = declared() {
                // An ASCII file is the same bytes in every ASCII-compatible encoding; its
                // declared one decides how the new characters are written.
                if d.label.encoding.ascii_compatible() {
                    encoding = d.label.encoding;
                    source = Some(d.source);
                }
            }
        }
        encode_as(path, encoding, source.as_deref(), text)
    }
}

/// `text` in `encoding`, no BOM added.
///
/// # Errors
/// `ENCODING_ERROR` naming the first character the encoding cannot hold, its line in
/// `text`, and the declaration that chose the encoding.
pub fn encode_as(
    path: &str,
    encoding: Encoding,
    declared: Option<&str>,
    text: String,
) -> ToolResult<Vec<u8>> {
    if encoding == Encoding::Utf8 {
        return Ok(text.into_bytes());
    }
    encoding.encode(&text).map_err(|c| {
        let line = text.find(c).map_or(1, |at| line_of(&text, at));
        let name = encoding.name();
        let why = declared
            .map(|d| format!(", as {d} declares"))
            .unwrap_or_default();
        ToolError::new(
            ErrorCode::EncodingError,
            format!(
                "'{path}' is {name} text{why}, and {name} has no character '{}' ({}, line {line} of the new text); nothing was written. Leave the character out or write it another way (in ASCII, or an escape the file's language knows)",
                crate::text::visible::visible(&c.to_string()),
                code_point(c)
            ),
        )
        .with_path(path)
        .with_detail("encoding", name)
        .with_detail("character", code_point(c))
        .with_detail("line", line.to_string())
    })
}

/// `U+00E9`.
fn code_point(c: char) -> String {
    format!("U+{:04X}", u32::from(c))
}

/// The line-ending style of a text.
pub fn ending_of(text: &str) -> LineEnding {
    let bytes = text.as_bytes();
    let (mut crlf, mut lf) = (0usize, 0usize);
    for i in memchr::memchr_iter(b'\n', bytes) {
        if i > 0 && bytes[i - 1] == b'\r' {
            crlf += 1;
        } else {
            lf += 1;
        }
    }
    match (crlf > 0, lf > 0) {
        (true, false) => LineEnding::Crlf,
        (false, true) => LineEnding::Lf,
        (true, true) => LineEnding::Mixed,
        (false, false) => LineEnding::None,
    }
}

/// LF to CRLF, leaving existing CRLF alone.
pub fn to_crlf(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 16);
    let mut prev = '\0';
    for c in text.chars() {
        if c == '\n' && prev != '\r' {
            out.push('\r');
        }
        out.push(c);
        prev = c;
    }
    out
}

/// 1-based line number of a byte offset.
pub fn line_of(text: &str, offset: usize) -> usize {
    memchr::memchr_iter(b'\n', &text.as_bytes()[..offset.min(text.len())]).count() + 1
}

#[cfg(test)]
mod tests;
