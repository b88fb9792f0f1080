//! `edit_file`: replacements, all or nothing.
//!
//! Each `old_text` must occur exactly once (or `replace_all` is set). Edits apply in order to
//! the result of the previous one. Where the call allows a relaxed `match` level and an
//! `old_text` is not found exactly, it may match whole lines at that level (uniquely); its
//! `new_text` then takes the file's indentation (`patch::indent`), and the edit is
//! reported. A CRLF file is edited through its LF view, so the agent writes `\n`; its BOM,
//! its encoding and its final newline (or lack of one) are kept (`text_file`). When
//! `old_text` is not found, the error says whether only whitespace or line endings differ,
//! names the closest lines, and shows the first line and column where old_text and the
//! closest candidate part, invisible characters spelled out (`visible`).

use similar::TextDiff;

use crate::api::{EditFileArgs, MatchLevel, MutationResult, RelaxedHunk};
use crate::audit::CallLog;
use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::tools::patch::indent::Indent;
use crate::tools::patch::locate::{locate, Miss, Query};
use crate::tools::session::Session;
use crate::tools::text_file::{line_of, TextFile};
use crate::tools::txn::{check_expected, check_size, commit, writable, Change, Guard};

/// Most match lines listed in an `EDIT_AMBIGUOUS` error.
const MAX_LISTED: usize = 50;

/// Applies exact replacements to one file.
///
/// # Errors
/// `INVALID_INPUT` (no edits, empty or unchanged `old_text`), `PATH_REJECTED`,
/// `POLICY_DENIED`, `NOT_FOUND`, `WRITE_CONFLICT`, `UNSUPPORTED_BINARY`, `ENCODING_ERROR`,
/// `EDIT_NO_MATCH`, `EDIT_AMBIGUOUS`, `LIMIT_EXCEEDED`, `IO_ERROR`.
pub fn edit_file(s: &Session, log: &mut CallLog, a: &EditFileArgs) -> ToolResult<MutationResult> {
    if a.edits.is_empty() {
        return Err(ToolError::invalid(
            "edits is empty; give at least one {old_text, new_text}",
        ));
    }
    let w = writable(s, &a.path)?;
    w.need_content()?;
    let shown = w.requested.to_string();
    if !w.exists() {
        return Err(ToolError::new(
            ErrorCode::NotFound,
            format!("'{shown}' does not exist; use write_file to create it"),
        )
        .with_path(shown));
    }
    let before = w.read(s)?;
    check_expected(
        s,
        &shown,
        Some(&before),
        a.expected_sha256.as_deref(),
        Guard::Content,
    )?;
    let file = TextFile::decode(
        &shown,
        &before,
        &mut crate::tools::mutate::declared(s, log, &w.target),
    )?;
    let mut body = file.lf_view();
    let crlf = file.ending == crate::api::LineEnding::Crlf;
    let max = a.match_level.unwrap_or_default();
    let mut relaxed = Vec::new();
    for (i, e) in a.edits.iter().enumerate() {
        let n = i + 1;
        let (old, new) = if crlf {
            (
                e.old_text.replace("\r\n", "\n"),
                e.new_text.replace("\r\n", "\n"),
            )
        } else {
            (e.old_text.clone(), e.new_text.clone())
        };
        if old.is_empty() {
            return Err(ToolError::invalid(format!(
                "edit {n}: old_text is empty; use write_file or append_file to add text to a file"
            )));
        }
        if old == new {
            return Err(ToolError::invalid(format!(
                "edit {n}: old_text and new_text are the same"
            )));
        }
        let hits = occurrences(&body, &old);
        match hits.len() {
            0 if max > MatchLevel::Exact => match relaxed_lines(&body, &old, &new, max) {
                Ok((replaced, line, level)) => {
                    body = replaced;
                    relaxed.push(RelaxedHunk {
                        path: shown.clone(),
                        hunk: n as u32,
                        line: line as u32,
                        level,
                    });
                }
                Err(Miss::Nowhere) => return Err(no_match(&shown, n, &body, &old, max)),
                Err(Miss::Ambiguous { level, lines }) => {
                    let lines: Vec<String> = lines.iter().map(ToString::to_string).collect();
                    return Err(ToolError::new(
                        ErrorCode::EditAmbiguous,
                        format!(
                            "edit {n}: old_text is not in '{shown}' exactly, and with matching \"{}\" it matches at several places (lines {}); include more surrounding lines to make it unique",
                            level.as_str(),
                            lines.join(", ")
                        ),
                    )
                    .with_path(shown)
                    .with_detail("edit", n.to_string())
                    .with_detail("match_lines", lines.join(",")));
                }
            },
            0 => return Err(no_match(&shown, n, &body, &old, max)),
            1 => body.replace_range(hits[0]..hits[0] + old.len(), &new),
            _ if e.replace_all.unwrap_or(false) => body = body.replace(&old, &new),
            n_hits => {
                let count = if n_hits >= MAX_COUNTED {
                    format!("{MAX_COUNTED} or more")
                } else {
                    n_hits.to_string()
                };
                let lines: Vec<String> = hits
                    .iter()
                    .take(MAX_LISTED)
                    .map(|&h| line_of(&body, h).to_string())
                    .collect();
                return Err(ToolError::new(
                    ErrorCode::EditAmbiguous,
                    format!(
                        "edit {n}: old_text occurs {count} times in '{shown}' (lines {}); include more surrounding lines to make it unique, or set replace_all",
                        lines.join(", ")
                    ),
                )
                .with_path(shown)
                .with_detail("edit", n.to_string())
                .with_detail("match_lines", lines.join(",")));
            }
        }
    }
    let after = file.encode(
        &shown,
        &body,
        &mut crate::tools::mutate::declared(s, log, &w.target),
    )?;
    check_size(s, &shown, after.len())?;
    let mut warnings = Vec::new();
    for r in &relaxed {
        let note = format!(
            "edit {} of '{}' matched line {} only with matching \"{}\"; new_text took the file's indentation",
            r.hunk,
            r.path,
            r.line,
            r.level.as_str()
        );
        log.notes.push(format!("edit_file: {note}"));
        warnings.push(note);
    }
    let mut change = Change::new(w.target, shown, Some(before), Some(after));
    change.encoding = Some(file.encoding).filter(|e| *e != crate::text::encoding::Encoding::Utf8);
    let mut result = commit(s, log, vec![change], a.dry_run.unwrap_or(false), warnings)?;
    result.relaxed_hunks = relaxed;
    Ok(result)
}

/// Lines of `text`, each with its line break; a last line without one gets one, and the
/// answer says whether it did.
fn whole_lines(text: &str) -> (Vec<String>, bool) {
    let mut lines: Vec<String> = text.split_inclusive('\n').map(String::from).collect();
    let padded = lines.last().is_some_and(|l| !l.ends_with('\n'));
    if let Some(l) = lines.last_mut().filter(|_| padded) {
        l.push('\n');
    }
    (lines, padded)
}

/// Replaces the whole lines of `body` that `old` matches at a relaxed level up to `max`
/// with `new` in the file's indentation: the new body, the first matched line (from 1)
/// and the level needed.
fn relaxed_lines(
    body: &str,
    old: &str,
    new: &str,
    max: MatchLevel,
) -> Result<(String, usize, MatchLevel), Miss> {
    let (mut lines, body_padded) = whole_lines(body);
    let (old_lines, _) = whole_lines(old);
    let found = locate_unique(&lines, &old_lines, max)?;
    let at = found.at;
    let matched = &lines[at..at + old_lines.len()];
    let indent = Indent::learn(matched, &old_lines);
    let (new_lines, _) = whole_lines(new);
    let replacement: Vec<String> = new_lines.iter().map(|l| indent.apply(l)).collect();
    lines.splice(at..at + old_lines.len(), replacement);
    let mut out = lines.concat();
    if body_padded && out.ends_with('\n') {
        out.pop();
    }
    Ok((out, at + 1, found.level))
}

/// Where `old` matches whole `lines` anywhere, at the strictest level up to `max` (a
/// relaxed match must be the only one).
fn locate_unique(
    lines: &[String],
    old: &[String],
    max: MatchLevel,
) -> Result<crate::tools::patch::locate::Found, Miss> {
    locate(
        lines,
        &Query {
            old,
            from: 0,
            wanted: None,
            at_eof: false,
            max,
        },
    )
}

/// The loosest level, up to punctuation, at which `old` would match whole lines of `body`
/// uniquely, when a stricter one than asked (`asked`) does not.
fn would_match(body: &str, old: &str, asked: MatchLevel) -> Option<MatchLevel> {
    if asked >= MatchLevel::Punctuation {
        return None;
    }
    let (lines, _) = whole_lines(body);
    let (old_lines, _) = whole_lines(old);
    locate_unique(&lines, &old_lines, MatchLevel::Punctuation)
        .ok()
        .map(|f| f.level)
        .filter(|l| *l > asked)
}

/// Most occurrences counted (enough to say "ambiguous" and list them).
const MAX_COUNTED: usize = 1000;

/// Start offsets of every occurrence, overlapping ones included (at most `MAX_COUNTED`).
fn occurrences(hay: &str, needle: &str) -> Vec<usize> {
    let step = needle.chars().next().map_or(1, char::len_utf8);
    let finder = memchr::memmem::Finder::new(needle.as_bytes());
    let mut out = Vec::new();
    let mut start = 0;
    while out.len() < MAX_COUNTED {
        let Some(p) = finder.find(&hay.as_bytes()[start..]) else {
            break;
        };
        out.push(start + p);
        start += p + step;
    }
    out
}

fn squash_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Builds `EDIT_NO_MATCH` with the best diagnosis available.
fn no_match(shown: &str, n: usize, body: &str, old: &str, asked: MatchLevel) -> ToolError {
    let e = no_match_at_all(shown, n, body, old);
    match would_match(body, old, asked) {
        Some(level) => {
            let hint = format!(
                " (with \"match\": \"{}\" it would match: the new_text then takes the file's indentation)",
                level.as_str()
            );
            ToolError {
                message: format!("{}{hint}", e.message),
                ..e
            }
            .with_detail("would_match_level", level.as_str().to_string())
        }
        None => e,
    }
}

/// [`no_match`] without the looser level that would match.
fn no_match_at_all(shown: &str, n: usize, body: &str, old: &str) -> ToolError {
    let err = |msg: String| {
        ToolError::new(ErrorCode::EditNoMatch, msg)
            .with_path(shown)
            .with_detail("edit", n.to_string())
    };
    // Line endings: the agent sent CRLF for an LF file, or LF for lines that end in CRLF.
    for variant in [
        old.replace("\r\n", "\n"),
        old.replace("\r\n", "\n").replace('\n', "\r\n"),
    ] {
        if variant != old {
            if let Some(p) = body.find(&variant) {
                let line = line_of(body, p);
                return err(format!(
                    "edit {n}: old_text was not found in '{shown}', but it matches at line {line} if only line endings differ; send it with the file's line endings"
                ))
                .with_detail("closest_lines", line.to_string());
            }
        }
    }
    // Whitespace: the same lines apart from indentation or spacing.
    let old_lines: Vec<String> = old
        .lines()
        .map(squash_ws)
        .filter(|l| !l.is_empty())
        .collect();
    let body_lines: Vec<&str> = body.lines().collect();
    if !old_lines.is_empty() {
        let squashed: Vec<String> = body_lines.iter().map(|l| squash_ws(l)).collect();
        let nonblank: Vec<usize> = (0..squashed.len())
            .filter(|&i| !squashed[i].is_empty())
            .collect();
        let found: Vec<usize> = nonblank
            .windows(old_lines.len())
            .filter(|w| w.iter().zip(&old_lines).all(|(&i, o)| &squashed[i] == o))
            .map(|w| w[0] + 1)
            .take(5)
            .collect();
        if !found.is_empty() {
            let lines: Vec<String> = found.iter().map(ToString::to_string).collect();
            let first_old = old.lines().position(|l| !l.trim().is_empty()).unwrap_or(0);
            let (note, details) =
                divergence(&body_lines, old, (found[0] - 1).saturating_sub(first_old));
            let mut e = err(format!(
                "edit {n}: old_text was not found in '{shown}'; it differs only in whitespace (indentation or spacing) from line(s) {}{note}; re-read those lines and copy them exactly",
                lines.join(", ")
            ))
            .with_detail("closest_lines", lines.join(","));
            for (k, v) in details {
                e = e.with_detail(k, v);
            }
            return e;
        }
    }
    // Otherwise: the lines most like the first line of old_text.
    let first = old
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let mut scored: Vec<(f32, usize)> = body_lines
        .iter()
        .enumerate()
        .take(50_000)
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| (TextDiff::from_chars(first, l.trim()).ratio(), i))
        .filter(|(r, _)| *r >= 0.5)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.truncate(3);
    if scored.is_empty() {
        return err(format!(
            "edit {n}: old_text was not found in '{shown}' and no line resembles it; re-read the file (read_file) and copy the text exactly"
        ));
    }
    let shown_lines: Vec<String> = scored
        .iter()
        .map(|(_, i)| {
            format!(
                "line {}: {}",
                i + 1,
                body_lines[*i].trim().chars().take(120).collect::<String>()
            )
        })
        .collect();
    let numbers: Vec<String> = scored.iter().map(|(_, i)| (i + 1).to_string()).collect();
    let first_old = old.lines().position(|l| !l.trim().is_empty()).unwrap_or(0);
    let (note, details) = divergence(&body_lines, old, scored[0].1.saturating_sub(first_old));
    let mut e = err(format!(
        "edit {n}: old_text was not found in '{shown}'. Closest lines: {}{note}. Re-read the file and copy the text exactly",
        shown_lines.join(" | ")
    ))
    .with_detail("closest_lines", numbers.join(","));
    for (k, v) in details {
        e = e.with_detail(k, v);
    }
    e
}

/// Where `old` first differs from the file's lines from index `start`: a sentence for the
/// message and the details (`diverges_at_line`, `diverges_at_column`, `difference`,
/// `expected_text`, `found_text`), invisible characters spelled out. `old` may begin and
/// end inside a line, so its first line is compared with the end of the file's line and
/// its last with the start of one.
fn divergence(
    body_lines: &[&str],
    old: &str,
    start: usize,
) -> (String, Vec<(&'static str, String)>) {
    let want: Vec<&str> = old.lines().collect();
    if want.is_empty() {
        return (String::new(), Vec::new());
    }
    let mut have: Vec<&str> = body_lines
        .iter()
        .skip(start)
        .take(want.len())
        .copied()
        .collect();
    if let (Some(h), Some(w)) = (have.first_mut(), want.first()) {
        if h.ends_with(w) {
            *h = &h[h.len() - w.len()..];
        }
    }
    if want.len() > 1 || have.first().is_some_and(|h| !h.ends_with(want[0])) {
        if let (Some(h), Some(w)) = (have.get_mut(want.len() - 1), want.last()) {
            if h.starts_with(w) {
                *h = &h[..w.len()];
            }
        }
    }
    let Some(d) = crate::text::visible::first_divergence(&want, &have) else {
        return (String::new(), Vec::new());
    };
    let line = start + d.index + 1;
    let found = d
        .found
        .clone()
        .unwrap_or_else(|| "(end of file)".to_string());
    let note = format!(
        ". First difference at line {line}, column {} ({}): old_text has \"{}\", the file has \"{}\" (invisible characters shown as ⟨TAB⟩, ⟨NBSP⟩, ⟨CR⟩, trailing spaces as ⟨SP⟩)",
        d.column, d.what, d.expected, found
    );
    let details = vec![
        ("diverges_at_line", line.to_string()),
        ("diverges_at_column", d.column.to_string()),
        ("difference", d.what),
        ("expected_text", d.expected),
        ("found_text", found),
    ];
    (note, details)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_occurrences_count() {
        assert_eq!(occurrences("aaa", "aa"), [0, 1]);
        assert_eq!(occurrences("éaéa", "éa"), [0, 3]);
    }

    #[test]
    fn no_match_shows_the_first_divergent_line_and_column_with_invisibles_visible() {
        // Regression: only the closest lines were named, not where or why they differ.
        let body = "fn main() {\n    let total = compute(a,\u{a0}b);\n}\n";
        let e = no_match(
            "f",
            1,
            body,
            "fn main() {\n    let total = compute(a, c);\n}",
            MatchLevel::Exact,
        );
        assert!(e.message.contains("line 2, column 27"), "{}", e.message);
        assert!(e.message.contains("⟨NBSP⟩"), "{}", e.message);
        assert_eq!(
            e.details.get("diverges_at_line").map(String::as_str),
            Some("2")
        );
        assert_eq!(
            e.details.get("diverges_at_column").map(String::as_str),
            Some("27")
        );
        assert!(
            e.details["found_text"].contains("compute(a,⟨NBSP⟩b)"),
            "{:?}",
            e.details
        );
        // Whitespace-only differences say which character differs.
        let body = "if x {\n\treturn 1;  \n}\n";
        let e = no_match("f", 1, body, "if x {\n    return 1;\n}", MatchLevel::Exact);
        assert!(e.message.contains("whitespace"), "{}", e.message);
        assert!(
            e.message.contains("⟨TAB⟩return 1;⟨SP⟩⟨SP⟩"),
            "{}",
            e.message
        );
        assert_eq!(
            e.details.get("diverges_at_line").map(String::as_str),
            Some("2")
        );
    }

    #[test]
    fn diagnoses_whitespace_and_line_endings() {
        let body = "fn main() {\n    let x = 1;\n}\n";
        let e = no_match(
            "f",
            1,
            body,
            "fn main() {\n  let x = 1;\n}",
            MatchLevel::Exact,
        );
        assert!(e.message.contains("whitespace"), "{}", e.message);
        assert_eq!(
            e.details.get("closest_lines").map(String::as_str),
            Some("1")
        );
        let e = no_match("f", 1, body, "let x = 1;\r\n}", MatchLevel::Exact);
        assert!(e.message.contains("line endings"), "{}", e.message);
        let e = no_match("f", 1, body, "let y = 1;", MatchLevel::Exact);
        assert!(e.message.contains("line 2"), "{}", e.message);
        let e = no_match("f", 1, body, "zzzzzzzzzzzzzzzzzzzz", MatchLevel::Exact);
        assert!(e.message.contains("no line resembles"), "{}", e.message);
    }

    #[test]
    fn a_relaxed_edit_takes_the_files_tabs_and_keeps_everything_else() {
        let body = "fn f() {\n\tif x {\n\t\treturn 1;\n\t}\n}";
        let old = "    if x {\n        return 1;\n    }";
        let new = "    if x {\n        log();\n        return 2;\n    }";
        let (out, line, level) = relaxed_lines(body, old, new, MatchLevel::Whitespace).unwrap();
        assert_eq!(out, "fn f() {\n\tif x {\n\t\tlog();\n\t\treturn 2;\n\t}\n}");
        assert_eq!((line, level), (2, MatchLevel::Whitespace));
        // Not allowed at trailing_whitespace: indentation differs.
        assert!(relaxed_lines(body, old, new, MatchLevel::TrailingWhitespace).is_err());
        // Unique or nothing.
        let twice = "\tx();\n\tx();\n";
        assert!(matches!(
            relaxed_lines(twice, "    x();", "    y();", MatchLevel::Whitespace),
            Err(Miss::Ambiguous { .. })
        ));
    }

    #[test]
    fn an_exact_miss_names_the_looser_level_that_would_match() {
        let body = "\tif x {\n\t\treturn 1;\n\t}\n";
        let e = no_match(
            "f",
            1,
            body,
            "    if x {\n        return 1;\n    }",
            MatchLevel::Exact,
        );
        assert_eq!(
            e.details.get("would_match_level").map(String::as_str),
            Some("whitespace")
        );
        assert!(
            e.message.contains("\"match\": \"whitespace\""),
            "{}",
            e.message
        );
        // Positive control: text that matches at no level names none.
        let e = no_match("f", 1, body, "while y {", MatchLevel::Exact);
        assert!(!e.details.contains_key("would_match_level"));
    }
}
