//! Every mutation is a transaction over one or more files, in four steps:
//!
//! 1. **plan** (done by the tool): guard, classify and check every path, read current
//!    content, compute new content, all in memory;
//! 2. **baseline**: record the original content of paths the session changes for the first
//!    time (for `diff_workspace` and `revert`);
//! 3. **prepare**: write every new content to a temporary file beside its target and flush
//!    it, then check each target's sha256 once more;
//! 4. **commit**: rename each temporary file over its target (atomic per file) and remove
//!    deleted files. If a step fails, files already committed are put back and every
//!    temporary file is removed: a failed call leaves the tree as it was.

use std::fs::{self, File, Metadata};
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::api::{FileChange, MutationResult};
use crate::approval::{self, ApprovalRequest};
use crate::audit::{AuditFile, CallLog};
use crate::baseline::Baseline;
use crate::classify::Kind;
use crate::diff::{bound, file_diff, FileDiff, Side};
use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::hash::{is_sha256, sha256_hex};
use crate::path::{LogicalPath, TEMP_MARKER};
use crate::session::Session;

/// A path that may be written: guarded, resolved, classified and allowed by the policy.
#[derive(Debug)]
pub struct Writable {
    /// The path as the agent gave it, normalised.
    pub requested: LogicalPath,
    /// Where the content really lives (after inside symlinks).
    pub target: LogicalPath,
    /// Metadata of the existing file, or `None` when it does not exist yet.
    pub meta: Option<Metadata>,
    pub kind: Kind,
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
        fs::read(s.fs.real(&self.target))
            .map_err(|e| ToolError::io(&self.requested.to_string(), &e))
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
    let r = s.fs.resolve(&requested)?;
    let final_is_link = r.via_link
        && r.meta.is_none()
        && fs::symlink_metadata(s.fs.real(&requested)).is_ok_and(|m| m.file_type().is_symlink());
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
    if let Some(m) = r.meta.as_ref().filter(|m| m.len() > max) {
        return Err(ToolError::new(
            ErrorCode::FileTooLarge,
            format!(
                "'{shown}' is {} bytes, over the {max} byte limit for files the tools change",
                m.len()
            ),
        )
        .with_path(shown));
    }
    if r.meta.is_some() && !s.policy.config.allow_hardlinks && link_count(s, &r.target) > 1 {
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
        kind,
    })
}

/// How many names the file has.
#[cfg(target_os = "wasi")]
fn link_count(s: &Session, p: &LogicalPath) -> u64 {
    use wasip2::filesystem::types::PathFlags;
    let _ = s;
    thread_local! {
        static ROOT: Option<wasip2::filesystem::types::Descriptor> = wasip2::filesystem::preopens::get_directories()
            .into_iter()
            .find(|(_, name)| name == "/")
            .map(|(d, _)| d);
    }
    ROOT.with(|root| {
        root.as_ref()
            .and_then(|d| d.stat_at(PathFlags::empty(), &p.to_string()).ok())
            .map_or(1, |st| st.link_count)
    })
}

#[cfg(unix)]
fn link_count(s: &Session, p: &LogicalPath) -> u64 {
    use std::os::unix::fs::MetadataExt;
    fs::symlink_metadata(s.fs.real(p)).map_or(1, |m| m.nlink())
}

#[cfg(not(any(unix, target_os = "wasi")))]
fn link_count(_s: &Session, _p: &LogicalPath) -> u64 {
    1
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
            let cur = sha256_hex(bytes);
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

/// A unique suffix for temporary names.
pub fn temp_suffix() -> String {
    use std::hash::{BuildHasher, Hasher};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    format!("{:016x}", h.finish())
}

fn side(bytes: Option<&[u8]>, opaque: bool) -> Side<'_> {
    match bytes {
        None => Side::Absent,
        Some(_) if opaque => Side::Opaque,
        Some(b) => std::str::from_utf8(b).map_or(Side::Opaque, Side::Text),
    }
}

/// The diff of one planned change.
pub fn change_diff(c: &Change) -> FileDiff {
    if c.quiet {
        return FileDiff::default();
    }
    match &c.renamed_from {
        Some((from, content)) if c.before.is_none() => file_diff(
            from,
            &c.shown,
            side(Some(content), c.opaque),
            side(c.after.as_deref(), c.opaque),
        ),
        _ => file_diff(
            &c.shown,
            &c.shown,
            side(c.before.as_deref(), c.opaque),
            side(c.after.as_deref(), c.opaque),
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
        .filter(|c| !crate::bytes::eq_opt(c.before.as_deref(), c.after.as_deref()))
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
            sha256_before: c.before.as_deref().map(sha256_hex),
            sha256_after: c.after.as_deref().map(sha256_hex),
            insertions: d.insertions,
            deletions: d.deletions,
        });
    }
    let mut warnings = warnings;
    let reasons = s.policy.approval().reasons(&s.policy, &changes, ins + del);
    if !reasons.is_empty() {
        if dry_run {
            warnings.push(format!(
                "needs approval to be written: {}",
                reasons.join("; ")
            ));
        } else {
            let request = ApprovalRequest {
                tool: log.tool.clone(),
                reasons: reasons.clone(),
                files: files.iter().map(AuditFile::from).collect(),
                insertions: ins,
                deletions: del,
                diff: diff.clone(),
            };
            if !approval::ask(&request) {
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

fn temp_path(s: &Session, target: &LogicalPath) -> PathBuf {
    let real = s.fs.real(target);
    let name = format!(".{}{TEMP_MARKER}{}", target.name(), temp_suffix());
    real.with_file_name(name)
}

fn write_temp(path: &PathBuf, data: &[u8]) -> std::io::Result<()> {
    let mut f = File::options().write(true).create_new(true).open(path)?;
    f.write_all(data)?;
    f.sync_all()
}

/// Steps 2 to 4.
fn apply(s: &Session, changes: &[Change]) -> ToolResult<()> {
    let baseline = Baseline::new(s.state_dir.as_deref());
    let originals: Vec<(String, Option<&[u8]>)> = changes
        .iter()
        .map(|c| (c.target.to_string(), c.before.as_deref()))
        .collect();
    baseline.record(&originals)?;

    // Temporary names are chosen first and written to a journal in the state directory, so
    // that a session after a crash can remove what a killed process left behind.
    let journal = s.state_dir.as_ref().map(|d| d.join(JOURNAL));
    if let Some(j) = &journal {
        recover(j);
    }
    let planned: Vec<Option<PathBuf>> = changes
        .iter()
        .map(|c| c.after.as_ref().map(|_| temp_path(s, &c.target)))
        .collect();
    if let Some(j) = &journal {
        let names: Vec<String> = planned
            .iter()
            .flatten()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        let json = serde_json::to_vec(&names).unwrap_or_default();
        fs::write(j, json).map_err(|e| {
            ToolError::new(
                ErrorCode::IoError,
                format!("the session state could not be written: {e}"),
            )
        })?;
    }
    let result = write_and_commit(s, changes, &planned);
    if let Some(j) = &journal {
        let _ = fs::remove_file(j);
    }
    result
}

/// Name of the journal of temporary files in the state directory.
const JOURNAL: &str = "pending-temps.json";

/// Removes temporary files a killed process left behind (only names of file-tools' own
/// temporary files are ever removed), then the journal.
fn recover(journal: &std::path::Path) {
    let Ok(bytes) = fs::read(journal) else { return };
    let names: Vec<String> = serde_json::from_slice(&bytes).unwrap_or_default();
    for n in names {
        let p = PathBuf::from(n);
        if p.file_name()
            .and_then(|f| f.to_str())
            .is_some_and(crate::path::is_temp_name)
        {
            let _ = fs::remove_file(p);
        }
    }
    let _ = fs::remove_file(journal);
}

/// Steps 3 and 4 with the temporary names already chosen.
fn write_and_commit(
    s: &Session,
    changes: &[Change],
    planned: &[Option<PathBuf>],
) -> ToolResult<()> {
    let mut temps: Vec<Option<PathBuf>> = Vec::with_capacity(changes.len());
    let cleanup = |temps: &[Option<PathBuf>]| {
        for t in temps.iter().flatten() {
            let _ = fs::remove_file(t);
        }
    };
    for (c, tmp) in changes.iter().zip(planned) {
        let (Some(after), Some(tmp)) = (&c.after, tmp) else {
            temps.push(None);
            continue;
        };
        let tmp = tmp.clone();
        let real = s.fs.real(&c.target);
        if let Some(dir) = real.parent() {
            if let Err(e) = fs::create_dir_all(dir) {
                cleanup(&temps);
                return Err(ToolError::io(&c.shown, &e));
            }
        }
        if let Err(e) = write_temp(&tmp, after) {
            let _ = fs::remove_file(&tmp);
            cleanup(&temps);
            return Err(ToolError::io(&c.shown, &e));
        }
        if c.before.is_some() {
            // A replaced file keeps its permission bits (WASI cannot set them itself).
            let tmp_logical = c
                .target
                .parent()
                .join(tmp.file_name().and_then(|n| n.to_str()).unwrap_or_default());
            crate::modes::copy_mode(&c.target, &tmp_logical);
        }
        temps.push(Some(tmp));
    }
    crate::fault::point("commit");
    // The last check before anything becomes visible: every file is still as planned.
    for c in changes {
        // Bytes compared directly: cheaper than hashing both sides of every file.
        let now_bytes = fs::read(s.fs.real(&c.target)).ok();
        if !crate::bytes::eq_opt(now_bytes.as_deref(), c.before.as_deref()) {
            let now = now_bytes.as_deref().map(sha256_hex);
            cleanup(&temps);
            let mut e = ToolError::new(
                ErrorCode::WriteConflict,
                format!(
                    "'{}' was changed by someone else while this call ran; re-read it and retry",
                    c.shown
                ),
            )
            .with_path(&c.shown);
            if let Some(now) = now {
                e = e.with_detail("current_sha256", now);
            }
            return Err(e);
        }
    }
    let mut done: Vec<usize> = Vec::with_capacity(changes.len());
    for (i, c) in changes.iter().enumerate() {
        let real = s.fs.real(&c.target);
        let result = match &temps[i] {
            Some(tmp) => fs::rename(tmp, &real),
            None => fs::remove_file(&real),
        };
        if let Err(e) = result {
            rollback(s, changes, &done);
            cleanup(&temps[i..]);
            return Err(ToolError::io(&c.shown, &e));
        }
        done.push(i);
    }
    for c in changes.iter().filter(|c| c.after.is_none()) {
        remove_emptied_dirs(s, &c.target);
    }
    Ok(())
}

/// Removes the directories a deletion left empty, up to (never including) the root, as
/// `git apply` does.
fn remove_emptied_dirs(s: &Session, deleted: &LogicalPath) {
    let mut dir = deleted.parent();
    while !dir.is_root() && fs::remove_dir(s.fs.real(&dir)).is_ok() {
        dir = dir.parent();
    }
}

/// Puts back files already committed, newest first.
fn rollback(s: &Session, changes: &[Change], done: &[usize]) {
    for &i in done.iter().rev() {
        let c = &changes[i];
        let real = s.fs.real(&c.target);
        match &c.before {
            None => {
                let _ = fs::remove_file(&real);
            }
            Some(before) => {
                if let Some(dir) = real.parent() {
                    let _ = fs::create_dir_all(dir);
                }
                let tmp = temp_path(s, &c.target);
                if write_temp(&tmp, before)
                    .and_then(|_| fs::rename(&tmp, &real))
                    .is_err()
                {
                    let _ = fs::remove_file(&tmp);
                }
            }
        }
    }
}
