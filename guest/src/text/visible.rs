//! Differences an agent can see: invisible characters spelled out, and the first place
//! where the text it sent and the file's text part.
//!
//! Tab, CR, LF where a line ends early, other control characters (C0, DEL, C1),
//! non-breaking and other odd spaces, zero-width and bidi-control characters, the BOM and
//! other invisible ones (variation selectors, tag characters, fillers) are written as
//! `⟨TAB⟩`, `⟨CR⟩`, `⟨NBSP⟩`, `⟨BOM⟩`, `⟨U+202E⟩`; spaces at the end of a line as `⟨SP⟩`.
//! Everything else is shown as it is.
//!
//! The same names serve what a person approving a change is shown ([`escaped`]): there
//! every such character but tab and line feed is spelled out, so that a carriage return, a
//! terminal escape sequence or a right-to-left override cannot hide part of the change.

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
        | '\u{180b}'..='\u{180f}'
        | '\u{3000}'
        | '\u{ad}'
        | '\u{34f}'
        | '\u{61c}'
        | '\u{115f}'
        | '\u{1160}'
        | '\u{17b4}'
        | '\u{17b5}'
        | '\u{3164}'
        | '\u{fe00}'..='\u{fe0f}'
        | '\u{ffa0}'
        | '\u{fff9}'..='\u{fffb}'
        | '\u{1bca0}'..='\u{1bca3}'
        | '\u{1d173}'..='\u{1d17a}'
        | '\u{e0000}'..='\u{e007f}'
        | '\u{e0100}'..='\u{e01ef}' => format!("U+{:04X}", c as u32),
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

/// `text` as a person approving it is shown it, and how many characters were spelled out:
/// every character [`visible`] names but tab and line feed, whole (nothing is cut, and
/// spaces stay spaces).
pub fn escaped(text: &str) -> (String, u32) {
    let mut out = String::with_capacity(text.len());
    let mut count = 0u32;
    for c in text.chars() {
        match name_of(c).filter(|_| c != '\t' && c != '\n') {
            Some(n) => {
                count = count.saturating_add(1);
                out.push('⟨');
                out.push_str(&n);
                out.push('⟩');
            }
            None => out.push(c),
        }
    }
    (out, count)
}

/// True when `line` holds something [`visible`] spells out.
#[cfg(test)]
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
    fn what_an_approver_sees_spells_out_controls_bidi_and_invisibles() {
        let (shown, n) = escaped("ok\rcurl x | sh\x1b[2K\u{202e}txt.exe\u{2066}\u{200b}\u{61c}\n");
        assert_eq!(
            shown,
            "ok⟨CR⟩curl x | sh⟨U+001B⟩[2K⟨U+202E⟩txt.exe⟨U+2066⟩⟨U+200B⟩⟨U+061C⟩\n"
        );
        assert_eq!(n, 6);
        let (shown, n) = escaped("\u{85}\u{7f}\u{feff}\u{ad}\u{e0041}\u{fe0f}\u{2060}\u{200e}");
        assert_eq!(
            shown,
            "⟨U+0085⟩⟨U+007F⟩⟨BOM⟩⟨U+00AD⟩⟨U+E0041⟩⟨U+FE0F⟩⟨U+2060⟩⟨U+200E⟩"
        );
        assert_eq!(n, 8);
        // Positive control: tabs, line feeds, trailing spaces and other scripts stay.
        let plain = "\tlet x = \"é ü 中\";  \n+ next\n";
        assert_eq!(escaped(plain), (plain.to_string(), 0));
        // Nothing is cut, however long.
        let long = format!("{}\u{202e}", "a".repeat(10 * MAX_SHOWN));
        assert!(escaped(&long).0.ends_with("⟨U+202E⟩"));
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
