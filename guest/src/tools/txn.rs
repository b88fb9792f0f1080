//! Every mutation is a transaction over one or more files, in four steps:
//!
//! 1. **plan** (done by the tool): guard, classify and check every path, read current
//!    content, compute new content, all in memory;
//! 2. **baseline**: record the original content of paths the session changes for the first
//!    time (for `diff_workspace` and `revert`);
//! 3. **prepare**: record the change in the journal of the state directory (temporary
//!    names, hashes of old and new content; see [`crate::tools::journal`]), open each target's
//!    directory one component at a time from the root (refusing symlinks and any directory
//!    seen named `.git`, creating what is missing), write every new content to a temporary
//!    file created exclusively in that held directory and flush it, then check each
//!    target's content once more through it;
//! 4. **commit**: mark the journal's record committed, rename each temporary file over its
//!    target within the held directory (atomic per file) and remove deleted files, then
//!    drop the record. If a step fails, files already committed are put back, every
//!    temporary file is removed, and so is every directory the call created: a failed call
//!    leaves the tree as it was. If the process dies instead, the next call on the same
//!    state directory rolls the record forward or back: all files or none change.
//!
//! Because every step acts through held directory handles, a directory renamed, swapped
//! for a symlink or exchanged with `.git` while the call runs cannot redirect a write.

use std::sync::Arc;

use crate::api::{FileChange, MutationResult};
use crate::audit::{AuditFile, CallLog};
use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::fs::hash::is_sha256;
use crate::fs::port::{Dir, Stat};
use crate::rules::approval::{ApprovalRequest, ChangeFacts};
use crate::rules::path::{LogicalPath, TEMP_MARKER};
use crate::text::diff::{bound, file_diff, FileDiff, Side};
use crate::tools::baseline::Baseline;
use crate::tools::journal::{Journal, Step};
use crate::tools::session::Session;

/// A path that may be written: guarded, resolved, classified and allowed by the policy.
#[derive(Debug)]
pub struct Writable {
    /// The path as the agent gave it, normalised.
    pub requested: LogicalPath,
    /// Where the content really lives (after inside symlinks).
    pub target: LogicalPath,
    /// Metadata of the existing file, or `None` when it does not exist yet.
    pub meta: Option<Stat>,
    /// The held directory holding the target, when it exists.
    pub parent: Option<Arc<Dir>>,
    /// The read rules hide the file and the policy allows writing it blind: only whole
    /// content may be written or the file deleted, and nothing derived from its old content
    /// is returned.
    pub blind: bool,
}

impl Writable {
    pub fn exists(&self) -> bool {
        self.meta.is_some()
    }

    /// The current content of the existing file.
    ///
    /// # Errors
    /// `IO_ERROR` when it cannot be read.
    pub fn read(&self, s: &Session) -> ToolResult<Vec<u8>> {
        let shown = self.requested.to_string();
        let max = s.policy.limits().max_write_bytes.saturating_add(1);
        // Through the held directory resolution checked, never by name again.
        let parent = self.parent.as_ref().ok_or_else(|| {
            ToolError::io(&shown, &std::io::Error::from(std::io::ErrorKind::NotFound))
        })?;
        let (data, _) = parent
            .read_file(self.target.name(), max)
            .map_err(|e| ToolError::io(&shown, &e))?;
        // Content the agent may not see may not be changed by a call that would show it.
        if !self.blind {
            crate::rules::policy::Policy::content_denial(
                &shown,
                s.policy.sniff(&self.target, &data),
            )?;
        }
        Ok(data)
    }
}

/// Guards, resolves and checks a path for writing.
///
/// # Errors
/// `PATH_REJECTED` (also for a dangling symlink), `POLICY_DENIED`, `NOT_A_FILE`.
pub fn writable(s: &Session, input: &str) -> ToolResult<Writable> {
    let requested = LogicalPath::parse(input)?;
    writable_path(s, requested)
}

/// [`writable`] for a parsed path.
///
/// # Errors
/// As [`writable`].
pub fn writable_path(s: &Session, requested: LogicalPath) -> ToolResult<Writable> {
    let shown = requested.to_string();
    // Refused by name before anything on disk is touched.
    s.policy
        .check_write(&requested, s.policy.kind_of(&requested, false))?;
    // A file the agent may not read is not writable either (unless the policy allows blind
    // writes to it), and the refusal is the same whether or not it exists. Only a path
    // hidden by its own name may be written blind; one reached through a link is refused.
    let not_readable = || {
        ToolError::denied(
            &shown,
            "not_readable",
            format!("'{shown}' cannot be changed: the session policy does not let you read it"),
        )
    };
    let blind = s.policy.hidden_path(&requested);
    if blind && !s.policy.blind_write_allowed(&requested) {
        return Err(not_readable());
    }
    let r = if blind {
        s.fs.resolve(&requested)?
    } else {
        s.fs.resolve_with(&requested, &|t| s.policy.hidden_path(t))
            .map_err(|e| {
                if e.reason.as_deref() == Some("hidden") {
                    not_readable()
                } else {
                    e
                }
            })?
    };
    if blind && (r.via_link || !s.policy.blind_write_allowed(&r.target)) {
        return Err(not_readable());
    }
    if s.policy.is_host_file(&r.target) || s.policy.is_host_file(&requested) {
        return Err(ToolError::new(
            ErrorCode::PathRejected,
            format!("'{shown}' is a file the host owns (its policy); it can be read but never changed by a tool"),
        )
        .with_path(shown));
    }
    let final_is_link = r.via_link
        && r.meta.is_none()
        && s.fs
            .stat_nofollow(&requested)
            .is_some_and(|m| m.ty == crate::rules::fsx::EntryType::Symlink);
    if final_is_link {
        return Err(ToolError::new(
            ErrorCode::PathRejected,
            format!(
                "'{shown}' is a dangling symlink (to '{}'); refusing to create a file through it",
                r.target
            ),
        )
        .with_path(shown));
    }
    if let Some(m) = &r.meta {
        if !m.is_file() {
            return Err(ToolError::new(
                ErrorCode::NotAFile,
                format!(
                    "'{shown}' is {}; only regular files can be changed",
                    if m.is_dir() {
                        "a directory"
                    } else {
                        "a special file"
                    }
                ),
            )
            .with_path(shown));
        }
    }
    let kind = s.policy.kind_of(&r.target, false);
    s.policy.check_write(&r.target, kind)?;
    r.target.check_reserved()?;
    let max = s.policy.limits().max_write_bytes;
    if let Some(m) = r.meta.as_ref().filter(|m| m.size > max) {
        return Err(ToolError::new(
            ErrorCode::FileTooLarge,
            format!(
                "'{shown}' is {} bytes, over the {max} byte limit for files the tools change",
                m.size
            ),
        )
        .with_path(shown));
    }
    if r.meta.is_some_and(|m| !s.policy.links_allowed(m.nlink)) {
        return Err(ToolError::denied(
            &shown,
            "hardlinked",
            format!("'{shown}' has more than one hard link; changing it would change the other names too"),
        ));
    }
    Ok(Writable {
        requested,
        target: r.target,
        meta: r.meta,
        parent: r.parent,
        blind,
    })
}

impl Writable {
    /// Refuses a change that needs the old content of a file written blind.
    ///
    /// # Errors
    /// `POLICY_DENIED` (`blind_write_only`).
    pub fn need_content(&self) -> ToolResult<()> {
        if self.blind {
            let shown = self.requested.to_string();
            return Err(ToolError::denied(
                &shown,
                "blind_write_only",
                format!("'{shown}' may only be written whole or deleted: the session policy does not let you read it"),
            ));
        }
        Ok(())
    }
}

/// What a change does to the content it replaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guard {
    /// The change is checked against the old content itself (an exact edit, a hunk's
    /// context, an append): a hash is needed only when the policy requires hashes.
    Content,
    /// The change replaces or removes the content without looking at it (a whole-file
    /// write over an existing file, a delete): a hash is needed unless the policy allows
    /// overwriting unread files.
    Whole,
}

/// Checks `expected` (when given, or when the policy requires it) against `current`.
///
/// # Errors
/// `INVALID_INPUT` for a malformed sha256, `WRITE_CONFLICT` (with `current_sha256`) on a
/// mismatch, `POLICY_DENIED` (`sha_required`) when the policy requires a sha256 and none
/// was given.
pub fn check_expected(
    s: &Session,
    shown: &str,
    current: Option<&[u8]>,
    expected: Option<&str>,
    guard: Guard,
) -> ToolResult<()> {
    match (expected, current) {
        (Some(e), _) if !is_sha256(e) => Err(ToolError::invalid(format!(
            "expected_sha256 '{}' is not a sha256 (64 hex digits)",
            e.chars().take(80).collect::<String>()
        ))),
        (Some(_), None) => Err(ToolError::new(
            ErrorCode::WriteConflict,
            format!("'{shown}' no longer exists, but expected_sha256 was given; list the directory and retry"),
        )
        .with_path(shown)),
        (Some(e), Some(bytes)) => {
            let cur = s.fs.services().sha256_hex(bytes);
            if cur.eq_ignore_ascii_case(e) {
                Ok(())
            } else {
                Err(ToolError::new(
                    ErrorCode::WriteConflict,
                    format!(
                        "'{shown}' changed since you read it (its sha256 is now {cur}); re-read the file and retry with expected_sha256 set to the current value"
                    ),
                )
                .with_path(shown)
                .with_detail("current_sha256", cur))
            }
        }
        (None, Some(_)) if s.policy.config.require_expected_sha256 => Err(ToolError::denied(
            shown,
            "sha_required",
            format!("the session policy requires expected_sha256 to change '{shown}'; read the file first and pass its sha256"),
        )),
        (None, Some(_))
            if guard == Guard::Whole && !s.policy.config.allow_overwrite_without_sha256 =>
        {
            Err(ToolError::denied(
                shown,
                "sha_required",
                format!("'{shown}' exists and this call would replace or remove all of it unseen; read it first and pass its sha256 as expected_sha256 (or use edit_file for a change in place)"),
            ))
        }
        (None, _) => Ok(()),
    }
}

/// What a change does to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Create,
    Modify,
    Delete,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Create => "create",
            Action::Modify => "modify",
            Action::Delete => "delete",
        }
    }
}

/// One planned change.
#[derive(Debug, Clone)]
pub struct Change {
    /// Where the content lives.
    pub target: LogicalPath,
    /// How the change is reported (the agent's path).
    pub shown: String,
    pub before: Option<Vec<u8>>,
    pub after: Option<Vec<u8>>,
    /// Content never to be shown in a diff (secrets, binary).
    pub opaque: bool,
    /// How the change is reported instead of create/modify/delete (`move_from`, `move_to`).
    pub label: Option<&'static str>,
    /// For the new end of a move: the old path and its content, so the diff is a rename.
    pub renamed_from: Option<(String, Vec<u8>)>,
    /// The old end of a move: its diff is part of the new end's rename.
    pub quiet: bool,
    /// Where a new file takes its permission bits from (the source of a move).
    pub mode_from: Option<LogicalPath>,
    /// Nothing derived from `before` may be shown (a blind write): no diff, no hash.
    pub blind: bool,
    /// The encoding the tool read and wrote the text in, when not UTF-8: the diff shows
    /// the text in it (without, the diff decodes what detection finds).
    pub encoding: Option<crate::text::encoding::Encoding>,
}

impl Change {
    /// A change of `target` from `before` to `after`.
    pub fn new(
        target: LogicalPath,
        shown: String,
        before: Option<Vec<u8>>,
        after: Option<Vec<u8>>,
    ) -> Self {
        Change {
            target,
            shown,
            before,
            after,
            opaque: false,
            label: None,
            renamed_from: None,
            quiet: false,
            mode_from: None,
            blind: false,
            encoding: None,
        }
    }

    /// The label reported for this change.
    pub fn label(&self) -> &'static str {
        self.label.unwrap_or_else(|| self.action().as_str())
    }

    pub fn action(&self) -> Action {
        match (&self.before, &self.after) {
            (None, _) => Action::Create,
            (Some(_), None) => Action::Delete,
            (Some(_), Some(_)) => Action::Modify,
        }
    }
}

fn side(
    bytes: Option<&[u8]>,
    opaque: bool,
    hint: Option<crate::text::encoding::Encoding>,
) -> Side<'_> {
    match bytes {
        None => Side::Absent,
        Some(_) if opaque => Side::Opaque,
        Some(b) => crate::text::encoding::text_of(b, hint).map_or(Side::Opaque, Side::Text),
    }
}

/// The diff of one planned change.
pub fn change_diff(c: &Change) -> FileDiff {
    if c.quiet {
        return FileDiff::default();
    }
    let opaque = c.opaque || c.blind;
    match &c.renamed_from {
        Some((from, content)) if c.before.is_none() => file_diff(
            from,
            &c.shown,
            side(Some(content), opaque, c.encoding),
            side(c.after.as_deref(), opaque, c.encoding),
        ),
        _ => file_diff(
            &c.shown,
            &c.shown,
            side(c.before.as_deref(), opaque, c.encoding),
            side(c.after.as_deref(), opaque, c.encoding),
        ),
    }
}

/// Checks the size limit of new content.
///
/// # Errors
/// `LIMIT_EXCEEDED`.
pub fn check_size(s: &Session, shown: &str, len: usize) -> ToolResult<()> {
    let max = s.policy.limits().max_write_bytes;
    if len as u64 > max {
        return Err(ToolError::new(
            ErrorCode::LimitExceeded,
            format!("the new content of '{shown}' is {len} bytes, over the {max} byte write limit"),
        )
        .with_path(shown));
    }
    Ok(())
}

/// Runs steps 2 to 4 for planned changes (or only renders them for a dry run) and builds
/// the result.
///
/// # Errors
/// `WRITE_CONFLICT` when a file changed between plan and commit, `IO_ERROR` when the file
/// system fails (after putting back what was already committed).
pub fn commit(
    s: &Session,
    log: &mut CallLog,
    changes: Vec<Change>,
    dry_run: bool,
    warnings: Vec<String>,
) -> ToolResult<MutationResult> {
    // A change that changes nothing is no change.
    let changes: Vec<Change> = changes
        .into_iter()
        .filter(|c| !crate::text::bytes::eq_opt(c.before.as_deref(), c.after.as_deref()))
        .collect();
    let mut diff = String::new();
    let mut files = Vec::with_capacity(changes.len());
    let (mut ins, mut del) = (0u32, 0u32);
    for c in &changes {
        let d = change_diff(c);
        diff.push_str(&d.text);
        ins += d.insertions;
        del += d.deletions;
        files.push(FileChange {
            path: c.shown.clone(),
            action: c.label().to_string(),
            sha256_before: c
                .before
                .as_deref()
                .filter(|_| !c.blind)
                .map(|b| s.fs.services().sha256_hex(b)),
            // A blind change shows no hash: a revert's new content is the hidden original.
            sha256_after: c
                .after
                .as_deref()
                .filter(|_| !c.blind)
                .map(|a| s.fs.services().sha256_hex(a)),
            insertions: d.insertions,
            deletions: d.deletions,
        });
    }
    let written: Vec<(&LogicalPath, &str)> = changes
        .iter()
        .filter(|c| c.after.is_some())
        .map(|c| (&c.target, c.shown.as_str()))
        .collect();
    s.policy.check_git_shape(&written)?;
    let mut warnings = warnings;
    let facts: Vec<ChangeFacts<'_>> = changes
        .iter()
        .map(|c| ChangeFacts {
            target: &c.target,
            shown: &c.shown,
            plain_delete: c.action() == Action::Delete && c.label.is_none(),
            kind: s.policy.kind_of(&c.target, false),
        })
        .collect();
    let reasons = s.policy.approval().reasons(&facts, ins + del);
    if !reasons.is_empty() {
        if dry_run {
            warnings.push(format!(
                "needs approval to be written: {}",
                reasons.join("; ")
            ));
        } else {
            let listed: Vec<AuditFile> = files.iter().map(AuditFile::from).collect();
            let request = ApprovalRequest::shown(&log.tool, &reasons, &listed, (ins, del), &diff);
            if !s.fs.services().approve(&request) {
                return Err(ToolError::new(
                    ErrorCode::ApprovalRequired,
                    format!(
                        "this change needs approval and the host did not give it ({}); nothing was written. Ask the user, or make a smaller change that avoids these paths",
                        reasons.join("; ")
                    ),
                )
                .with_path(changes.first().map_or("", |c| c.shown.as_str()))
                .with_detail("reasons", reasons.join("\n")));
            }
        }
    }
    if !dry_run {
        apply(s, &changes)?;
        for (c, f) in changes.iter().zip(&files) {
            log.wrote(f);
            log.bytes_written += c.after.as_ref().map_or(0, |a| a.len() as u64);
        }
        log.insertions += ins;
        log.deletions += del;
        log.diff.push_str(&diff);
    }
    let diff_truncated = bound(&mut diff, s.policy.limits().max_diff_bytes as usize);
    let summary = summarize(&files, ins, del, dry_run, diff_truncated);
    Ok(MutationResult {
        changes: files,
        insertions: ins,
        deletions: del,
        diff,
        diff_truncated,
        dry_run,
        warnings,
        relaxed_hunks: Vec::new(),
        summary,
    })
}

fn summarize(files: &[FileChange], ins: u32, del: u32, dry_run: bool, cut: bool) -> String {
    if files.is_empty() {
        return "nothing to change: the content is already as requested".to_string();
    }
    let verb = if dry_run { "would change" } else { "changed" };
    let list: Vec<String> = files
        .iter()
        .take(5)
        .map(|f| match &f.sha256_after {
            Some(sha) => format!("{} {} (sha256 {})", f.action, f.path, sha),
            None => format!("{} {}", f.action, f.path),
        })
        .collect();
    let more = if files.len() > 5 {
        format!(" and {} more", files.len() - 5)
    } else {
        String::new()
    };
    format!(
        "{verb} {} file(s), +{ins} -{del}: {}{more}{}",
        files.len(),
        list.join("; "),
        if cut {
            " (diff cut at the size limit)"
        } else {
            ""
        }
    )
}

fn temp_name(target: &LogicalPath) -> String {
    format!(
        ".{}{TEMP_MARKER}{}",
        target.name(),
        crate::rules::path::temp_suffix()
    )
}

/// The held directories from the root down to `dir` (`chain[0]` is the root, the last is
/// `dir` itself), opened one component at a time. With `create`, missing directories are
/// made and noted in `created`, so that a failed call can remove them again.
///
/// # Errors
/// `PATH_REJECTED` when a component is a symlink or a directory seen named `.git` (the tree
/// changed under the call), `NOT_A_FILE` when it is not a directory, `IO_ERROR`.
fn open_chain(
    s: &Session,
    dir: &LogicalPath,
    create: bool,
    created: &mut Vec<(Arc<Dir>, String)>,
) -> ToolResult<Vec<Arc<Dir>>> {
    let shown = dir.to_string();
    let mut chain = vec![s.fs.root().clone()];
    for part in dir.parts() {
        let cur = chain.last().unwrap_or(s.fs.root()).clone();
        s.fs.note_git_dirs(&cur);
        if create
            && cur
                .stat_at(part)
                .map_err(|e| ToolError::io(&shown, &e))?
                .is_none()
        {
            match cur.mkdir(part) {
                Ok(()) => created.push((cur.clone(), part.to_string())),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(ToolError::io(&shown, &e)),
            }
        }
        let next = cur.open_dir(part).map_err(|e| changed_under(&shown, &e))?;
        if s.fs.swapped_git(part, &next) {
            return Err(ToolError::new(
                ErrorCode::PathRejected,
                format!("'{shown}' changed while the call ran: '{part}' is now a .git directory; nothing was written"),
            )
            .with_path(shown));
        }
        chain.push(Arc::new(next));
    }
    Ok(chain)
}

/// The error for a directory on the way that is no longer a plain directory.
fn changed_under(shown: &str, e: &std::io::Error) -> ToolError {
    match e.kind() {
        std::io::ErrorKind::NotFound
        | std::io::ErrorKind::PermissionDenied
        | std::io::ErrorKind::Other => ToolError::io(shown, e),
        _ => ToolError::new(
            ErrorCode::PathRejected,
            format!("'{shown}' changed while the call ran ({e}); nothing was written"),
        )
        .with_path(shown),
    }
}

/// The content of `name` in `dir` now: `Ok(None)` when nothing is there, `Err(())` when
/// something other than a readable regular file is.
fn current(dir: &Dir, name: &str, max: u64) -> Result<Option<Vec<u8>>, ()> {
    match dir.stat_at(name) {
        Ok(None) => Ok(None),
        Ok(Some(st)) if st.is_file() => dir
            .read_file(name, max)
            .map(|(d, _)| Some(d))
            .map_err(|_| ()),
        _ => Err(()),
    }
}

/// Steps 2 to 4.
fn apply(s: &Session, changes: &[Change]) -> ToolResult<()> {
    let baseline = Baseline::new(s.state_dir.as_deref(), &s.memory);
    let originals: Vec<(String, Option<&[u8]>)> = changes
        .iter()
        .map(|c| (c.target.to_string(), c.before.as_deref()))
        .collect();
    baseline.record(&originals)?;

    // Temporary names are chosen first and recorded, with the hashes of the old and new
    // content, in the journal of the state directory before any of them exists, so that the
    // session after a crash finishes or undoes the change whole (`crate::tools::journal`).
    let planned: Vec<String> = changes.iter().map(|c| temp_name(&c.target)).collect();
    let mut journal = match s.state_dir.as_deref() {
        Some(state) => {
            let hash = |b: &Option<Vec<u8>>| b.as_deref().map(|b| s.fs.services().sha256_hex(b));
            let steps = changes
                .iter()
                .zip(&planned)
                .map(|(c, t)| Step {
                    dir: c.target.parent().to_string(),
                    name: c.target.name().to_string(),
                    temp: t.clone(),
                    old: hash(&c.before),
                    new: hash(&c.after),
                })
                .collect();
            Some(Journal::begin(state, steps)?)
        }
        None => None,
    };
    let mut created = Vec::new();
    let result = write_and_commit(s, changes, &planned, &mut created, journal.as_mut());
    if result.is_err() {
        // Directories this call made, deepest first; any that is not empty stays.
        for (dir, name) in created.iter().rev() {
            let _ = dir.rmdir(name);
        }
    }
    if let Some(j) = journal {
        j.end();
    }
    result
}

/// Steps 3 and 4 with the temporary names already chosen.
fn write_and_commit(
    s: &Session,
    changes: &[Change],
    planned: &[String],
    created: &mut Vec<(Arc<Dir>, String)>,
    journal: Option<&mut Journal>,
) -> ToolResult<()> {
    let mut temps: Vec<Option<(Arc<Dir>, String)>> = Vec::with_capacity(changes.len());
    let mut chains: Vec<Vec<Arc<Dir>>> = Vec::with_capacity(changes.len());
    let cleanup = |temps: &[Option<(Arc<Dir>, String)>]| {
        for (dir, name) in temps.iter().flatten() {
            let _ = dir.unlink(name);
        }
    };
    for (c, tmp) in changes.iter().zip(planned) {
        let chain = match open_chain(s, &c.target.parent(), c.after.is_some(), created) {
            Ok(chain) => chain,
            Err(e) => {
                cleanup(&temps);
                return Err(e.with_path(&c.shown));
            }
        };
        let dir = chain.last().unwrap_or(s.fs.root()).clone();
        chains.push(chain);
        let Some(after) = &c.after else {
            temps.push(None);
            continue;
        };
        if let Err(e) = dir.create_new(tmp, after) {
            cleanup(&temps);
            return Err(ToolError::io(&c.shown, &e));
        }
        // A replaced file keeps its permission bits, a moved one takes its source's
        // (WASI cannot set them itself).
        let tmp_logical = c.target.parent().join(tmp);
        if c.before.is_some() {
            s.fs.services().copy_mode(&c.target, &tmp_logical);
        } else if let Some(from) = &c.mode_from {
            s.fs.services().copy_mode(from, &tmp_logical);
        }
        temps.push(Some((dir, tmp.clone())));
    }
    crate::fault::point("commit");
    // The last check before anything becomes visible: every file is still as planned,
    // looked at through the very directory the rename will act in.
    let max = s.policy.limits().max_write_bytes.saturating_add(1);
    for (c, chain) in changes.iter().zip(&chains) {
        let dir = chain.last().unwrap_or(s.fs.root());
        let now = current(dir, c.target.name(), max);
        let same = now
            .as_ref()
            .is_ok_and(|n| crate::text::bytes::eq_opt(n.as_deref(), c.before.as_deref()));
        if !same {
            cleanup(&temps);
            let mut e = ToolError::new(
                ErrorCode::WriteConflict,
                format!(
                    "'{}' was changed by someone else while this call ran; re-read it and retry",
                    c.shown
                ),
            )
            .with_path(&c.shown);
            if let Ok(Some(now)) = now {
                e = e.with_detail("current_sha256", s.fs.services().sha256_hex(&now));
            }
            return Err(e);
        }
    }
    // The change is decided: from here a crash is finished by the next session.
    if let Some(j) = journal {
        if let Err(e) = j.commit() {
            cleanup(&temps);
            return Err(e);
        }
    }
    let mut done: Vec<usize> = Vec::with_capacity(changes.len());
    for (i, c) in changes.iter().enumerate() {
        let dir = chains[i].last().unwrap_or(s.fs.root());
        let name = c.target.name();
        let result = match &temps[i] {
            Some((_, tmp)) => dir.rename(tmp, name),
            None => dir.unlink(name),
        };
        if let Err(e) = result {
            rollback(changes, planned, &chains, &done);
            cleanup(&temps[i..]);
            return Err(ToolError::io(&c.shown, &e));
        }
        done.push(i);
    }
    for (c, chain) in changes.iter().zip(&chains) {
        if c.after.is_none() {
            remove_emptied_dirs(&c.target, chain);
        }
    }
    Ok(())
}

/// Removes the directories a deletion left empty, up to (never including) the root, as
/// `git apply` does, each through its held parent.
fn remove_emptied_dirs(deleted: &LogicalPath, chain: &[Arc<Dir>]) {
    let dir = deleted.parent();
    let names: Vec<&str> = dir.parts().collect();
    for depth in (0..names.len()).rev() {
        let Some(parent) = chain.get(depth) else {
            break;
        };
        if parent.rmdir(names[depth]).is_err() {
            break;
        }
    }
}

/// Puts back files already committed, newest first, through their held directories.
fn rollback(changes: &[Change], planned: &[String], chains: &[Vec<Arc<Dir>>], done: &[usize]) {
    for &i in done.iter().rev() {
        let c = &changes[i];
        let Some(dir) = chains[i].last() else {
            continue;
        };
        let name = c.target.name();
        match &c.before {
            None => {
                let _ = dir.unlink(name);
            }
            Some(before) => {
                // The journaled name, whose own temporary file was renamed already.
                let tmp = &planned[i];
                if dir
                    .create_new(tmp, before)
                    .and_then(|_| dir.rename(tmp, name))
                    .is_err()
                {
                    let _ = dir.unlink(tmp);
                }
            }
        }
    }
}
