//! Whether a search pattern can tell a legacy file's bytes from its text.
//!
//! In the ASCII-compatible encodings (windows-1252, ISO-8859-1, Shift_JIS...) every ASCII
//! character is its own byte. A pattern whose matches hold only ASCII characters, and that
//! looks at nothing but them, therefore matches on the same lines in such a file's bytes as
//! in its decoded text, unless the bytes of its other characters hold ASCII bytes too
//! (which search then learns from a line it shows: see `tools::search::encoded`). Search
//! can read such a file as bytes, like any other, and decode it only to show the lines it
//! found. A pattern that may match or look at a character beyond ASCII (a literal `ü`,
//! `\w`, `\s`, `.`, a negated class, a Unicode word boundary) has to be run on the text.
//! The Kelvin sign and the long s, which case-insensitive `k` and `s` also match, do not
//! count: no single-byte encoding search decodes holds them.

use regex_syntax::hir::{Class, Hir, HirKind, Look};

/// Whether matches of `pattern` (parsed with the search's own settings) may hold, or look
/// at, a character beyond ASCII. A pattern that does not parse reaches.
pub fn reaches_beyond_ascii(pattern: &str, case_insensitive: bool, nest_limit: u32) -> bool {
    parse_as_search(pattern, case_insensitive, nest_limit).is_none_or(|hir| reaches(&hir))
}

/// Parses `pattern` with the syntax settings search compiles its regexes with
/// (`regex::bytes`: multi-line, CRLF-aware, matching non-UTF-8 bytes).
///
/// `None` for a pattern that is not a valid regex (the regex crate's own compile says why).
pub fn parse_as_search(pattern: &str, case_insensitive: bool, nest_limit: u32) -> Option<Hir> {
    regex_syntax::ParserBuilder::new()
        .case_insensitive(case_insensitive)
        .multi_line(true)
        .crlf(true)
        .utf8(false)
        .nest_limit(nest_limit)
        .build()
        .parse(pattern)
        .ok()
}

/// Whether the characters `lo..=hi` hold one beyond ASCII other than the two folds.
fn beyond(lo: u32, hi: u32) -> bool {
    let lo = lo.max(0x80);
    lo <= hi && !(lo == hi && (lo == 0x17F || lo == 0x212A))
}

fn reaches(h: &Hir) -> bool {
    match h.kind() {
        HirKind::Empty => false,
        HirKind::Literal(l) => !l.0.is_ascii(),
        HirKind::Class(Class::Unicode(c)) => c
            .ranges()
            .iter()
            .any(|r| beyond(r.start().into(), r.end().into())),
        HirKind::Class(Class::Bytes(c)) => c.ranges().iter().any(|r| r.end() >= 0x80),
        HirKind::Look(l) => !matches!(
            l,
            Look::Start
                | Look::End
                | Look::StartLF
                | Look::EndLF
                | Look::StartCRLF
                | Look::EndCRLF
                | Look::WordAscii
                | Look::WordAsciiNegate
                | Look::WordStartAscii
                | Look::WordEndAscii
                | Look::WordStartHalfAscii
                | Look::WordEndHalfAscii
        ),
        HirKind::Repetition(r) => reaches(&r.sub),
        HirKind::Capture(c) => reaches(&c.sub),
        HirKind::Concat(subs) | HirKind::Alternation(subs) => subs.iter().any(reaches),
    }
}

#[cfg(test)]
mod tests {
    use super::reaches_beyond_ascii;

    #[test]
    fn ascii_patterns_do_not_reach_and_the_others_do() {
        let r = |p: &str, ci: bool| reaches_beyond_ascii(p, ci, 100);
        // Literals, ASCII classes, anchors, ASCII word boundaries; case-insensitive ASCII
        // letters (whose other folds are the Kelvin sign and the long s).
        for p in [
            "EXPORT_SYMBOL_GPL",
            "[A-Z]{4}_[0-9]{3}",
            "^fn main$",
            "(?-u:\\b)x",
        ] {
            assert!(!r(p, false), "{p}");
        }
        assert!(!r("mutex_lock", true));
        assert!(!r("kiss", true));
        // A literal, class or boundary that takes characters beyond ASCII.
        for p in [
            "Grüße",
            "static\\s+int",
            "\\w+_probe",
            "a.b",
            "[^x]",
            "\\bfoo",
            "“",
            "\\p{Katakana}",
            "(?-u:[\\x80-\\xFF])",
        ] {
            assert!(r(p, false), "{p}");
        }
        assert!(r("mädchen", true));
        // Malformed: the text is searched, to be safe.
        assert!(r("(", false));
    }
}
