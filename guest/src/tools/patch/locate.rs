//! Finding a hunk's old lines in a file: exactly, or at a relaxed level the call allows.
//!
//! Levels are tried from strictest to the one requested; a line matches at a level when
//! both sides read the same after [`fold`]. A relaxed match must be the only one after the
//! hunk's start unless the hunk names a line (then the nearest wins, as for exact ones).

use crate::api::MatchLevel;

const LEVELS: [MatchLevel; 4] = [
    MatchLevel::Exact,
    MatchLevel::TrailingWhitespace,
    MatchLevel::Whitespace,
    MatchLevel::Punctuation,
];

/// The ASCII form of a Unicode punctuation mark or space, when it has one.
fn ascii_of(c: char) -> Option<&'static str> {
    Some(match c {
        '\u{2018}' | '\u{2019}' | '\u{201a}' | '\u{201b}' | '\u{2032}' | '\u{2035}' => "'",
        '\u{201c}' | '\u{201d}' | '\u{201e}' | '\u{201f}' | '\u{2033}' | '\u{2036}' => "\"",
        '\u{00ab}' | '\u{00bb}' => "\"",
        '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{fe58}' | '\u{fe63}' | '\u{ff0d}' => "-",
        '\u{2026}' => "...",
        '\u{200b}' | '\u{200c}' | '\u{200d}' | '\u{2060}' | '\u{feff}' => "",
        c if c.is_whitespace() && !c.is_ascii() => " ",
        _ => return None,
    })
}

/// A line (terminator included) as compared at `level`. Relaxed levels keep whether the
/// line ends in a break (a `\r\n` counts as `\n`), so that a line without one never
/// matches a line with one and swallows the line after it.
pub fn fold(line: &str, level: MatchLevel) -> String {
    let mut folded = fold_text(line, level);
    if level != MatchLevel::Exact && line.ends_with('\n') {
        folded.push('\n');
    }
    folded
}

fn fold_text(line: &str, level: MatchLevel) -> String {
    match level {
        MatchLevel::Exact => line.to_string(),
        MatchLevel::TrailingWhitespace => line
            .trim_end_matches([' ', '\t', '\r', '\n', '\u{b}', '\u{c}'])
            .to_string(),
        MatchLevel::Whitespace => squash(line),
        MatchLevel::Punctuation => {
            let mut ascii = String::with_capacity(line.len());
            for c in line.chars() {
                match ascii_of(c) {
                    Some(a) => ascii.push_str(a),
                    None => ascii.push(c),
                }
            }
            squash(&ascii)
        }
    }
}

/// Runs of ASCII whitespace as one space, none at either end.
fn squash(s: &str) -> String {
    s.split_ascii_whitespace().collect::<Vec<_>>().join(" ")
}

/// Where a hunk was found, and how loosely.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    pub at: usize,
    pub level: MatchLevel,
}

/// Why a hunk was not found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Miss {
    /// Nowhere, at any level allowed.
    Nowhere,
    /// Only at a relaxed level, and at several places (file lines from 1).
    Ambiguous {
        level: MatchLevel,
        lines: Vec<usize>,
    },
}

/// What to look for and where.
pub struct Query<'a> {
    pub old: &'a [String],
    /// Matches start at or after this line index.
    pub from: usize,
    /// The index the hunk's header points at, if it has one.
    pub wanted: Option<usize>,
    /// The old lines must end at the end of the file.
    pub at_eof: bool,
    /// The loosest level allowed.
    pub max: MatchLevel,
}

/// Finds `q.old` in `lines`, trying each allowed level in turn.
///
/// # Errors
/// [`Miss`] when no level allowed finds it, or a relaxed level finds it more than once.
pub fn locate(lines: &[String], q: &Query<'_>) -> Result<Found, Miss> {
    if q.old.is_empty() {
        let at = q
            .wanted
            .unwrap_or(lines.len())
            .clamp(q.from.min(lines.len()), lines.len());
        return Ok(Found {
            at,
            level: MatchLevel::Exact,
        });
    }
    for level in LEVELS.into_iter().filter(|l| *l <= q.max) {
        let (hay, needle): (Vec<String>, Vec<String>) = if level == MatchLevel::Exact {
            (Vec::new(), Vec::new())
        } else {
            (
                lines.iter().map(|l| fold(l, level)).collect(),
                q.old.iter().map(|l| fold(l, level)).collect(),
            )
        };
        let matches_at = |p: usize| -> bool {
            if p < q.from || p + q.old.len() > lines.len() {
                return false;
            }
            if level == MatchLevel::Exact {
                lines[p..p + q.old.len()] == q.old[..]
            } else {
                hay[p..p + q.old.len()] == needle[..]
            }
        };
        let Some(last) = lines.len().checked_sub(q.old.len()) else {
            return Err(Miss::Nowhere);
        };
        if q.at_eof {
            if matches_at(last) {
                return Ok(Found { at: last, level });
            }
            continue;
        }
        if let Some(w) = q.wanted {
            if let Some(at) = nearest(w, last, &matches_at) {
                return Ok(Found { at, level });
            }
            continue;
        }
        let mut all = (q.from..=last).filter(|&p| matches_at(p));
        if let Some(at) = all.next() {
            if level != MatchLevel::Exact {
                let more: Vec<usize> = all.take(4).collect();
                if !more.is_empty() {
                    let lines = std::iter::once(at).chain(more).map(|p| p + 1).collect();
                    return Err(Miss::Ambiguous { level, lines });
                }
            }
            return Ok(Found { at, level });
        }
    }
    Err(Miss::Nowhere)
}

/// The match nearest to `w` (later first on ties).
fn nearest(w: usize, last: usize, matches_at: &dyn Fn(usize) -> bool) -> Option<usize> {
    // A line number past the end is taken as the end (a patch may name any number).
    let w = w.min(last);
    for d in 0..=last {
        if matches_at(w + d) {
            return Some(w + d);
        }
        if d > 0 && d <= w && matches_at(w - d) {
            return Some(w - d);
        }
        if w + d > last && d > w {
            break;
        }
    }
    None
}

/// The start at or after `from` where most of `old` matches at the loosest level (for
/// conflict messages); `fallback` when no line does.
pub fn closest(lines: &[String], old: &[String], from: usize, fallback: usize) -> usize {
    const MAX_WORK: usize = 2_000_000;
    if old.is_empty() || lines.is_empty() {
        return fallback;
    }
    let hay: Vec<String> = lines
        .iter()
        .map(|l| fold(l, MatchLevel::Punctuation))
        .collect();
    let needle: Vec<String> = old
        .iter()
        .map(|l| fold(l, MatchLevel::Punctuation))
        .collect();
    let (mut best, mut best_score) = (fallback, 0usize);
    let mut work = 0usize;
    for p in from..lines.len() {
        let score = needle
            .iter()
            .zip(&hay[p..])
            .filter(|(a, b)| a == b && !a.is_empty())
            .count();
        work += needle.len();
        if score > best_score {
            (best, best_score) = (p, score);
        }
        if work > MAX_WORK {
            break;
        }
    }
    best
}

/// The lines that replace a hunk matched at a relaxed level: the patch's new lines, with
/// each context line (one the hunk keeps) taken from the file as it is, and every other
/// line in the file's indentation for its depth (see `indent`).
pub fn keep_context(found: &[String], old: &[String], new: &[String]) -> Vec<String> {
    // Lines the hunk adds take the file's indentation for their depth.
    let indent = super::indent::Indent::learn(found, old);
    let mut out: Vec<String> = new.iter().map(|l| indent.apply(l)).collect();
    for op in similar::capture_diff_slices(similar::Algorithm::Myers, old, new) {
        if let similar::DiffOp::Equal {
            old_index,
            new_index,
            len,
        } = op
        {
            for k in 0..len {
                if let (Some(slot), Some(line)) =
                    (out.get_mut(new_index + k), found.get(old_index + k))
                {
                    slot.clone_from(line);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    fn q(old: &[String], max: MatchLevel) -> Query<'_> {
        Query {
            old,
            from: 0,
            wanted: None,
            at_eof: false,
            max,
        }
    }

    #[test]
    fn levels_are_tried_in_order_up_to_the_one_allowed() {
        let file = v(&[
            "a  \n",
            "  b\tc\n",
            "say \u{201c}hi\u{201d} \u{2014} ok\u{2026}\n",
        ]);
        let old = v(&["a\n"]);
        assert_eq!(
            locate(&file, &q(&old, MatchLevel::Exact)),
            Err(Miss::Nowhere)
        );
        assert_eq!(
            locate(&file, &q(&old, MatchLevel::Punctuation))
                .unwrap()
                .level,
            MatchLevel::TrailingWhitespace
        );
        let old = v(&["b c\n"]);
        assert_eq!(
            locate(&file, &q(&old, MatchLevel::TrailingWhitespace)),
            Err(Miss::Nowhere)
        );
        assert_eq!(
            locate(&file, &q(&old, MatchLevel::Whitespace)).unwrap(),
            Found {
                at: 1,
                level: MatchLevel::Whitespace
            }
        );
        let old = v(&["say \"hi\" - ok...\n"]);
        assert_eq!(
            locate(&file, &q(&old, MatchLevel::Whitespace)),
            Err(Miss::Nowhere)
        );
        assert_eq!(
            locate(&file, &q(&old, MatchLevel::Punctuation)).unwrap(),
            Found {
                at: 2,
                level: MatchLevel::Punctuation
            }
        );
    }

    #[test]
    fn an_unanchored_relaxed_match_must_be_unique() {
        let file = v(&["x \n", "x\t\n"]);
        let old = v(&["x\n"]);
        assert_eq!(
            locate(&file, &q(&old, MatchLevel::TrailingWhitespace)),
            Err(Miss::Ambiguous {
                level: MatchLevel::TrailingWhitespace,
                lines: vec![1, 2]
            })
        );
    }

    #[test]
    fn context_lines_keep_the_files_text_and_new_lines_its_indentation() {
        let found = v(&["\tkeep();\n", "\told();\n"]);
        let old = v(&["    keep();\n", "    old();\n"]);
        let new = v(&["    keep();\n", "    new();\n"]);
        // Regression: the added line kept the model's spaces in a tab-indented file.
        assert_eq!(
            keep_context(&found, &old, &new),
            ["\tkeep();\n", "\tnew();\n"]
        );
    }

    #[test]
    fn a_relaxed_line_without_a_break_never_matches_one_with_a_break() {
        // Regression: "b" (no final newline in the patch) matched the middle line "b\n",
        // and the replacement swallowed the line after it.
        let file = v(&["a\n", "b\n", "c\n"]);
        let old = v(&["b"]);
        for level in [
            MatchLevel::TrailingWhitespace,
            MatchLevel::Whitespace,
            MatchLevel::Punctuation,
        ] {
            assert_eq!(
                locate(&file, &q(&old, level)),
                Err(Miss::Nowhere),
                "{level:?}"
            );
        }
        // Positive control: the last line of a file without a final newline matches, and
        // a CRLF line matches an LF one once whitespace is relaxed.
        let file = v(&["a\n", "b"]);
        assert_eq!(
            locate(&file, &q(&old, MatchLevel::TrailingWhitespace)).map(|f| f.at),
            Ok(1)
        );
        let file = v(&["a\r\n", "b  \r\n"]);
        let old = v(&["b\n"]);
        assert_eq!(
            locate(&file, &q(&old, MatchLevel::TrailingWhitespace)).map(|f| f.at),
            Ok(1)
        );
    }

    #[test]
    fn a_line_number_far_past_the_end_is_found_at_once() {
        // Regression: @@ -2000000000 made the search walk two billion positions.
        let file = v(&["a\n", "b\n"]);
        let old = v(&["b\n"]);
        let mut query = q(&old, MatchLevel::Exact);
        query.wanted = Some(2_000_000_000);
        assert_eq!(locate(&file, &query).map(|f| f.at), Ok(1));
    }
}
