//! `apply_patch`: unified diffs and the `*** Begin Patch` envelope, applied all or nothing.
//!
//! Parsing (`parse`) yields [`FilePatch`]es. Planning then checks the budget, guards every
//! path (old and new), applies every hunk in memory (`hunks`) — context must match
//! exactly, or at the relaxed level the call opts into with `match` (reported per hunk); a
//! hunk may be found at an offset from its stated line (reported), never by fuzz — and only
//! when every file of the patch applies does `txn::commit` write anything. A file the
//! patch adds takes the repository's declared line endings and encoding (`conventions`);
//! a file it changes is read and written back in its own encoding (`text_file`).

mod hunks;
pub(crate) mod indent;
pub(crate) mod locate;
mod parse;

use std::collections::BTreeMap;

use crate::api::{ApplyPatchArgs, MutationResult};
use crate::audit::CallLog;
use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::rules::path::LogicalPath;
use crate::tools::session::Session;
use crate::tools::text_file::TextFile;
use crate::tools::txn::{check_size, commit, writable, Change};

use hunks::{apply_hunks, Notes};
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
    /// How `now` is written back: the encoding, BOM state and declaration of the file it
    /// was read from (its body taken out), `None` for a file the patch adds.
    form: Option<TextFile>,
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
    // Progress counts the files planned (a patch of many files is a long call too).
    let mut meter = crate::tools::progress::Meter::default();
    for fp in &patches {
        meter.file(s.fs.services(), 0, 0);
        if fp.mode_change {
            notes.warnings.push(format!(
                "mode change for '{}' ignored (file modes are not managed)",
                fp.new_path
                    .as_deref()
                    .or(fp.old_path.as_deref())
                    .unwrap_or("")
            ));
        }
        plan_file(s, log, fp, &checked, &expected, &mut files, &mut notes)?;
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
            crate::tools::txn::Guard::Whole
        } else {
            crate::tools::txn::Guard::Content
        };
        crate::tools::txn::check_expected(s, &f.shown, f.before.as_deref(), given, guard)?;
    }
    let mut changes = Vec::new();
    for f in files {
        let after = match f.now {
            // A file the patch adds takes the repository's declared style; a moved one
            // keeps its own.
            Some(text) if f.before.is_none() && f.renamed_from.is_none() => {
                Some(crate::tools::conventions::new_file_bytes(
                    s,
                    log,
                    &f.target,
                    &text,
                    &mut notes.warnings,
                )?)
            }
            // Written back in the encoding (and BOM, as U+FEFF) it was read in.
            Some(text) => Some(match &f.form {
                Some(form) => form.encode_whole(
                    &f.shown,
                    text,
                    &mut crate::tools::mutate::declared(s, log, &f.target),
                )?,
                None => text.into_bytes(),
            }),
            None => None,
        };
        if let Some(a) = &after {
            check_size(s, &f.shown, a.len())?;
        }
        let mut c = Change::new(f.target, f.shown, f.before, after);
        c.encoding = f
            .form
            .map(|form| form.encoding)
            .filter(|e| *e != crate::text::encoding::Encoding::Utf8);
        if f.moved_away {
            c.label = Some("move_from");
            c.quiet = true;
        }
        if let Some(from) = f.renamed_from {
            c.label = Some("move_to");
            // The new file takes the old one's permission bits, as `move_file` does.
            c.mode_from = crate::rules::path::LogicalPath::parse(&from.0).ok();
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
        .map(|(p, h)| {
            Ok((
                crate::rules::path::LogicalPath::parse(p)?.to_string(),
                h.clone(),
            ))
        })
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
    log: &mut CallLog,
    files: &'a mut Vec<Planned>,
    checked: &BTreeMap<String, crate::tools::txn::Writable>,
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
    let (now, form) = match &before {
        Some(b) => {
            let mut declare = crate::tools::mutate::declared(s, log, &w.target);
            let mut file = TextFile::decode(&shown, b, &mut declare)?;
            // The text as the patch sees it: a BOM as U+FEFF, line endings as they are.
            let bom = if file.bom { "\u{feff}" } else { "" };
            let now = format!("{bom}{}", std::mem::take(&mut file.body));
            (Some(now), Some(file))
        }
        None => (None, None),
    };
    files.push(Planned {
        shown,
        target: w.target.clone(),
        before,
        now,
        form,
        renamed_from: None,
        moved_away: false,
        unseen: false,
    });
    Ok(files.last_mut().expect("just pushed"))
}

fn plan_file(
    s: &Session,
    log: &mut CallLog,
    fp: &FilePatch,
    checked: &BTreeMap<String, crate::tools::txn::Writable>,
    expected: &BTreeMap<String, String>,
    files: &mut Vec<Planned>,
    notes: &mut Notes,
) -> ToolResult<()> {
    match (&fp.old_path, &fp.new_path) {
        (None, Some(new)) => {
            let f = state(s, log, files, checked, new)?;
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
            let f = state(s, log, files, checked, old)?;
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
                let f = state(s, log, files, checked, old)?;
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
                state(s, log, files, checked, old)?.now = Some(patched);
            } else {
                let src = state(s, log, files, checked, old)?;
                src.now = None;
                // The text moves in its own encoding.
                let form = src.form.clone();
                let dest = state(s, log, files, checked, new)?;
                dest.form = form;
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
                    let from = match &dest.form {
                        Some(f) => f.encode_whole(&shown_old, content.clone(), &mut || None),
                        None => Ok(content.clone().into_bytes()),
                    };
                    dest.renamed_from = Some((shown_old, from.unwrap_or(content.into_bytes())));
                    state(s, log, files, checked, old)?.moved_away = true;
                }
            }
        }
        (None, None) => {}
    }
    Ok(())
}
