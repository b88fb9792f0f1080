//! Lenient decoding, chunk by chunk, for what is only shown (reads, search results,
//! sniffing): a byte sequence that is not valid becomes U+FFFD and the stream says that it
//! replaced something. A character split between two chunks is decoded whole. Nothing
//! decoded here is ever written back.

use super::Encoding;

/// A decoder of one file's bytes (after its BOM) into text.
pub struct Stream {
    kind: Kind,
    replaced: bool,
}

enum Kind {
    /// UTF-8, UTF-16 and the legacy tables: encoding_rs's streaming decoder.
    Rs(encoding_rs::Decoder),
    /// UTF-32: the bytes of an incomplete unit wait for the next chunk.
    Utf32 {
        big: bool,
        carry: Vec<u8>,
    },
    Latin1,
}

impl Stream {
    pub fn new(encoding: Encoding) -> Stream {
        let rs = |e: &'static encoding_rs::Encoding| Kind::Rs(e.new_decoder_without_bom_handling());
        let kind = match encoding {
            Encoding::Utf8 => rs(encoding_rs::UTF_8),
            Encoding::Utf16Le => rs(encoding_rs::UTF_16LE),
            Encoding::Utf16Be => rs(encoding_rs::UTF_16BE),
            Encoding::Utf32Le | Encoding::Utf32Be => Kind::Utf32 {
                big: encoding == Encoding::Utf32Be,
                carry: Vec::new(),
            },
            Encoding::Latin1 => Kind::Latin1,
            Encoding::Table(e) => rs(e),
        };
        Stream {
            kind,
            replaced: false,
        }
    }

    /// Whether anything was replaced by U+FFFD so far.
    pub fn replaced(&self) -> bool {
        self.replaced
    }

    /// Decodes the next chunk onto `out`; `last` for the final one (an incomplete
    /// character left at its end is replaced).
    pub fn feed(&mut self, chunk: &[u8], last: bool, out: &mut String) {
        match &mut self.kind {
            Kind::Latin1 => out.extend(chunk.iter().map(|&b| char::from(b))),
            Kind::Utf32 { big, carry } => {
                carry.extend_from_slice(chunk);
                let whole = carry.len() - carry.len() % 4;
                for q in carry[..whole].chunks_exact(4) {
                    let quad = [q[0], q[1], q[2], q[3]];
                    let n = if *big {
                        u32::from_be_bytes(quad)
                    } else {
                        u32::from_le_bytes(quad)
                    };
                    out.push(char::from_u32(n).unwrap_or_else(|| {
                        self.replaced = true;
                        '\u{fffd}'
                    }));
                }
                carry.drain(..whole);
                if last && !carry.is_empty() {
                    carry.clear();
                    out.push('\u{fffd}');
                    self.replaced = true;
                }
            }
            Kind::Rs(d) => {
                let mut rest = chunk;
                // Sized for the whole chunk, so one round does; the bound keeps a
                // surprise from looping.
                for _ in 0..64 {
                    let need = d
                        .max_utf8_buffer_length(rest.len())
                        .unwrap_or(rest.len().saturating_mul(3))
                        .max(16);
                    let mut buf = vec![0u8; need];
                    let (res, read, written, had) = d.decode_to_utf8(rest, &mut buf, last);
                    self.replaced |= had;
                    match std::str::from_utf8(&buf[..written]) {
                        Ok(t) => out.push_str(t),
                        Err(_) => {
                            out.push_str(&String::from_utf8_lossy(&buf[..written]));
                            self.replaced = true;
                        }
                    }
                    rest = &rest[read..];
                    if res == encoding_rs::CoderResult::InputEmpty {
                        break;
                    }
                }
            }
        }
    }
}

/// `bytes` decoded leniently in one go, and whether anything was replaced.
pub fn decode_lossy(encoding: Encoding, bytes: &[u8]) -> (String, bool) {
    let mut s = Stream::new(encoding);
    let mut out = String::with_capacity(bytes.len());
    s.feed(bytes, true, &mut out);
    (out, s.replaced())
}
