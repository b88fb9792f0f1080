//! Text files as the mutation tools see them: UTF-8 with an optional BOM, in one line-ending
//! style. Edits work on an LF view of a CRLF file and are written back in CRLF, so that an
//! agent never has to type `\r` and never corrupts a Windows file.

use crate::api::LineEnding;
use crate::error::{ErrorCode, ToolError, ToolResult};

const BOM: &str = "\u{feff}";

/// A decoded text file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextFile {
    /// Content without the BOM, in the file's own line endings.
    pub body: String,
    pub bom: bool,
    pub ending: LineEnding,
}

impl TextFile {
    /// Decodes bytes as UTF-8 text.
    ///
    /// # Errors
    /// `UNSUPPORTED_BINARY` for content with NUL bytes, `ENCODING_ERROR` for invalid UTF-8.
    pub fn decode(path: &str, bytes: &[u8]) -> ToolResult<TextFile> {
        if crate::rules::classify::looks_binary(bytes) {
            return Err(ToolError::new(
                ErrorCode::UnsupportedBinary,
                format!(
                    "'{path}' holds binary data; only text files can be changed with this tool"
                ),
            )
            .with_path(path));
        }
        let text = std::str::from_utf8(bytes).map_err(|e| {
            ToolError::new(
                ErrorCode::EncodingError,
                format!(
                    "'{path}' is not valid UTF-8 (first bad byte at offset {}); it cannot be edited as text without corrupting it",
                    e.valid_up_to()
                ),
            )
            .with_path(path)
        })?;
        let (bom, body) = match text.strip_prefix(BOM) {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        Ok(TextFile {
            ending: ending_of(body),
            body: body.to_string(),
            bom,
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

    /// Encodes an LF-view body back in this file's style (BOM and line endings).
    pub fn encode(&self, lf_body: &str) -> Vec<u8> {
        let body = if self.ending == LineEnding::Crlf {
            to_crlf(lf_body)
        } else {
            lf_body.to_string()
        };
        let mut out = Vec::with_capacity(body.len() + 3);
        if self.bom {
            out.extend_from_slice(BOM.as_bytes());
        }
        out.extend_from_slice(body.as_bytes());
        out
    }
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
mod tests {
    use super::*;

    #[test]
    fn crlf_files_round_trip_through_the_lf_view() {
        let f = TextFile::decode("f", b"\xEF\xBB\xBFa\r\nb\r\n").unwrap();
        assert!(f.bom);
        assert_eq!(f.ending, LineEnding::Crlf);
        assert_eq!(f.lf_view(), "a\nb\n");
        assert_eq!(f.encode("a\nc\nb\n"), b"\xEF\xBB\xBFa\r\nc\r\nb\r\n");
    }

    #[test]
    fn mixed_files_are_left_as_they_are() {
        let f = TextFile::decode("f", b"a\r\nb\n").unwrap();
        assert_eq!(f.ending, LineEnding::Mixed);
        assert_eq!(f.lf_view(), "a\r\nb\n");
        assert_eq!(f.encode("a\r\nb\n"), b"a\r\nb\n");
    }

    #[test]
    fn binary_and_invalid_utf8_are_refused() {
        assert_eq!(
            TextFile::decode("f", b"a\0b").unwrap_err().code,
            ErrorCode::UnsupportedBinary
        );
        assert_eq!(
            TextFile::decode("f", b"caf\xE9").unwrap_err().code,
            ErrorCode::EncodingError
        );
    }

    #[test]
    fn line_numbers_of_offsets() {
        assert_eq!(line_of("a\nb\nc", 0), 1);
        assert_eq!(line_of("a\nb\nc", 4), 3);
        assert_eq!(to_crlf("a\nb\r\n"), "a\r\nb\r\n");
    }
}
