//! Text encodings besides UTF-8: their names, byte-order marks, strict decoding, encoding
//! back, and (in `detect`) telling them apart by content.
//!
//! [`Encoding::for_label`] reads the names `.editorconfig` (`charset`) and `.gitattributes`
//! (`working-tree-encoding`) use. [`Encoding::decode`] is strict: it names the offset of
//! the first byte that is not valid, and never puts U+FFFD in place of one;
//! [`Encoding::encode`] names the first character the encoding cannot hold. The reads'
//! lenient decoding, chunk by chunk, is [`stream::Stream`].
//!
//! The legacy tables are those of the WHATWG Encoding Standard as the `encoding_rs` crate
//! keeps them. UTF-16 and UTF-32 are coded here (encoding_rs writes UTF-16 only as UTF-8
//! and has no UTF-32), and so is ISO-8859-1, which `latin1` declares: byte `n` is the code
//! point `n`, where the standard's tables would read it as windows-1252.

pub(crate) mod detect;
pub(crate) mod reach;
pub(crate) mod stream;

/// One text encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf16Le,
    Utf16Be,
    Utf32Le,
    Utf32Be,
    /// ISO-8859-1: every byte is the code point of the same number.
    Latin1,
    /// A legacy encoding from the standard's tables (windows-1252, ISO-8859-2, Shift_JIS...).
    Table(&'static encoding_rs::Encoding),
}

/// windows-1252, the legacy encoding detection recognises.
pub const WINDOWS_1252: Encoding = Encoding::Table(encoding_rs::WINDOWS_1252);

/// What a declared encoding name says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Label {
    pub encoding: Encoding,
    /// A new file starts with a byte-order mark (`utf-8-bom`, `UTF-16LE-BOM`, `UTF-16`).
    pub bom: bool,
    /// `utf-16` or `utf-32` without a byte order: a file's BOM or its content decides it
    /// (`encoding` is the order a new file gets).
    pub any_order: bool,
}

impl Encoding {
    /// The encoding's name as results give it, lowercase (`utf-8`, `utf-16le`,
    /// `iso-8859-1`, `windows-1252`).
    pub fn name(self) -> String {
        match self {
            Encoding::Utf8 => "utf-8".into(),
            Encoding::Utf16Le => "utf-16le".into(),
            Encoding::Utf16Be => "utf-16be".into(),
            Encoding::Utf32Le => "utf-32le".into(),
            Encoding::Utf32Be => "utf-32be".into(),
            Encoding::Latin1 => "iso-8859-1".into(),
            Encoding::Table(e) => e.name().to_ascii_lowercase(),
        }
    }

    /// The byte-order mark (empty for encodings that have none).
    pub fn bom(self) -> &'static [u8] {
        match self {
            Encoding::Utf8 => b"\xEF\xBB\xBF",
            Encoding::Utf16Le => b"\xFF\xFE",
            Encoding::Utf16Be => b"\xFE\xFF",
            Encoding::Utf32Le => b"\xFF\xFE\x00\x00",
            Encoding::Utf32Be => b"\x00\x00\xFE\xFF",
            Encoding::Latin1 | Encoding::Table(_) => b"",
        }
    }

    /// Whether ASCII text is the same bytes in this encoding (not so in UTF-16 and UTF-32).
    pub fn ascii_compatible(self) -> bool {
        !self.is_wide()
    }

    /// UTF-16 or UTF-32.
    pub fn is_wide(self) -> bool {
        matches!(
            self,
            Encoding::Utf16Le | Encoding::Utf16Be | Encoding::Utf32Le | Encoding::Utf32Be
        )
    }

    /// The encoding a declared name stands for (case and surrounding space do not
    /// matter); `None` for a name this module does not know or will not write: the
    /// standard's `replacement` and `x-user-defined`, and ISO-2022-JP, whose escape
    /// sequences make a change reach past its own characters.
    pub fn for_label(label: &str) -> Option<Label> {
        let l = label.trim().to_ascii_lowercase();
        let (base, bom) = match l.strip_suffix("-bom") {
            Some(b) => (b, true),
            None => (l.as_str(), false),
        };
        let fixed = |encoding, bom| {
            Some(Label {
                encoding,
                bom,
                any_order: false,
            })
        };
        let open = |encoding| {
            Some(Label {
                encoding,
                bom: true,
                any_order: true,
            })
        };
        match base {
            "utf-8" | "utf8" => fixed(Encoding::Utf8, bom),
            "utf-16le" | "utf16le" => fixed(Encoding::Utf16Le, bom),
            "utf-16be" | "utf16be" => fixed(Encoding::Utf16Be, bom),
            "utf-32le" | "utf32le" => fixed(Encoding::Utf32Le, bom),
            "utf-32be" | "utf32be" => fixed(Encoding::Utf32Be, bom),
            "utf-16" | "utf16" => open(Encoding::Utf16Le),
            "utf-32" | "utf32" => open(Encoding::Utf32Le),
            _ if bom => None,
            "latin1" | "latin-1" | "iso-8859-1" | "iso8859-1" | "iso_8859-1" | "iso88591"
            | "l1" | "cp819" | "ibm819" | "iso-ir-100" | "csisolatin1" => {
                fixed(Encoding::Latin1, false)
            }
            _ => {
                let e = encoding_rs::Encoding::for_label(base.as_bytes())?;
                let refused = [
                    encoding_rs::REPLACEMENT,
                    encoding_rs::X_USER_DEFINED,
                    encoding_rs::ISO_2022_JP,
                ];
                if refused.contains(&e) {
                    return None;
                }
                let encoding = if e == encoding_rs::UTF_8 {
                    Encoding::Utf8
                } else if e == encoding_rs::UTF_16LE {
                    Encoding::Utf16Le
                } else if e == encoding_rs::UTF_16BE {
                    Encoding::Utf16Be
                } else {
                    Encoding::Table(e)
                };
                fixed(encoding, false)
            }
        }
    }

    /// `bytes` (after any BOM) as text. The error is the offset of the first byte that is
    /// not valid in this encoding, or that would not be written back as it is.
    pub fn decode(self, bytes: &[u8]) -> Result<String, usize> {
        match self {
            Encoding::Utf8 => std::str::from_utf8(bytes)
                .map(str::to_owned)
                .map_err(|e| e.valid_up_to()),
            Encoding::Utf16Le | Encoding::Utf16Be => decode_utf16(bytes, self == Encoding::Utf16Be),
            Encoding::Utf32Le | Encoding::Utf32Be => decode_utf32(bytes, self == Encoding::Utf32Be),
            Encoding::Latin1 => Ok(bytes.iter().map(|&b| char::from(b)).collect()),
            Encoding::Table(e) => {
                let text = decode_table(e, bytes)?;
                // A byte sequence the table maps to a character that it writes otherwise
                // (a duplicate mapping) could not be written back unchanged: refused.
                let back = self.encode(&text).map_err(|c| {
                    let at = text.find(c).unwrap_or(0);
                    self.encode(&text[..at]).map_or(0, |b| b.len())
                })?;
                if !crate::text::bytes::eq(&back, bytes) {
                    return Err(crate::text::bytes::common_prefix(&back, bytes));
                }
                Ok(text)
            }
        }
    }

    /// `text` in this encoding (no BOM is added). The error is the first character the
    /// encoding cannot hold.
    pub fn encode(self, text: &str) -> Result<Vec<u8>, char> {
        let mut out = Vec::with_capacity(text.len() * self.unit_width());
        match self {
            Encoding::Utf8 => out.extend_from_slice(text.as_bytes()),
            Encoding::Utf16Le => text
                .encode_utf16()
                .for_each(|u| out.extend_from_slice(&u.to_le_bytes())),
            Encoding::Utf16Be => text
                .encode_utf16()
                .for_each(|u| out.extend_from_slice(&u.to_be_bytes())),
            Encoding::Utf32Le => text
                .chars()
                .for_each(|c| out.extend_from_slice(&u32::from(c).to_le_bytes())),
            Encoding::Utf32Be => text
                .chars()
                .for_each(|c| out.extend_from_slice(&u32::from(c).to_be_bytes())),
            Encoding::Latin1 => {
                for c in text.chars() {
                    out.push(u8::try_from(u32::from(c)).map_err(|_| c)?);
                }
            }
            Encoding::Table(e) => encode_table(e, text, &mut out)?,
        }
        Ok(out)
    }

    /// Bytes per code unit: 2 for UTF-16, 4 for UTF-32, else 1.
    pub fn unit_width(self) -> usize {
        match self {
            Encoding::Utf16Le | Encoding::Utf16Be => 2,
            Encoding::Utf32Le | Encoding::Utf32Be => 4,
            _ => 1,
        }
    }
}

/// A file's content as text to show (diffs): UTF-8 as it is (a BOM as U+FEFF), else in
/// `hint` (the encoding the change was written in), else in the encoding detection finds;
/// `None` when it is not text or does not decode cleanly.
pub fn text_of(bytes: &[u8], hint: Option<Encoding>) -> Option<std::borrow::Cow<'_, str>> {
    let utf8 = || {
        std::str::from_utf8(bytes)
            .ok()
            .map(std::borrow::Cow::Borrowed)
    };
    let (encoding, bom) = match hint {
        Some(Encoding::Utf8) => return utf8(),
        Some(e) => (
            e,
            if bytes.starts_with(e.bom()) {
                e.bom().len()
            } else {
                0
            },
        ),
        None => {
            if let Some(t) = utf8() {
                return Some(t);
            }
            match detect::detect(bytes, true) {
                detect::Verdict::Text { encoding, bom } => (encoding, bom),
                _ => return None,
            }
        }
    };
    let body = encoding.decode(&bytes[bom..]).ok()?;
    Some(std::borrow::Cow::Owned(if bom > 0 {
        format!("\u{feff}{body}")
    } else {
        body
    }))
}

fn decode_utf16(bytes: &[u8], big: bool) -> Result<String, usize> {
    let units = bytes.chunks_exact(2).map(|p| {
        let pair = [p[0], p[1]];
        if big {
            u16::from_be_bytes(pair)
        } else {
            u16::from_le_bytes(pair)
        }
    });
    let mut out = String::with_capacity(bytes.len() / 2);
    let mut at = 0usize;
    for r in char::decode_utf16(units) {
        match r {
            Ok(c) => {
                out.push(c);
                at += 2 * c.len_utf16();
            }
            Err(_) => return Err(at),
        }
    }
    if !bytes.len().is_multiple_of(2) {
        return Err(bytes.len() - 1);
    }
    Ok(out)
}

fn decode_utf32(bytes: &[u8], big: bool) -> Result<String, usize> {
    let mut out = String::with_capacity(bytes.len() / 4);
    for (i, q) in bytes.chunks_exact(4).enumerate() {
        let quad = [q[0], q[1], q[2], q[3]];
        let n = if big {
            u32::from_be_bytes(quad)
        } else {
            u32::from_le_bytes(quad)
        };
        out.push(char::from_u32(n).ok_or(4 * i)?);
    }
    if !bytes.len().is_multiple_of(4) {
        return Err(bytes.len() - bytes.len() % 4);
    }
    Ok(out)
}

fn decode_table(e: &'static encoding_rs::Encoding, bytes: &[u8]) -> Result<String, usize> {
    use encoding_rs::DecoderResult;
    let mut d = e.new_decoder_without_bom_handling();
    let cap = d
        .max_utf8_buffer_length_without_replacement(bytes.len())
        .ok_or(0usize)?;
    let mut out = vec![0u8; cap];
    let (res, read, written) = d.decode_to_utf8_without_replacement(bytes, &mut out, true);
    match res {
        DecoderResult::InputEmpty => {}
        DecoderResult::Malformed(bad, after) => {
            return Err(read.saturating_sub(usize::from(bad) + usize::from(after)))
        }
        DecoderResult::OutputFull => return Err(read),
    }
    out.truncate(written);
    String::from_utf8(out).map_err(|e| e.utf8_error().valid_up_to())
}

fn encode_table(
    e: &'static encoding_rs::Encoding,
    text: &str,
    out: &mut Vec<u8>,
) -> Result<(), char> {
    use encoding_rs::EncoderResult;
    let mut enc = e.new_encoder();
    let mut rest = text;
    // The buffer is sized for the whole input, so one round is enough; the bound keeps a
    // surprise from looping.
    for _ in 0..64 {
        let need = enc
            .max_buffer_length_from_utf8_without_replacement(rest.len())
            .unwrap_or(rest.len().saturating_mul(4))
            .max(16);
        let start = out.len();
        out.resize(start + need, 0);
        let (res, read, written) =
            enc.encode_from_utf8_without_replacement(rest, &mut out[start..], true);
        out.truncate(start + written);
        rest = &rest[read..];
        match res {
            EncoderResult::InputEmpty => return Ok(()),
            EncoderResult::Unmappable(c) => return Err(c),
            EncoderResult::OutputFull => {}
        }
    }
    Err(rest.chars().next().unwrap_or('\u{fffd}'))
}

#[cfg(test)]
mod tests;
