//! Whether a search pattern can tell a windows-1252 file's bytes from its text.
//!
//! In windows-1252 every ASCII character is its own byte and every other character a byte
//! above 0x7F, which is never valid UTF-8 on its own. A pattern whose matches hold only
//! ASCII characters, and that looks at nothing but them, therefore matches the same lines
//! in the file's bytes as in its decoded text: search can read such a file as bytes, like
//! any other, and decode it only to show the lines it found. A pattern that may match or
//! look at one of windows-1252's other characters (a literal `ü`, `\w`, `\s`, `.`, a
//! negated class, a Unicode word boundary) has to be run on the text.

use regex_syntax::hir::{Class, Hir, HirKind, Look};

use super::WINDOWS_1252;

/// Whether matches of `pattern` (parsed with the search's own settings) may hold, or look
/// at, a character windows-1252 writes above 0x7F. A pattern that does not parse reaches.
pub fn reaches_western(pattern: &str, case_insensitive: bool, nest_limit: u32) -> bool {
    let parsed = regex_syntax::ParserBuilder::new()
        .case_insensitive(case_insensitive)
        .multi_line(true)
        .crlf(true)
        .utf8(false)
        .nest_limit(nest_limit)
        .build()
        .parse(pattern);
    let Ok(hir) = parsed else {
        return true;
    };
    let high: Vec<char> = (0x80..=0xFFu8)
        .filter_map(|b| WINDOWS_1252.decode(&[b]).ok())
        .filter_map(|s| s.chars().next())
        .collect();
    reaches(&hir, &high)
}

fn reaches(h: &Hir, high: &[char]) -> bool {
    match h.kind() {
        HirKind::Empty => false,
        HirKind::Literal(l) => !l.0.is_ascii(),
        HirKind::Class(Class::Unicode(c)) => c
            .ranges()
            .iter()
            .any(|r| high.iter().any(|&ch| r.start() <= ch && ch <= r.end())),
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
        HirKind::Repetition(r) => reaches(&r.sub, high),
        HirKind::Capture(c) => reaches(&c.sub, high),
        HirKind::Concat(subs) | HirKind::Alternation(subs) => subs.iter().any(|s| reaches(s, high)),
    }
}

#[cfg(test)]
mod tests {
    use super::reaches_western;

    #[test]
    fn ascii_patterns_do_not_reach_and_the_others_do() {
        let r = |p: &str, ci: bool| reaches_western(p, ci, 100);
        // Literals, ASCII classes, anchors; case-insensitive ASCII letters (whose folds,
        // the Kelvin sign and the long s, are not in windows-1252).
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
        // A literal, class or boundary that takes non-ASCII characters.
        for p in [
            "Grüße",
            "static\\s+int",
            "\\w+_probe",
            "a.b",
            "[^x]",
            "\\bfoo",
            "“",
            "(?-u:[\\x80-\\xFF])",
        ] {
            assert!(r(p, false), "{p}");
        }
        // `ä` folds to `Ä`, both in windows-1252.
        assert!(r("mädchen", true));
        // Malformed: the text is searched, to be safe.
        assert!(r("(", false));
    }
}
