//! `apply_patch`: unified diffs and the `*** Begin Patch` envelope, applied all or nothing.
//!
//! Parsing (`parse`) yields [`FilePatch`]es. Planning then checks the budget, guards every
//! path (old and new), applies every hunk in memory — context must match exactly; a hunk
//! may be found at an offset from its stated line (reported), never by fuzz — and only
//! when every file of the patch applies does `txn::commit` write anything.

mod locate;
mod parse;
#[cfg(test)]
mod tests_native;

use std::collections::BTreeMap;

use crate::api::{ApplyPatchArgs, LineEnding, MatchLevel, MutationResult, RelaxedHunk};
use crate::audit::CallLog;
use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::path::LogicalPath;
use crate::session::Session;
use crate::text::ending_of;
use crate::txn::{check_size, commit, writable, Change};

pub use parse::parse;

/// One file's part of a patch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FilePatch {
    /// Path before (`None`: the file is created).
    pub old_path: Option<String>,
    /// Path after (`None`: the file is deleted).
    pub new_path: Option<String>,
    pub hunks: Vec<Hunk>,
    pub created: bool,
    pub deleted: bool,
    pub binary: bool,
    /// A git mode for a symlink (120000) or submodule (160000).
    pub special_mode: bool,
    pub mode_change: bool,
    /// From a `diff --git` header.
    pub git: bool,
    /// Had `---`/`+++` lines.
    pub has_headers: bool,
    /// From a `*** Begin Patch` envelope (hunks located by context only).
    pub envelope: bool,
    /// Patch line of the file's header.
    pub line: usize,
}

/// One hunk: lines carry their terminators (`"x\n"`), except a last line without one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hunk {
    /// Line the old side starts at (from 1), when the header says.
    pub old_start: Option<usize>,
    pub old: Vec<String>,
    pub new: Vec<String>,
    /// Envelope `@@ text`: a line that must come before the hunk.
    pub anchor: Option<String>,
    /// Envelope `*** End of File`: the hunk must end at the end of the file.
    pub at_eof: bool,
    /// Patch line of the hunk header.
    pub line: usize,
}

impl FilePatch {
    /// The path to name in messages: the new one, else the old one.
    pub fn display_path(&self) -> String {
        self.new_path
            .as_ref()
            .or(self.old_path.as_ref())
            .cloned()
            .unwrap_or_default()
    }
}

impl Hunk {
    fn inserted(&self) -> usize {
        self.new.len().saturating_sub(self.common())
    }

    fn deleted(&self) -> usize {
        self.old.len().saturating_sub(self.common())
    }

    /// Context lines (present on both sides), counted from the shorter side's view.
    fn common(&self) -> usize {
        let mut old = self.old.clone();
        old.sort();
        let mut n = 0;
        for l in &self.new {
            if let Ok(i) = old.binary_search(l) {
                old.remove(i);
                n += 1;
            }
        }
        n
    }
}

fn budget_error(msg: String) -> ToolError {
    ToolError::new(
        ErrorCode::PatchBudgetExceeded,
        format!("{msg}; nothing was applied. Split the change into smaller patches"),
    )
}

fn check_budget(s: &Session, text: &str, patches: &[FilePatch]) -> ToolResult<()> {
    let b = &s.policy.config.patch;
    if text.len() as u64 > b.max_bytes {
        return Err(budget_error(format!(
            "the patch is {} bytes, over the {} byte budget",
            text.len(),
            b.max_bytes
        )));
    }
    if patches.len() > b.max_files as usize {
        return Err(budget_error(format!(
            "the patch touches {} files, over the budget of {}",
            patches.len(),
            b.max_files
        )));
    }
    let ins: usize = patches
        .iter()
        .flat_map(|p| &p.hunks)
        .map(Hunk::inserted)
        .sum();
    let del: usize = patches
        .iter()
        .flat_map(|p| &p.hunks)
        .map(Hunk::deleted)
        .sum();
    if ins > b.max_inserted_lines as usize {
        return Err(budget_error(format!(
            "the patch inserts {ins} lines, over the budget of {}",
            b.max_inserted_lines
        )));
    }
    if del > b.max_deleted_lines as usize {
        return Err(budget_error(format!(
            "the patch deletes {del} lines, over the budget of {}",
            b.max_deleted_lines
        )));
    }
    Ok(())
}

/// A file's state while the patch is planned.
struct Planned {
    shown: String,
    target: LogicalPath,
    before: Option<Vec<u8>>,
    now: Option<String>,
    /// The old path and content when this file is the new end of a rename.
    renamed_from: Option<(String, Vec<u8>)>,
    /// The old end of a rename.
    moved_away: bool,
    /// Removed without the patch carrying its content (`*** Delete File`): guarded like a
    /// whole-file change.
    unseen: bool,
}

/// Applies a patch.
///
/// # Errors
/// `PATCH_PARSE_ERROR`, `PATCH_BUDGET_EXCEEDED`, `UNSUPPORTED_BINARY`, `PATH_REJECTED`,
/// `POLICY_DENIED`, `PATCH_CONFLICT` (naming file, hunk, expected and found lines),
/// `ENCODING_ERROR`, `LIMIT_EXCEEDED`, `WRITE_CONFLICT`, `IO_ERROR`.
pub fn apply_patch(
    s: &Session,
    log: &mut CallLog,
    a: &ApplyPatchArgs,
) -> ToolResult<MutationResult> {
    let (patches, warnings) = parse(&a.patch)?;
    let mut notes = Notes {
        max: a.match_level.unwrap_or_default(),
        warnings,
        relaxed: Vec::new(),
    };
    check_budget(s, &a.patch, &patches)?;
    if let Some(fp) = patches.iter().find(|p| p.binary) {
        let p = fp.display_path();
        return Err(ToolError::new(
            ErrorCode::UnsupportedBinary,
            format!("the patch changes binary file '{p}'; binary patches are not supported and nothing was applied"),
        )
        .with_path(p));
    }
    if let Some(fp) = patches.iter().find(|p| p.special_mode) {
        let p = fp.display_path();
        return Err(ToolError::denied(
            &p,
            "symlink",
            format!("the patch makes '{p}' a symlink or submodule; file-tools changes regular files only, and nothing was applied"),
        ));
    }
    // Every path is guarded and checked before any hunk is looked at.
    let mut checked = BTreeMap::new();
    for fp in &patches {
        for p in [&fp.old_path, &fp.new_path].into_iter().flatten() {
            if !checked.contains_key(p) {
                let w = writable(s, p)?;
                w.need_content()?;
                checked.insert(p.clone(), w);
            }
        }
    }
    if !s.policy.config.allow_move {
        let moved = patches
            .iter()
            .find(|fp| match (&fp.old_path, &fp.new_path) {
                (Some(o), Some(n)) => {
                    checked.get(o).map(|w| &w.target) != checked.get(n).map(|w| &w.target)
                }
                _ => false,
            });
        if let Some(fp) = moved {
            let p = fp.display_path();
            return Err(ToolError::denied(&p, "move_disabled", format!("the patch renames '{p}', and the session policy does not allow moving files; nothing was applied. Add the new file and delete the old one instead")));
        }
    }
    let expected = expected_hashes(&a.expected_sha256s)?;
    let mut files: Vec<Planned> = Vec::new();
    for fp in &patches {
        if fp.mode_change {
            notes.warnings.push(format!(
                "mode change for '{}' ignored (file modes are not managed)",
                fp.new_path
                    .as_deref()
                    .or(fp.old_path.as_deref())
                    .unwrap_or("")
            ));
        }
        plan_file(s, fp, &checked, &expected, &mut files, &mut notes)?;
    }
    if let Some(stray) = expected
        .keys()
        .find(|k| !files.iter().any(|f| f.shown == **k))
    {
        return Err(ToolError::invalid(format!(
            "expected_sha256s names '{stray}', which the patch does not change"
        )));
    }
    for f in &files {
        let given = expected.get(&f.shown).map(String::as_str);
        let guard = if f.unseen {
            crate::txn::Guard::Whole
        } else {
            crate::txn::Guard::Content
        };
        crate::txn::check_expected(s, &f.shown, f.before.as_deref(), given, guard)?;
    }
    let mut changes = Vec::new();
    for f in files {
        let after = match f.now {
            // A file the patch adds takes the repository's declared style; a moved one
            // keeps its own.
            Some(text) if f.before.is_none() && f.renamed_from.is_none() => Some(
                crate::conventions::new_file_bytes(s, log, &f.target, &text, &mut notes.warnings),
            ),
            other => other.map(String::into_bytes),
        };
        if let Some(a) = &after {
            check_size(s, &f.shown, a.len())?;
        }
        let mut c = Change::new(f.target, f.shown, f.before, after);
        if f.moved_away {
            c.label = Some("move_from");
            c.quiet = true;
        }
        if let Some(from) = f.renamed_from {
            c.label = Some("move_to");
            // The new file takes the old one's permission bits, as `move_file` does.
            c.mode_from = crate::path::LogicalPath::parse(&from.0).ok();
            c.renamed_from = Some(from);
        }
        changes.push(c);
    }
    for r in &notes.relaxed {
        log.notes.push(format!(
            "apply_patch: hunk {} of '{}' matched at line {} with matching \"{}\"",
            r.hunk,
            r.path,
            r.line,
            r.level.as_str()
        ));
    }
    let mut result = commit(s, log, changes, a.dry_run.unwrap_or(false), notes.warnings)?;
    result.relaxed_hunks = notes.relaxed;
    Ok(result)
}

/// The call's expected hashes by normalised path.
///
/// # Errors
/// `PATH_REJECTED` for a key that is not a valid path.
fn expected_hashes(given: &BTreeMap<String, String>) -> ToolResult<BTreeMap<String, String>> {
    given
        .iter()
        .map(|(p, h)| Ok((crate::path::LogicalPath::parse(p)?.to_string(), h.clone())))
        .collect()
}

fn conflict(path: &str, msg: String) -> ToolError {
    ToolError::new(
        ErrorCode::PatchConflict,
        format!("{msg}; nothing was applied"),
    )
    .with_path(path)
}

/// The planned state of `path`, loading it from disk on first use.
fn state<'a>(
    s: &Session,
    files: &'a mut Vec<Planned>,
    checked: &BTreeMap<String, crate::txn::Writable>,
    path: &str,
) -> ToolResult<&'a mut Planned> {
    let w = checked
        .get(path)
        .ok_or_else(|| ToolError::new(ErrorCode::Internal, format!("'{path}' was not checked")))?;
    if let Some(i) = files.iter().position(|f| f.target == w.target) {
        return Ok(&mut files[i]);
    }
    let shown = w.requested.to_string();
    let before = if w.exists() { Some(w.read(s)?) } else { None };
    let now = match &before {
        Some(b) => Some(String::from_utf8(b.clone()).map_err(|_| {
            ToolError::new(
                ErrorCode::EncodingError,
                format!("'{shown}' is not valid UTF-8 text; it cannot be patched"),
            )
            .with_path(&shown)
        })?),
        None => None,
    };
    files.push(Planned {
        shown,
        target: w.target.clone(),
        before,
        now,
        renamed_from: None,
        moved_away: false,
        unseen: false,
    });
    Ok(files.last_mut().expect("just pushed"))
}

fn plan_file(
    s: &Session,
    fp: &FilePatch,
    checked: &BTreeMap<String, crate::txn::Writable>,
    expected: &BTreeMap<String, String>,
    files: &mut Vec<Planned>,
    notes: &mut Notes,
) -> ToolResult<()> {
    match (&fp.old_path, &fp.new_path) {
        (None, Some(new)) => {
            let f = state(s, files, checked, new)?;
            if f.now.is_some() {
                if !expected.contains_key(&f.shown) {
                    return Err(conflict(
                        &f.shown,
                        format!("the patch creates '{}', which already exists; to replace it, read it and give its sha256 in expected_sha256s", f.shown),
                    ));
                }
                // Replaced whole: checked against the given sha256 like any overwrite.
                f.unseen = true;
            }
            let content: String = fp
                .hunks
                .iter()
                .flat_map(|h| h.new.iter().map(String::as_str))
                .collect();
            if fp.hunks.iter().any(|h| !h.old.is_empty()) {
                return Err(conflict(
                    &f.shown,
                    format!("the patch creates '{}' but its hunk has old lines", f.shown),
                ));
            }
            f.now = Some(content);
        }
        (Some(old), None) => {
            let f = state(s, files, checked, old)?;
            let Some(now) = &f.now else {
                return Err(conflict(
                    &f.shown,
                    format!("the patch deletes '{}', which does not exist", f.shown),
                ));
            };
            if !fp.envelope || !fp.hunks.is_empty() {
                let expected: String = fp
                    .hunks
                    .iter()
                    .flat_map(|h| h.old.iter().map(String::as_str))
                    .collect();
                if !fp.hunks.is_empty() && &expected != now {
                    return Err(conflict(&f.shown, format!("the patch deletes '{}', but the file's content differs from the patch's", f.shown)));
                }
            }
            f.unseen = fp.hunks.is_empty() && !now.is_empty();
            f.now = None;
        }
        (Some(old), Some(new)) => {
            let (content, shown_old) = {
                let f = state(s, files, checked, old)?;
                let Some(now) = f.now.clone() else {
                    return Err(conflict(
                        &f.shown,
                        format!("the patch changes '{}', which does not exist", f.shown),
                    ));
                };
                (now, f.shown.clone())
            };
            let patched = apply_hunks(&shown_old, &content, fp, notes)?;
            if old == new
                || checked.get(old).map(|w| &w.target) == checked.get(new).map(|w| &w.target)
            {
                state(s, files, checked, old)?.now = Some(patched);
            } else {
                let src = state(s, files, checked, old)?;
                src.now = None;
                let dest = state(s, files, checked, new)?;
                if dest.now.is_some() {
                    if !expected.contains_key(&dest.shown) {
                        return Err(conflict(
                            &dest.shown,
                            format!(
                                "the patch moves '{shown_old}' to '{}', which already exists; to replace it, read it and give its sha256 in expected_sha256s",
                                dest.shown
                            ),
                        ));
                    }
                    dest.unseen = true;
                }
                dest.now = Some(patched);
                if dest.before.is_none() {
                    dest.renamed_from = Some((shown_old, content.into_bytes()));
                    state(s, files, checked, old)?.moved_away = true;
                }
            }
        }
        (None, None) => {}
    }
    Ok(())
}

/// What planning a patch tells the agent besides the change itself.
#[derive(Debug, Default)]
pub struct Notes {
    /// The loosest matching the call allows.
    pub max: MatchLevel,
    pub warnings: Vec<String>,
    pub relaxed: Vec<RelaxedHunk>,
}

/// Applies a file's hunks to its content.
fn apply_hunks(
    shown: &str,
    content: &str,
    fp: &FilePatch,
    notes: &mut Notes,
) -> ToolResult<String> {
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
                    return Err(conflict(shown, format!("hunk {n} of '{shown}' (patch line {}): the line '{}' it is anchored to was not found", h.line, crate::visible::visible(anchor)))
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
                    crate::visible::visible(l.trim_end_matches(['\n', '\r']))
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
    let div = crate::visible::first_divergence(old, lines.get(at..).unwrap_or(&[]));
    if let Some(d) = &div {
        err_text.push_str(&format!(
            "\nfirst difference at line {}, {}:\n  expected: {}\n  found:    {}",
            at + d.index + 1,
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
