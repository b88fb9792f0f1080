//! `write_file`, `append_file`, `delete_file` and `move_file`: single-file mutations
//! planned here and carried out by `txn::commit`.

use crate::api::LineEnding;
use crate::api::{
    AppendFileArgs, DeleteFileArgs, MoveFileArgs, MutationResult, WriteFileArgs, WriteMode,
};
use crate::audit::CallLog;
use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::rules::path::LogicalPath;
use crate::tools::session::Session;
use crate::tools::text_file::{ending_of, to_crlf, Declared, TextFile};
use crate::tools::txn::{check_expected, check_size, commit, writable, Change, Guard};

/// The encoding the repository declares for `path`, asked only when a file's bytes leave
/// it open (see `text_file`).
pub(crate) fn declared<'a>(
    s: &'a Session,
    log: &'a mut CallLog,
    path: &'a LogicalPath,
) -> impl FnMut() -> Option<Declared> + 'a {
    move || crate::tools::conventions::declared_encoding(s, log, path)
}

/// Fits new text to an existing file's conventions: a CRLF file keeps CRLF when the new
/// text has bare LF line breaks, a file with a BOM keeps it, and the text is written in
/// the file's encoding. Content that is not text is replaced by the text as given.
///
/// # Errors
/// `ENCODING_ERROR` when the file's encoding cannot hold a character of `content`.
fn fit_to_existing(
    shown: &str,
    before: &[u8],
    content: &str,
    warnings: &mut Vec<String>,
    declare: &mut dyn FnMut() -> Option<Declared>,
) -> ToolResult<Vec<u8>> {
    let Ok(old) = TextFile::decode(shown, before, declare) else {
        return Ok(content.as_bytes().to_vec());
    };
    let mut body = content
        .strip_prefix('\u{feff}')
        .unwrap_or(content)
        .to_string();
    if old.ending == LineEnding::Crlf && ending_of(&body) == LineEnding::Lf {
        body = to_crlf(&body);
        warnings.push("line breaks written as CRLF, as in the existing file".to_string());
    }
    if old.bom {
        body.insert(0, '\u{feff}');
    }
    old.encode_whole(shown, body, declare)
}

/// Creates or replaces a file.
///
/// # Errors
/// `PATH_REJECTED`, `POLICY_DENIED`, `NOT_A_FILE`, `ALREADY_EXISTS` (mode create),
/// `NOT_FOUND` (mode replace), `WRITE_CONFLICT`, `LIMIT_EXCEEDED` (size), `IO_ERROR`.
pub fn write_file(s: &Session, log: &mut CallLog, a: &WriteFileArgs) -> ToolResult<MutationResult> {
    let w = writable(s, &a.path)?;
    let shown = w.requested.to_string();
    let before = if w.exists() { Some(w.read(s)?) } else { None };
    match (a.mode.unwrap_or_default(), &before) {
        (WriteMode::Create, Some(_)) => {
            return Err(ToolError::new(
                ErrorCode::AlreadyExists,
                format!("'{shown}' already exists; read it and use edit_file, or write_file with mode \"replace\" and its expected_sha256"),
            )
            .with_path(shown))
        }
        (WriteMode::Replace, None) => {
            return Err(ToolError::new(
                ErrorCode::NotFound,
                format!("'{shown}' does not exist; use mode \"create\" to create it"),
            )
            .with_path(shown))
        }
        _ => {}
    }
    let mut warnings = Vec::new();
    let after = if w.blind {
        // Nothing about the old content is used or told: the content goes in as given.
        a.content.as_bytes().to_vec()
    } else {
        check_expected(
            s,
            &shown,
            before.as_deref(),
            a.expected_sha256.as_deref(),
            Guard::Whole,
        )?;
        match &before {
            Some(b) => fit_to_existing(
                &shown,
                b,
                &a.content,
                &mut warnings,
                &mut declared(s, log, &w.target),
            )?,
            None => crate::tools::conventions::new_file_bytes(
                s,
                log,
                &w.target,
                &a.content,
                &mut warnings,
            )?,
        }
    };
    check_size(s, &shown, after.len())?;
    let mut change = Change::new(w.target, shown, before, Some(after));
    change.blind = w.blind;
    commit(s, log, vec![change], a.dry_run.unwrap_or(false), warnings)
}

/// Appends text to a file, creating it when missing.
///
/// # Errors
/// As [`write_file`], plus `UNSUPPORTED_BINARY` and `ENCODING_ERROR` for a file that is
/// not text.
pub fn append_file(
    s: &Session,
    log: &mut CallLog,
    a: &AppendFileArgs,
) -> ToolResult<MutationResult> {
    let w = writable(s, &a.path)?;
    w.need_content()?;
    let shown = w.requested.to_string();
    let before = if w.exists() { Some(w.read(s)?) } else { None };
    check_expected(
        s,
        &shown,
        before.as_deref(),
        a.expected_sha256.as_deref(),
        Guard::Content,
    )?;
    let mut warnings = Vec::new();
    let mut after = before.clone().unwrap_or_default();
    match &before {
        Some(b) => {
            let mut declare = declared(s, log, &w.target);
            let old = TextFile::decode(&shown, b, &mut declare)?;
            let mut add = a.content.clone();
            if old.ending == LineEnding::Crlf && ending_of(&add) == LineEnding::Lf {
                add = to_crlf(&add);
                warnings.push("line breaks written as CRLF, as in the existing file".to_string());
            }
            // The added text in the file's encoding (no second BOM), after its bytes.
            after.extend_from_slice(&old.encode_whole(&shown, add, &mut declare)?);
        }
        None => {
            after = crate::tools::conventions::new_file_bytes(
                s,
                log,
                &w.target,
                &a.content,
                &mut warnings,
            )?
        }
    }
    check_size(s, &shown, after.len())?;
    let change = Change::new(w.target, shown, before, Some(after));
    commit(s, log, vec![change], a.dry_run.unwrap_or(false), warnings)
}

/// Deletes a file (never a directory or a symlink).
///
/// # Errors
/// `PATH_REJECTED`, `POLICY_DENIED`, `NOT_FOUND`, `NOT_A_FILE`, `WRITE_CONFLICT`, `IO_ERROR`.
pub fn delete_file(
    s: &Session,
    log: &mut CallLog,
    a: &DeleteFileArgs,
) -> ToolResult<MutationResult> {
    let requested = crate::rules::path::LogicalPath::parse(&a.path)?;
    let shown = requested.to_string();
    // (A path the read rules hide is not looked at: `writable` answers for it.)
    if !s.policy.hidden_path(&requested)
        && s.fs
            .stat_nofollow(&requested)
            .is_some_and(|m| m.ty == crate::rules::fsx::EntryType::Symlink)
    {
        return Err(ToolError::new(
            ErrorCode::NotAFile,
            format!("'{shown}' is a symlink; delete_file removes regular files only"),
        )
        .with_path(shown));
    }
    let w = writable(s, &a.path)?;
    if !w.exists() {
        return Err(ToolError::io(
            &shown,
            &std::io::Error::from(std::io::ErrorKind::NotFound),
        ));
    }
    let before = w.read(s)?;
    if !w.blind {
        check_expected(
            s,
            &shown,
            Some(&before),
            a.expected_sha256.as_deref(),
            Guard::Whole,
        )?;
    }
    let mut change = Change::new(w.target, shown, Some(before), None);
    change.blind = w.blind;
    commit(s, log, vec![change], a.dry_run.unwrap_or(false), Vec::new())
}

/// Moves a file; only when the policy enables moves.
///
/// # Errors
/// `POLICY_DENIED` (moves disabled, either end refused), `PATH_REJECTED`, `NOT_FOUND`,
/// `ALREADY_EXISTS` (destination exists and no `destination_sha256`), `WRITE_CONFLICT`,
/// `INVALID_INPUT` (same path), `IO_ERROR`.
pub fn move_file(s: &Session, log: &mut CallLog, a: &MoveFileArgs) -> ToolResult<MutationResult> {
    if !s.policy.config.allow_move {
        return Err(ToolError::denied(&a.from, "move_disabled", "the session policy does not allow moving files; write the new file and delete the old one instead"));
    }
    let from = writable(s, &a.from)?;
    let to = writable(s, &a.to)?;
    from.need_content()?;
    to.need_content()?;
    let from_shown = from.requested.to_string();
    let to_shown = to.requested.to_string();
    if !from.exists() {
        return Err(ToolError::io(
            &from_shown,
            &std::io::Error::from(std::io::ErrorKind::NotFound),
        ));
    }
    if from.target == to.target {
        return Err(ToolError::invalid(format!(
            "'{from_shown}' and '{to_shown}' are the same file"
        )));
    }
    let content = from.read(s)?;
    check_expected(
        s,
        &from_shown,
        Some(&content),
        a.expected_sha256.as_deref(),
        Guard::Content,
    )?;
    let dest_before = if to.exists() { Some(to.read(s)?) } else { None };
    match (&dest_before, a.destination_sha256.as_deref()) {
        (Some(_), None) => {
            return Err(ToolError::new(
                ErrorCode::AlreadyExists,
                format!("'{to_shown}' already exists; to replace it, pass its current sha256 as destination_sha256"),
            )
            .with_path(to_shown))
        }
        (Some(d), Some(expected)) => {
            check_expected(s, &to_shown, Some(d), Some(expected), Guard::Whole)?
        }
        (None, _) => {}
    }
    let mode_from = from.target.clone();
    let mut src = Change::new(from.target, from_shown.clone(), Some(content.clone()), None);
    src.label = Some("move_from");
    let overwrite = dest_before.is_some();
    src.quiet = !overwrite;
    let mut dst = Change::new(to.target, to_shown, dest_before, Some(content.clone()));
    dst.label = Some("move_to");
    dst.mode_from = Some(mode_from);
    if !overwrite {
        dst.renamed_from = Some((from_shown, content));
    }
    commit(
        s,
        log,
        vec![src, dst],
        a.dry_run.unwrap_or(false),
        Vec::new(),
    )
}
