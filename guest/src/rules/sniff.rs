//! Content sniffing: private-key blocks and well-known token formats, so that a secret
//! stored under an innocent name (`notes.txt`) is withheld like a file named `.env`.
//!
//! Each pattern is a literal prefix followed by a run of the token's own characters, at a
//! word boundary; all prefixes are looked for in one vector scan (`prefixes.rs`). A match
//! withholds the whole file: reads refuse it, changes that would show its content refuse it,
//! diffs show it as opaque, and a search passes over it whatever the query met.
//!
//! UTF-16 and UTF-32 text (which the tools read as text) spells an ASCII secret with NUL
//! bytes between its letters: such content is also sniffed as decoded text. Every other
//! encoding the tools read writes ASCII as ASCII, so its bytes are sniffed as they are.

use memchr::memmem;

use crate::text::prefixes::Prefixes;

/// One token format.
struct Token {
    prefix: &'static [u8],
    /// Bytes the rest of the token is made of.
    body: fn(u8) -> bool,
    /// Fewest body bytes after the prefix.
    min: usize,
    what: &'static str,
}

fn upper_digit(b: u8) -> bool {
    b.is_ascii_uppercase() || b.is_ascii_digit()
}

fn alnum(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}

fn word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn url_safe(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

fn dashed(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-'
}

const TOKENS: &[Token] = &[
    Token {
        prefix: b"AKIA",
        body: upper_digit,
        min: 16,
        what: "an AWS access key id",
    },
    Token {
        prefix: b"ASIA",
        body: upper_digit,
        min: 16,
        what: "an AWS access key id",
    },
    Token {
        prefix: b"AIza",
        body: url_safe,
        min: 35,
        what: "a Google API key",
    },
    Token {
        prefix: b"ghp_",
        body: alnum,
        min: 36,
        what: "a GitHub token",
    },
    Token {
        prefix: b"gho_",
        body: alnum,
        min: 36,
        what: "a GitHub token",
    },
    Token {
        prefix: b"ghu_",
        body: alnum,
        min: 36,
        what: "a GitHub token",
    },
    Token {
        prefix: b"ghs_",
        body: alnum,
        min: 36,
        what: "a GitHub token",
    },
    Token {
        prefix: b"ghr_",
        body: alnum,
        min: 36,
        what: "a GitHub token",
    },
    Token {
        prefix: b"github_pat_",
        body: word,
        min: 40,
        what: "a GitHub token",
    },
    Token {
        prefix: b"glpat-",
        body: url_safe,
        min: 20,
        what: "a GitLab token",
    },
    Token {
        prefix: b"xoxb-",
        body: dashed,
        min: 10,
        what: "a Slack token",
    },
    Token {
        prefix: b"xoxp-",
        body: dashed,
        min: 10,
        what: "a Slack token",
    },
    Token {
        prefix: b"xoxa-",
        body: dashed,
        min: 10,
        what: "a Slack token",
    },
    Token {
        prefix: b"sk_live_",
        body: alnum,
        min: 20,
        what: "a Stripe key",
    },
    Token {
        prefix: b"rk_live_",
        body: alnum,
        min: 20,
        what: "a Stripe key",
    },
    Token {
        prefix: b"sk-proj-",
        body: url_safe,
        min: 20,
        what: "an OpenAI key",
    },
    Token {
        prefix: b"sk-ant-",
        body: url_safe,
        min: 20,
        what: "an Anthropic key",
    },
    Token {
        prefix: b"npm_",
        body: alnum,
        min: 36,
        what: "an npm token",
    },
    Token {
        prefix: b"pypi-AgE",
        body: url_safe,
        min: 50,
        what: "a PyPI token",
    },
];

/// The first secret found in `data`, described ("a private key block", "a GitHub token"),
/// in its bytes or, for UTF-16 or UTF-32 text, in its decoded text.
pub fn secret_in(data: &[u8]) -> Option<&'static str> {
    secret_in_bytes(data).or_else(|| {
        let (encoding, bom) = crate::text::encoding::detect::wide(data, false)?;
        let (text, _) = crate::text::encoding::stream::decode_lossy(encoding, &data[bom..]);
        secret_in_bytes(text.as_bytes())
    })
}

/// The first secret in `data` as it is.
fn secret_in_bytes(data: &[u8]) -> Option<&'static str> {
    if private_key_block(data) {
        return Some("a private key block");
    }
    // One vector scan for every format's prefix, each candidate then checked as the
    // per-format reference does: a pass per format, or an automaton's step per byte, cost
    // too much for every file a search matched.
    let mut found = None;
    TOKEN_PREFIXES.any(data, |start| {
        found = token_at(data, start).map(|t| t.what);
        found.is_some()
    });
    found
}

/// Every token format's prefix, in `TOKENS`' order.
const TOKEN_PREFIXES: Prefixes = Prefixes::new(&{
    let mut all: [&[u8]; TOKENS.len()] = [b""; TOKENS.len()];
    let mut i = 0;
    while i < TOKENS.len() {
        all[i] = TOKENS[i].prefix;
        i += 1;
    }
    all
});

/// The token starting at `start`, if one does: its prefix at a word boundary, then at least
/// its fewest body bytes.
fn token_at(data: &[u8], start: usize) -> Option<&'static Token> {
    if start > 0 && word(data[start - 1]) {
        return None;
    }
    TOKENS.iter().find(|t| {
        data[start..].starts_with(t.prefix) && {
            let body = &data[start + t.prefix.len()..];
            body.iter().take(t.min).filter(|&&b| (t.body)(b)).count() == t.min
        }
    })
}

/// `-----BEGIN ... PRIVATE KEY-----` (RSA, EC, DSA, OpenSSH, encrypted, PGP blocks).
pub fn private_key_block(data: &[u8]) -> bool {
    for at in memmem::find_iter(data, b"PRIVATE KEY") {
        let line_start = memchr::memrchr(b'\n', &data[..at]).map_or(0, |i| i + 1);
        if memmem::find(&data[line_start..at], b"-----BEGIN ").is_some() {
            return true;
        }
    }
    false
}

/// One format looked for on its own: the reference `secret_in`'s single pass is tested
/// against.
#[cfg(test)]
fn has_token(data: &[u8], t: &Token) -> bool {
    memmem::find_iter(data, t.prefix).any(|at| {
        let boundary = at == 0 || !word(data[at - 1]);
        let body = &data[at + t.prefix.len()..];
        boundary && body.iter().take(t.min).filter(|&&b| (t.body)(b)).count() == t.min
    })
}

/// Sniffs a file fed in chunks, keeping enough of each chunk's end that a secret across a
/// boundary is still seen; UTF-16 or UTF-32 text (as its first 8 KiB show) is sniffed
/// decoded as well.
#[derive(Default)]
pub struct Sniffer {
    raw: Seams,
    /// The file's first bytes, until there are enough to tell wide text.
    head: Vec<u8>,
    decided: bool,
    /// The decoder of wide text and its own seams.
    decoded: Option<(crate::text::encoding::stream::Stream, Seams)>,
}

impl std::fmt::Debug for Sniffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sniffer")
            .field("raw", &self.raw)
            .field("decided", &self.decided)
            .finish_non_exhaustive()
    }
}

/// Chunks scanned with what joins them.
#[derive(Debug, Default)]
struct Seams {
    tail: Vec<u8>,
    found: Option<&'static str>,
}

/// Longest pattern looked for (prefix plus body), with room to spare.
const OVERLAP: usize = 128;

impl Seams {
    fn feed(&mut self, chunk: &[u8]) {
        if self.found.is_some() {
            return;
        }
        let mut joined = std::mem::take(&mut self.tail);
        joined.extend_from_slice(&chunk[..chunk.len().min(OVERLAP)]);
        // The seam first (tail plus the chunk's head), then the chunk itself.
        self.found = secret_in_bytes(&joined).or_else(|| secret_in_bytes(chunk));
        // The last OVERLAP bytes seen: of the chunk, or of the tail and a short chunk.
        self.tail = if chunk.len() >= OVERLAP {
            chunk[chunk.len() - OVERLAP..].to_vec()
        } else {
            joined[joined.len().saturating_sub(OVERLAP)..].to_vec()
        };
    }
}

impl Sniffer {
    pub fn feed(&mut self, chunk: &[u8]) {
        self.raw.feed(chunk);
        if self.decided {
            self.feed_decoded(chunk);
            return;
        }
        let window = crate::text::encoding::detect::WINDOW;
        let take = (window - self.head.len()).min(chunk.len());
        self.head.extend_from_slice(&chunk[..take]);
        if self.head.len() == window {
            self.decide(true);
            self.feed_decoded(&chunk[take..]);
        }
    }

    /// Tells wide text by the head, and decodes the head when it is.
    fn decide(&mut self, cut: bool) {
        self.decided = true;
        let head = std::mem::take(&mut self.head);
        if let Some((e, bom)) = crate::text::encoding::detect::wide(&head, cut) {
            let stream = crate::text::encoding::stream::Stream::new(e);
            self.decoded = Some((stream, Seams::default()));
            self.feed_decoded(&head[bom..]);
        }
    }

    fn feed_decoded(&mut self, chunk: &[u8]) {
        if let Some((stream, seams)) = &mut self.decoded {
            if seams.found.is_none() && !chunk.is_empty() {
                let mut text = String::new();
                stream.feed(chunk, false, &mut text);
                seams.feed(text.as_bytes());
            }
        }
    }

    /// The first secret found in what was fed.
    pub fn found(&mut self) -> Option<&'static str> {
        if !self.decided {
            self.decide(false);
        }
        self.raw
            .found
            .or_else(|| self.decoded.as_ref().and_then(|(_, s)| s.found))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_key_blocks_and_tokens() {
        let cases: &[(&str, &str)] = &[
            (
                "x\n-----BEGIN RSA PRIVATE KEY-----\nMIIE\n",
                "a private key block",
            ),
            ("-----BEGIN OPENSSH PRIVATE KEY-----", "a private key block"),
            (
                "-----BEGIN PGP PRIVATE KEY BLOCK-----",
                "a private key block",
            ),
            ("key = \"AKIAIOSFODNN7EXAMPLE\"", "an AWS access key id"),
            (
                "token: ghp_abcdefghijklmnopqrstuvwxyz0123456789",
                "a GitHub token",
            ),
            ("xoxb-1234567890-abcdef", "a Slack token"),
            ("STRIPE=sk_live_abcdefghijklmnopqrstuvwx", "a Stripe key"),
            (
                "k=AIzaSyA-abcdefghijklmnopqrstuvwxyz01234",
                "a Google API key",
            ),
            ("glpat-abcdefghij0123456789", "a GitLab token"),
        ];
        for (text, what) in cases {
            assert_eq!(secret_in(text.as_bytes()), Some(*what), "{text}");
        }
    }

    /// The one-pass line check finds every token the full check finds, and no more.
    #[test]
    fn line_check_agrees_with_the_full_check_on_tokens() {
        for t in TOKENS {
            let body: String = (0..t.min)
                .map(|i| {
                    if (t.body)(b'A' + (i % 26) as u8) {
                        (b'A' + (i % 26) as u8) as char
                    } else {
                        '7'
                    }
                })
                .collect();
            let token = format!("{}{body}", String::from_utf8_lossy(t.prefix));
            for line in [
                token.clone(),
                format!("key = \"{token}\""),
                format!("x{token}"),
                token[..token.len() - 1].to_string(),
            ] {
                let reference = TOKENS
                    .iter()
                    .find(|t| has_token(line.as_bytes(), t))
                    .map(|t| t.what);
                assert_eq!(secret_in(line.as_bytes()), reference, "{line}");
            }
        }
    }

    #[test]
    fn look_alikes_are_not_secrets() {
        for text in [
            "-----BEGIN PUBLIC KEY-----",
            "-----BEGIN CERTIFICATE-----",
            "// PRIVATE KEY handling lives in keys.rs",
            "AKIA is the prefix of AWS key ids",
            "let xAKIAIOSFODNN7EXAMPLE = 1; // not at a word boundary",
            "ghp_short",
            "sk_live_",
            "fn main() {}",
        ] {
            assert_eq!(secret_in(text.as_bytes()), None, "{text}");
        }
    }

    /// A secret split across any chunk boundary is still found; clean data stays clean.
    #[test]
    fn chunked_feeds_see_secrets_across_boundaries() {
        let mut data = "filler line\n".repeat(40).into_bytes();
        data.extend_from_slice(b"-----BEGIN EC PRIVATE KEY-----\nabc\n");
        data.extend_from_slice("more filler\n".repeat(40).as_bytes());
        for size in [1, 7, 16, 33, 100, 1000] {
            let mut s = Sniffer::default();
            for c in data.chunks(size) {
                s.feed(c);
            }
            assert_eq!(s.found(), Some("a private key block"), "{size}");
            let mut clean = Sniffer::default();
            for c in "just text\n".repeat(100).as_bytes().chunks(size) {
                clean.feed(c);
            }
            assert_eq!(clean.found(), None);
        }
    }

    /// A secret in UTF-16 or UTF-32 text has NUL bytes between its letters: it is found in
    /// the decoded text, whole or fed in chunks, marked or not.
    #[test]
    fn secrets_in_wide_text_are_found_decoded() {
        let text = format!(
            "{}token = \"AKIAABCDEFGHIJKLMNOP\"\n{}",
            "filler line\n".repeat(30),
            "more\n".repeat(30)
        );
        let le: Vec<u8> = format!("\u{feff}{text}")
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        let be_unmarked: Vec<u8> = text.encode_utf16().flat_map(u16::to_be_bytes).collect();
        let utf32: Vec<u8> = format!("\u{feff}{text}")
            .chars()
            .flat_map(|c| u32::from(c).to_le_bytes())
            .collect();
        for data in [&le, &be_unmarked, &utf32] {
            assert_eq!(secret_in_bytes(data), None, "the bytes alone hide it");
            assert_eq!(secret_in(data), Some("an AWS access key id"));
            for size in [1, 3, 64, 1000, 100_000] {
                let mut s = Sniffer::default();
                for c in data.chunks(size) {
                    s.feed(c);
                }
                assert_eq!(s.found(), Some("an AWS access key id"), "{size}");
            }
        }
        let clean: Vec<u8> = "\u{feff}nothing\n"
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        assert_eq!(secret_in(&clean), None);
    }

    #[test]
    fn one_pass_finds_what_a_pass_per_format_finds() {
        let mut cases: Vec<Vec<u8>> = Vec::new();
        for t in TOKENS {
            // A body of characters the format takes (the first of a few that it does).
            let fill = *[b'A', b'b', b'7', b'Z', b'q']
                .iter()
                .find(|&&c| (t.body)(c))
                .unwrap_or(&b'A');
            let body = vec![fill; t.min + 2];
            for (before, after) in [("", ""), ("x = '", "'\n"), ("word", ""), ("a\n", "\n")] {
                let mut full = before.as_bytes().to_vec();
                full.extend_from_slice(t.prefix);
                full.extend_from_slice(&body);
                full.extend_from_slice(after.as_bytes());
                cases.push(full.clone());
                // Too short a body.
                let mut short = before.as_bytes().to_vec();
                short.extend_from_slice(t.prefix);
                short.extend_from_slice(&body[..t.min - 1]);
                cases.push(short);
            }
        }
        cases.push(b"ghp_ghp_abcdefghijklmnopqrstuvwxyz0123456789".to_vec());
        cases.push(b"nothing here at all".to_vec());
        for c in &cases {
            let reference = TOKENS.iter().find(|t| has_token(c, t)).map(|t| t.what);
            assert_eq!(secret_in(c), reference, "{}", String::from_utf8_lossy(c));
        }
        assert!(cases.iter().any(|c| secret_in(c).is_some()));
        assert!(cases.iter().any(|c| secret_in(c).is_none()));
    }
}
