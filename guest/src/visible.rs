//! Differences an agent can see: invisible characters spelled out, and the first place
//! where the text it sent and the file's text part.
//!
//! Tab, CR, LF where a line ends early, non-breaking and other odd spaces, zero-width
//! characters and the BOM are written as `⟨TAB⟩`, `⟨CR⟩`, `⟨NBSP⟩`, `⟨BOM⟩`, `⟨U+200B⟩`;
//! spaces at the end of a line as `⟨SP⟩`. Everything else is shown as it is.

/// Most characters of a line shown in a message.
pub const MAX_SHOWN: usize = 160;

/// The name of an invisible or easily confused character, if it is one.
fn name_of(c: char) -> Option<String> {
    Some(match c {
        '\t' => "TAB".into(),
        '\r' => "CR".into(),
        '\n' => "LF".into(),
        '\u{a0}' => "NBSP".into(),
        '\u{feff}' => "BOM".into(),
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => format!("U+{:04X}", c as u32),
        '\u{2000}'..='\u{200f}'
        | '\u{2028}'..='\u{202f}'
        | '\u{205f}'..='\u{206f}'
        | '\u{1680}'
        | '\u{180e}'
        | '\u{3000}'
        | '\u{ad}' => format!("U+{:04X}", c as u32),
        _ => return None,
    })
}

/// `line` (one line, its line break already removed) with invisible characters and
/// trailing spaces spelled out, cut at [`MAX_SHOWN`] characters.
pub fn visible(line: &str) -> String {
    let trailing = line.len() - line.trim_end_matches(' ').len();
    let body = &line[..line.len() - trailing];
    let mut out = String::new();
    for (i, c) in body.chars().enumerate() {
        if i == MAX_SHOWN {
            out.push('…');
            return out;
        }
        match name_of(c) {
            Some(n) => {
                out.push('⟨');
                out.push_str(&n);
                out.push('⟩');
            }
            None => out.push(c),
        }
    }
    for _ in 0..trailing.min(MAX_SHOWN) {
        out.push_str("⟨SP⟩");
    }
    out
}

/// True when `line` holds something [`visible`] spells out.
pub fn has_invisibles(line: &str) -> bool {
    line.ends_with(' ') || line.chars().any(|c| name_of(c).is_some())
}

/// Where two texts first differ, line by line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divergence {
    /// Index of the differing line in the expected lines, from 0.
    pub index: usize,
    /// Column of the first differing character, from 1 (in characters).
    pub column: usize,
    /// The expected line, made visible.
    pub expected: String,
    /// The line found, made visible (`None`: the text ended first).
    pub found: Option<String>,
    /// What differs, in words.
    pub what: String,
}

/// Splits a line into its text and its break (`"\r\n"`, `"\n"` or `""`).
fn split_break(l: &str) -> (&str, &str) {
    if let Some(t) = l.strip_suffix("\r\n") {
        (t, "\r\n")
    } else if let Some(t) = l.strip_suffix('\n') {
        (t, "\n")
    } else {
        (l, "")
    }
}

fn describe(c: Option<char>) -> String {
    match c {
        None => "the end of the line".to_string(),
        Some(' ') => "a space".to_string(),
        Some(c) => match name_of(c) {
            Some(n) => format!("⟨{n}⟩"),
            None => format!("'{c}'"),
        },
    }
}

/// The first line where `expected` and `found` differ (each line with or without its
/// line break), or `None` when the lines compared are the same.
pub fn first_divergence<E: AsRef<str>, F: AsRef<str>>(
    expected: &[E],
    found: &[F],
) -> Option<Divergence> {
    for (index, e) in expected.iter().enumerate() {
        let e = e.as_ref();
        let (et, eb) = split_break(e);
        let Some(f) = found.get(index).map(AsRef::as_ref) else {
            return Some(Divergence {
                index,
                column: 1,
                expected: visible(et),
                found: None,
                what: "the file ends before this line".to_string(),
            });
        };
        let (ft, fb) = split_break(f);
        if et == ft && eb == fb {
            continue;
        }
        let mut col = 1;
        let (mut ei, mut fi) = (et.chars(), ft.chars());
        let (ec, fc) = loop {
            match (ei.next(), fi.next()) {
                (Some(a), Some(b)) if a == b => col += 1,
                (a, b) => break (a, b),
            }
        };
        let what = if et == ft {
            let name = |b: &str| match b {
                "\r\n" => "⟨CR⟩⟨LF⟩",
                "\n" => "⟨LF⟩",
                _ => "no line break (end of file without a final newline)",
            };
            format!(
                "line breaks differ: expected {}, found {}",
                name(eb),
                name(fb)
            )
        } else {
            format!("expected {}, found {}", describe(ec), describe(fc))
        };
        return Some(Divergence {
            index,
            column: col,
            expected: visible(et),
            found: Some(visible(ft)),
            what,
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invisibles_are_spelled_out() {
        assert_eq!(visible("\ta\u{a0}b  "), "⟨TAB⟩a⟨NBSP⟩b⟨SP⟩⟨SP⟩");
        assert_eq!(visible("\u{feff}x\u{200b}\r"), "⟨BOM⟩x⟨U+200B⟩⟨CR⟩");
        assert_eq!(visible("plain text"), "plain text");
        assert!(!has_invisibles("plain"));
        assert!(has_invisibles("x "));
    }

    #[test]
    fn the_first_divergent_line_and_column_are_found() {
        let d = first_divergence(&["a\n", "let x = 1;\n"], &["a\n", "let x\u{a0}= 1;\n"]).unwrap();
        assert_eq!((d.index, d.column), (1, 6));
        assert!(
            d.what.contains("expected a space, found ⟨NBSP⟩"),
            "{}",
            d.what
        );
        let d = first_divergence(&["b\n"], &["b"]).unwrap();
        assert!(d.what.contains("no line break"), "{}", d.what);
        let d = first_divergence(&["b\n", "c\n"], &["b\n"]).unwrap();
        assert_eq!((d.index, d.found), (1, None));
        assert_eq!(first_divergence(&["x\n"], &["x\n"]), None);
    }
}
