//! Applying one file's hunks in memory: each hunk located (`locate`) from where the last
//! one ended, at its stated line or the nearest match, exactly or at the relaxed level the
//! call allows; CRLF files take LF patches; a file without a final newline is matched as
//! if it had one and keeps its state; a file's BOM is matched only by a patch that shows
//! it, and kept. A hunk that does not match is a `PATCH_CONFLICT`
//! that shows expected and found lines and the first difference, invisibles spelled out.

use super::{conflict, locate, FilePatch, Hunk};
use crate::api::{LineEnding, MatchLevel, RelaxedHunk};
use crate::error::{ToolError, ToolResult};
use crate::tools::text_file::ending_of;

/// What planning a patch tells the agent besides the change itself.
#[derive(Debug, Default)]
pub struct Notes {
    /// The loosest matching the call allows.
    pub max: MatchLevel,
    pub warnings: Vec<String>,
    pub relaxed: Vec<RelaxedHunk>,
}

/// Applies a file's hunks to its content.
pub(super) fn apply_hunks(
    shown: &str,
    content: &str,
    fp: &FilePatch,
    notes: &mut Notes,
) -> ToolResult<String> {
    // A BOM belongs to the first line as git shows it (U+FEFF, which the patch then holds);
    // a patch written from `read_file`'s content, which leaves the BOM out, is matched
    // without it, and the file keeps it.
    if let Some(rest) = content.strip_prefix('\u{feff}') {
        let mentions_bom = fp.hunks.iter().any(|h| {
            h.old
                .iter()
                .chain(&h.new)
                .any(|l| l.starts_with('\u{feff}'))
        });
        if !mentions_bom {
            return apply_hunks(shown, rest, fp, notes).map(|t| format!("\u{feff}{t}"));
        }
    }
    // A file without a final newline is matched as if it had one, unless the patch itself
    // says which lines have none (`\ No newline at end of file`); the file keeps its state.
    let nl = if ending_of(content) == LineEnding::Crlf {
        "\r\n"
    } else {
        "\n"
    };
    let marks_eol = fp
        .hunks
        .iter()
        .any(|h| h.old.iter().chain(&h.new).any(|l| !l.ends_with('\n')));
    let pad = !content.is_empty() && !content.ends_with('\n') && !marks_eol;
    let padded;
    let content = if pad {
        padded = format!("{content}{nl}");
        padded.as_str()
    } else {
        content
    };
    let mut lines: Vec<String> = content.split_inclusive('\n').map(str::to_string).collect();
    // A patch written with LF for a file that uses CRLF throughout is read in the file's style.
    let translate = ending_of(content) == LineEnding::Crlf
        && !fp
            .hunks
            .iter()
            .any(|h| h.old.iter().chain(&h.new).any(|l| l.contains('\r')));
    if translate {
        notes.warnings.push(format!("'{shown}' uses CRLF line endings; the patch's LF lines were matched and written as CRLF"));
    }
    let fix = |v: &[String]| -> Vec<String> {
        if translate {
            v.iter()
                .map(|l| {
                    l.strip_suffix('\n')
                        .map_or_else(|| l.clone(), |b| format!("{b}\r\n"))
                })
                .collect()
        } else {
            v.to_vec()
        }
    };
    let mut cursor = 0usize;
    let mut delta: isize = 0;
    let mut touched_end = false;
    for (k, h) in fp.hunks.iter().enumerate() {
        let n = k + 1;
        let old = fix(&h.old);
        let new = fix(&h.new);
        let mut from = cursor;
        if let Some(anchor) = &h.anchor {
            let found = (cursor..lines.len())
                .find(|&i| lines[i].trim_end_matches(['\n', '\r']).trim() == anchor.trim());
            match found {
                Some(i) => from = i + 1,
                None => {
                    return Err(conflict(shown, format!("hunk {n} of '{shown}' (patch line {}): the line '{}' it is anchored to was not found", h.line, crate::text::visible::visible(anchor)))
                        .with_detail("hunk", n.to_string()))
                }
            }
        }
        let mut wanted: Option<usize> = h.old_start.map(|start| {
            let base = if old.is_empty() {
                start
            } else {
                start.saturating_sub(1)
            };
            (base as isize + delta).max(0) as usize
        });
        if wanted.is_none() && old.is_empty() && h.anchor.is_some() {
            // Pure insertion right after its anchor line.
            wanted = Some(from);
        }
        let query = locate::Query {
            old: &old,
            from,
            wanted,
            at_eof: h.at_eof,
            max: notes.max,
        };
        let found = match locate::locate(&lines, &query) {
            Ok(f) => f,
            Err(locate::Miss::Ambiguous { level, lines: at }) => {
                let at: Vec<String> = at.iter().map(ToString::to_string).collect();
                return Err(conflict(
                    shown,
                    format!(
                        "hunk {n} of '{shown}' (patch line {}) does not match exactly, and with matching \"{}\" it matches at several places (lines {}); add context lines, or an @@ line, to tell them apart",
                        h.line,
                        level.as_str(),
                        at.join(", ")
                    ),
                )
                .with_detail("hunk", n.to_string())
                .with_detail("match_lines", at.join(",")));
            }
            Err(locate::Miss::Nowhere) => {
                let at = wanted.unwrap_or_else(|| locate::closest(&lines, &old, from, from));
                return Err(hunk_conflict(shown, n, h, &lines, &old, at, notes.max));
            }
        };
        let at = found.at;
        if let Some(w) = wanted {
            if w != at {
                let off = at as isize - w as isize;
                notes.warnings.push(format!(
                    "hunk {n} of '{shown}' applied at line {} (offset {off:+})",
                    at + 1
                ));
            }
        }
        let new = if found.level == MatchLevel::Exact {
            new
        } else {
            notes.warnings.push(format!(
                "hunk {n} of '{shown}' matched line {} only with matching \"{}\"; the file's own text was kept in its context lines",
                at + 1,
                found.level.as_str()
            ));
            notes.relaxed.push(RelaxedHunk {
                path: shown.to_string(),
                hunk: n as u32,
                line: at as u32 + 1,
                level: found.level,
            });
            locate::keep_context(&lines[at..at + old.len()], &old, &new)
        };
        touched_end |= at + old.len() == lines.len();
        lines.splice(at..at + old.len(), new.iter().cloned());
        delta += new.len() as isize - old.len() as isize;
        cursor = at + new.len();
    }
    let mut out = lines.concat();
    if pad {
        if let Some(cut) = out.strip_suffix(nl) {
            out.truncate(cut.len());
        }
        if touched_end {
            notes.warnings.push(format!("'{shown}' has no final newline; its last line was matched as if it had one, and the file still ends without one"));
        }
    }
    Ok(out)
}

fn hunk_conflict(
    shown: &str,
    n: usize,
    h: &Hunk,
    lines: &[String],
    old: &[String],
    at: usize,
    max: MatchLevel,
) -> ToolError {
    let show = |v: &[String]| -> String {
        v.iter()
            .take(6)
            .map(|l| {
                format!(
                    "  {}",
                    crate::text::visible::visible(l.trim_end_matches(['\n', '\r']))
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let found_end = (at + old.len().max(1)).min(lines.len());
    let found = if at < lines.len() {
        show(&lines[at..found_end])
    } else {
        "  (end of file)".to_string()
    };
    let mut err_text = format!(
        "hunk {n} of '{shown}' (patch line {}) does not match the file; expected at line {}:\n{}\nfound:\n{}",
        h.line,
        at + 1,
        show(old),
        found
    );
    let div = crate::text::visible::first_divergence(old, lines.get(at..).unwrap_or(&[]));
    if let Some(d) = &div {
        err_text.push_str(&format!(
            "\nfirst difference at line {}, column {}: {}\n  expected: {}\n  found:    {}",
            at + d.index + 1,
            d.column,
            d.what,
            d.expected,
            d.found.as_deref().unwrap_or("(end of file)")
        ));
    }
    if max == MatchLevel::Exact {
        err_text.push_str("\n(invisible characters are shown as ⟨TAB⟩, ⟨CR⟩, ⟨NBSP⟩, ⟨SP⟩ for trailing spaces...). Re-read the file and regenerate the patch, or, if only whitespace or punctuation differs, retry with \"match\": \"whitespace\" or \"punctuation\"");
    } else {
        err_text.push_str(&format!("\n(invisible characters are shown as ⟨TAB⟩, ⟨CR⟩, ⟨NBSP⟩, ⟨SP⟩ for trailing spaces...; no match even with matching \"{}\"). Re-read the file and regenerate the patch", max.as_str()));
    }
    let mut e = conflict(shown, err_text)
        .with_detail("hunk", n.to_string())
        .with_detail("expected_line", (at + 1).to_string());
    if let Some(d) = div {
        e = e
            .with_detail("diverges_at_line", (at + d.index + 1).to_string())
            .with_detail("diverges_at_column", d.column.to_string())
            .with_detail("difference", d.what)
            .with_detail("expected_text", d.expected)
            .with_detail("found_text", d.found.unwrap_or_default());
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    fn apply_hunks(
        shown: &str,
        content: &str,
        fp: &FilePatch,
        warnings: &mut Vec<String>,
    ) -> ToolResult<String> {
        let mut notes = Notes::default();
        let r = super::apply_hunks(shown, content, fp, &mut notes);
        warnings.extend(notes.warnings);
        r
    }

    fn fp(hunks: Vec<Hunk>) -> FilePatch {
        FilePatch {
            old_path: Some("f".into()),
            new_path: Some("f".into()),
            hunks,
            ..Default::default()
        }
    }

    fn h(start: Option<usize>, old: &[&str], new: &[&str]) -> Hunk {
        Hunk {
            old_start: start,
            old: old.iter().map(|s| s.to_string()).collect(),
            new: new.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn hunks_apply_in_place_and_at_offsets() {
        let mut w = Vec::new();
        let text = "a\nb\nc\nd\ne\n";
        let out = apply_hunks(
            "f",
            text,
            &fp(vec![
                h(Some(2), &["b\n"], &["B\n"]),
                h(Some(4), &["d\n"], &["D\n", "D2\n"]),
            ]),
            &mut w,
        )
        .unwrap();
        assert_eq!(out, "a\nB\nc\nD\nD2\ne\n");
        assert!(w.is_empty());
        let out =
            apply_hunks("f", text, &fp(vec![h(Some(1), &["c\n"], &["C\n"])]), &mut w).unwrap();
        assert_eq!(out, "a\nb\nC\nd\ne\n");
        assert!(w[0].contains("offset +2"), "{w:?}");
    }

    #[test]
    fn mismatched_context_is_a_conflict_naming_the_hunk() {
        let e = apply_hunks(
            "f",
            "a\nb\n",
            &fp(vec![h(Some(1), &["x\n"], &["y\n"])]),
            &mut Vec::new(),
        )
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::PatchConflict);
        assert_eq!(e.details.get("hunk").map(String::as_str), Some("1"));
        assert!(e.message.contains("expected at line 1"), "{}", e.message);
    }

    #[test]
    fn pure_insertions_use_the_header_line() {
        let out = apply_hunks(
            "f",
            "a\nb\n",
            &fp(vec![h(Some(1), &[], &["x\n"])]),
            &mut Vec::new(),
        )
        .unwrap();
        assert_eq!(out, "a\nx\nb\n");
        let out = apply_hunks(
            "f",
            "a\nb\n",
            &fp(vec![h(Some(0), &[], &["x\n"])]),
            &mut Vec::new(),
        )
        .unwrap();
        assert_eq!(out, "x\na\nb\n");
    }

    #[test]
    fn crlf_files_take_lf_patches() {
        let mut w = Vec::new();
        let out = apply_hunks(
            "f",
            "a\r\nb\r\n",
            &fp(vec![h(Some(2), &["b\n"], &["c\n"])]),
            &mut w,
        )
        .unwrap();
        assert_eq!(out, "a\r\nc\r\n");
        assert_eq!(w.len(), 1);
    }

    /// Regression: a patch written from what `read_file` returns (no BOM) did not match the
    /// first line of a file with one; a patch that shows the BOM, as git does, still does.
    #[test]
    fn a_bom_is_matched_only_when_the_patch_shows_it() {
        let without = fp(vec![h(Some(1), &["a\n", "b\n"], &["a\n", "c\n"])]);
        assert_eq!(
            apply_hunks("f", "\u{feff}a\nb\n", &without, &mut Vec::new()).unwrap(),
            "\u{feff}a\nc\n"
        );
        let with = fp(vec![h(Some(1), &["\u{feff}a\n"], &["\u{feff}z\n"])]);
        assert_eq!(
            apply_hunks("f", "\u{feff}a\nb\n", &with, &mut Vec::new()).unwrap(),
            "\u{feff}z\nb\n"
        );
    }

    fn envelope(hunks: Vec<Hunk>) -> FilePatch {
        let mut p = fp(hunks);
        p.envelope = true;
        p
    }

    #[test]
    fn envelope_hunks_change_the_last_line_of_a_file_without_final_newline() {
        // Regression: every such hunk failed with a conflict whose expected and found
        // lines looked the same ("b" against "b\n").
        let mut w = Vec::new();
        let p = envelope(vec![h(None, &["a\n", "b\n"], &["a\n", "c\n"])]);
        assert_eq!(apply_hunks("f", "a\nb", &p, &mut w).unwrap(), "a\nc");
        assert!(w.iter().any(|w| w.contains("no final newline")), "{w:?}");
        // The same in a CRLF file, and when the last line is deleted.
        let p = envelope(vec![h(None, &["b\n"], &["c\n"])]);
        assert_eq!(
            apply_hunks("f", "a\r\nb", &p, &mut Vec::new()).unwrap(),
            "a\r\nc"
        );
        let p = envelope(vec![h(None, &["a\n", "b\n"], &["a\n"])]);
        assert_eq!(apply_hunks("f", "a\nb", &p, &mut Vec::new()).unwrap(), "a");
        // A file with a final newline is untouched by the rule.
        let p = envelope(vec![h(None, &["b\n"], &["c\n"])]);
        assert_eq!(
            apply_hunks("f", "a\nb\n", &p, &mut Vec::new()).unwrap(),
            "a\nc\n"
        );
    }

    #[test]
    fn conflicts_show_invisible_differences_and_the_first_divergent_column() {
        let e = apply_hunks(
            "f",
            "fn x() {\n\tlet a = 1;\n}\n",
            &envelope(vec![h(None, &["fn x() {\n", "    let a = 1;\n"], &["y\n"])]),
            &mut Vec::new(),
        )
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::PatchConflict);
        assert!(e.message.contains("⟨TAB⟩let a = 1;"), "{}", e.message);
        assert_eq!(
            e.details.get("diverges_at_line").map(String::as_str),
            Some("2")
        );
        assert_eq!(
            e.details.get("diverges_at_column").map(String::as_str),
            Some("1")
        );
        let e = apply_hunks(
            "f",
            "a  \nb\n",
            &fp(vec![h(Some(1), &["a\n"], &["c\n"])]),
            &mut Vec::new(),
        )
        .unwrap_err();
        assert!(e.message.contains("a⟨SP⟩⟨SP⟩"), "{}", e.message);
    }

    #[test]
    fn envelope_hunks_follow_anchors_and_eof() {
        let mut p = fp(vec![Hunk {
            anchor: Some("fn b() {".into()),
            old: vec!["    x\n".into()],
            new: vec!["    y\n".into()],
            ..Default::default()
        }]);
        p.envelope = true;
        let text = "fn a() {\n    x\n}\nfn b() {\n    x\n}\n";
        let out = apply_hunks("f", text, &p, &mut Vec::new()).unwrap();
        assert_eq!(out, "fn a() {\n    x\n}\nfn b() {\n    y\n}\n");
        let mut p = fp(vec![Hunk {
            at_eof: true,
            old: vec!["x\n".into()],
            new: vec!["z\n".into()],
            ..Default::default()
        }]);
        p.envelope = true;
        let out = apply_hunks("f", "x\ny\nx\n", &p, &mut Vec::new()).unwrap();
        assert_eq!(out, "x\ny\nz\n");
    }
}
