//! The component shell: WIT bindings, the conversions between WIT records and the plain
//! Rust types of `api`, and the instance's session (root `/`, policy from the environment).

// The generated bindings are the one place that needs `unsafe` (the canonical ABI).
#![allow(unsafe_code)]

use std::sync::OnceLock;

use crate::api;
use crate::audit::AuditEvent;
use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::fs::port::Dir;
use crate::rules::classify::Kind;
use crate::rules::fsx::{EntryType, Fs};
use crate::rules::policy::{Policy, POLICY_ENV};
use crate::tools::session::Session;
use crate::tools::{self, run_call};

#[cfg(not(feature = "standalone"))]
mod host_port;
mod host_services;

#[cfg(not(feature = "standalone"))]
wit_bindgen::generate!({
    world: "file-tools",
    path: "../wit",
});

// The variant for plain WASI hosts (the `wasmtime` CLI): no imports beyond WASI.
#[cfg(feature = "standalone")]
wit_bindgen::generate!({
    world: "file-tools-standalone",
    path: "../wit",
});

use agent::file_tools::types as wt;
use exports::agent::file_tools::tools as wx;

struct Component;

export!(Component);

/// Where the repository root and the state directory come from.
const ROOT_ENV: &str = file_tools_contract::env::ROOT;
const STATE_ENV: &str = file_tools_contract::env::STATE;
const STATE_DEFAULT: &str = file_tools_contract::STATE_GUEST_PATH;
/// Set by a host whose directory descriptors are path strings resolved again on every use
/// (`paths`: the Node host over jco's preview2-shim); `held` (the default) for hosts whose
/// descriptors are open directories (Wasmtime).
const DESCRIPTORS_ENV: &str = file_tools_contract::env::DESCRIPTORS;
/// The key that signs continuation cursors (64 hex digits), so that a cursor made by one
/// instance is taken by the next; without it each instance makes its own.
const CURSOR_KEY_ENV: &str = file_tools_contract::env::TOKEN_KEY;
/// The token by which the host says it holds the repository's mutation lock (see
/// `crate::tools::journal`); absent under hosts without that lock.
const LOCK_TOKEN_ENV: &str = file_tools_contract::env::LOCK_TOKEN;

/// Whether the host said its descriptors are path strings.
fn path_descriptors() -> ToolResult<bool> {
    match std::env::var(DESCRIPTORS_ENV).as_deref() {
        Err(_) | Ok("held") => Ok(false),
        Ok("paths") => Ok(true),
        Ok(other) => Err(ToolError::new(
            ErrorCode::InvalidInput,
            format!("{DESCRIPTORS_ENV} is '{other}'; it takes 'held' or 'paths'"),
        )),
    }
}

/// The repository root and whether the state directory is mounted, from the preopens the
/// host gave: the one named by `FILE_TOOLS_ROOT`, else the one named `/`, else the only
/// one that is not the state directory. The state directory counts only when it is a
/// preopen of its own: a directory of that name inside the repository is never state.
fn preopens() -> ToolResult<(Dir, Option<std::path::PathBuf>)> {
    let state_name = std::env::var(STATE_ENV).unwrap_or_else(|_| STATE_DEFAULT.to_string());
    let wanted = std::env::var(ROOT_ENV).ok();
    let dirs = wasip2::filesystem::preopens::get_directories();
    let names: Vec<String> = dirs.iter().map(|(_, n)| n.clone()).collect();
    let has_state = names.contains(&state_name);
    let candidates: Vec<usize> = (0..dirs.len())
        .filter(|&i| names[i] != state_name)
        .collect();
    let pick = match &wanted {
        Some(w) => names.iter().position(|n| n == w),
        None => names
            .iter()
            .position(|n| n == "/")
            .or_else(|| (candidates.len() == 1).then(|| candidates[0])),
    };
    let Some(i) = pick else {
        return Err(ToolError::new(
            ErrorCode::InvalidInput,
            format!(
                "no repository directory: {}; the host saw these preopens: {}",
                match &wanted {
                    Some(w) => format!("{ROOT_ENV} names '{w}', which is not one of them"),
                    None => format!("set {ROOT_ENV} to the one that is the repository"),
                },
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            ),
        ));
    };
    let state = has_state.then(|| std::path::PathBuf::from(state_name));
    // The host's own directory handles when it offers them (non-blocking, link-refusing
    // opens on its side), else the WASI preopen.
    #[cfg(not(feature = "standalone"))]
    if let Some(root) = agent::file_tools::host_fs::root() {
        return Ok((Dir::from_ops(Box::new(host_port::HostDir(root))), state));
    }
    let root = dirs.into_iter().nth(i).map(|(d, _)| d);
    let root = root.ok_or_else(|| ToolError::new(ErrorCode::Internal, "preopen vanished"))?;
    let root = if path_descriptors()? {
        Dir::from_path_descriptor(root).map_err(|e| ToolError::io(".", &e))?
    } else {
        Dir::from_descriptor(root)
    };
    Ok((root, state))
}

/// The instance's host services, configured once from its environment; the session and
/// every call's audit share them.
fn services() -> &'static std::sync::Arc<host_services::HostServices> {
    static SERVICES: OnceLock<std::sync::Arc<host_services::HostServices>> = OnceLock::new();
    SERVICES.get_or_init(|| std::sync::Arc::new(host_services::HostServices::from_env()))
}

/// The instance's session, built on first use.
fn session() -> &'static ToolResult<Session> {
    static SESSION: OnceLock<ToolResult<Session>> = OnceLock::new();
    SESSION.get_or_init(|| {
        let json = std::env::var(POLICY_ENV).unwrap_or_default();
        let policy = Policy::from_json(&json)?;
        let (root, state) = preopens()?;
        let services = services().clone();
        let mut s = Session::new(Fs::new(root).with_services(services), policy);
        match std::env::var(CURSOR_KEY_ENV) {
            Ok(hex) if !hex.is_empty() => {
                let key = crate::tools::cursor::CursorKey::from_hex(&hex).map_err(|e| {
                    ToolError::new(ErrorCode::InvalidInput, format!("{CURSOR_KEY_ENV}: {e}"))
                })?;
                s = s.with_cursor_key(key);
            }
            // Without one, the session's own key: cursors last as long as the instance.
            _ => {}
        }
        if let Ok(token) = std::env::var(LOCK_TOKEN_ENV) {
            if !token.is_empty() {
                s = s.with_lock_token(token);
            }
        }
        s.index_builder =
            std::env::var(file_tools_contract::env::INDEX_BUILDER).as_deref() == Ok("1");
        s.shared_index_dir = std::env::var_os(file_tools_contract::env::INDEX_DIR)
            .filter(|d| !d.is_empty())
            .map(std::path::PathBuf::from);
        s.index_checkpoint_ns = std::env::var(file_tools_contract::env::INDEX_CHECKPOINT_MS)
            .ok()
            .and_then(|ms| ms.parse::<u64>().ok())
            .map(|ms| ms.saturating_mul(1_000_000));
        Ok(match state {
            Some(dir) => s.with_state_dir(dir),
            None => s,
        })
    })
}

/// A typed call: converts the WIT arguments, runs the tool, converts the result back.
fn typed<A, C, R, W>(
    tool: &str,
    args: A,
    f: fn(&Session, &mut crate::audit::CallLog, &C) -> ToolResult<R>,
) -> Result<W, wt::ToolError>
where
    A: Conv<C>,
    R: Conv<W>,
{
    let core = args.conv();
    run_call(session(), services().as_ref(), tool, |s, log| {
        f(s, log, &core)
    })
    .map(Conv::conv)
    .map_err(Conv::conv)
}

impl wx::Guest for Component {
    fn list_dir(args: wx::ListDirArgs) -> Result<wx::ListDirResult, wt::ToolError> {
        typed("list_dir", args, crate::tools::list::list_dir)
    }

    fn find_files(args: wx::FindFilesArgs) -> Result<wx::FindFilesResult, wt::ToolError> {
        typed("find_files", args, crate::tools::list::find_files)
    }

    fn changes_since(args: wx::ChangesSinceArgs) -> Result<wx::ChangesSinceResult, wt::ToolError> {
        typed("changes_since", args, crate::tools::changes::changes_since)
    }

    fn read_file(args: wx::ReadFileArgs) -> Result<wx::ReadFileResult, wt::ToolError> {
        typed("read_file", args, crate::tools::read::read_file)
    }

    fn read_many(args: wx::ReadManyArgs) -> Result<wx::ReadManyResult, wt::ToolError> {
        typed("read_many", args, crate::tools::read::read_many)
    }

    fn read_media(args: wx::ReadMediaArgs) -> Result<wx::ReadMediaResult, wt::ToolError> {
        typed("read_media", args, crate::tools::media::read_media)
    }

    fn search_text(args: wx::SearchTextArgs) -> Result<wx::SearchTextResult, wt::ToolError> {
        typed("search_text", args, crate::tools::search::search_text)
    }

    fn file_info(path: String) -> Result<wx::FileInfoResult, wt::ToolError> {
        typed(
            "file_info",
            api::FileInfoArgs { path },
            crate::tools::list::file_info,
        )
    }

    fn write_file(args: wx::WriteFileArgs) -> Result<wx::MutationResult, wt::ToolError> {
        typed("write_file", args, crate::tools::mutate::write_file)
    }

    fn edit_file(args: wx::EditFileArgs) -> Result<wx::MutationResult, wt::ToolError> {
        typed("edit_file", args, crate::tools::edit::edit_file)
    }

    fn apply_patch(args: wx::ApplyPatchArgs) -> Result<wx::MutationResult, wt::ToolError> {
        typed("apply_patch", args, crate::tools::patch::apply_patch)
    }

    fn append_file(args: wx::AppendFileArgs) -> Result<wx::MutationResult, wt::ToolError> {
        typed("append_file", args, crate::tools::mutate::append_file)
    }

    fn delete_file(args: wx::DeleteFileArgs) -> Result<wx::MutationResult, wt::ToolError> {
        typed("delete_file", args, crate::tools::mutate::delete_file)
    }

    fn move_file(args: wx::MoveFileArgs) -> Result<wx::MutationResult, wt::ToolError> {
        typed("move_file", args, crate::tools::mutate::move_file)
    }

    fn diff_workspace(
        args: wx::DiffWorkspaceArgs,
    ) -> Result<wx::DiffWorkspaceResult, wt::ToolError> {
        typed(
            "diff_workspace",
            args,
            crate::tools::workspace::diff_workspace,
        )
    }

    fn revert(args: wx::RevertArgs) -> Result<wx::MutationResult, wt::ToolError> {
        typed("revert", args, crate::tools::workspace::revert)
    }

    fn describe() -> Result<String, wt::ToolError> {
        match session() {
            Ok(_) => run_call(session(), services().as_ref(), "describe", |s, _| {
                Ok(tools::describe(&s.policy))
            })
            .map_err(Conv::conv),
            // No repository mounted (a host listing the tools): the policy alone decides.
            Err(_) => Policy::from_json(&std::env::var(POLICY_ENV).unwrap_or_default())
                .map(|p| tools::describe(&p))
                .map_err(Conv::conv),
        }
    }

    fn call(tool: String, args_json: String) -> Result<String, wt::ToolError> {
        run_call(session(), services().as_ref(), &tool, |s, log| {
            tools::call_json(s, log, &tool, &args_json)
        })
        .map_err(Conv::conv)
    }
}

/// Conversion between a WIT type and its plain Rust twin, in either direction.
trait Conv<T> {
    fn conv(self) -> T;
}

macro_rules! same {
    ($($t:ty),*) => { $(impl Conv<$t> for $t { fn conv(self) -> $t { self } })* };
}
same!(String, u32, u64, bool, api::FileInfoArgs);

impl<A: Conv<B>, B> Conv<Option<B>> for Option<A> {
    fn conv(self) -> Option<B> {
        self.map(Conv::conv)
    }
}

impl<A: Conv<B>, B> Conv<Vec<B>> for Vec<A> {
    fn conv(self) -> Vec<B> {
        self.into_iter().map(Conv::conv).collect()
    }
}

/// Field-for-field conversion of records whose fields share names.
macro_rules! record {
    ($from:ty => $to:ident :: $name:ident { $($f:ident),* $(,)? }) => {
        impl Conv<$to::$name> for $from {
            fn conv(self) -> $to::$name {
                $to::$name { $($f: self.$f.conv()),* }
            }
        }
    };
}

/// Field-for-field conversion from a WIT record into an `api` record.
macro_rules! args {
    ($from:ty => $name:ident { $($f:ident),* $(,)? }) => {
        impl Conv<api::$name> for $from {
            fn conv(self) -> api::$name {
                api::$name { $($f: self.$f.conv()),* }
            }
        }
    };
}

args!(wx::ListDirArgs => ListDirArgs {
    path, max_depth, max_entries, include_hidden, respect_ignore, cursor,
});
args!(wx::FindFilesArgs => FindFilesArgs {
    patterns, path, max_results, include_hidden, respect_ignore, cursor,
});
args!(wx::ChangesSinceArgs => ChangesSinceArgs {
    token, path, max_changes, include_hidden, respect_ignore, cursor,
});
args!(wx::ReadFileArgs => ReadFileArgs { path, start_line, max_lines, max_bytes, line_numbers });
args!(wx::ReadManyArgs => ReadManyArgs { paths, max_lines, max_bytes, line_numbers });
args!(wx::ReadMediaArgs => ReadMediaArgs { path });
args!(wx::Shard => Shard { index, count });
args!(wx::SearchTextArgs => SearchTextArgs {
    query, regex, case_insensitive, path, include, exclude, context_lines, max_matches, output,
    include_hidden, respect_ignore, shard, cursor,
});

args!(wx::WriteFileArgs => WriteFileArgs { path, content, mode, expected_sha256, dry_run });
args!(wx::Edit => Edit { old_text, new_text, replace_all });
impl Conv<api::EditFileArgs> for wx::EditFileArgs {
    fn conv(self) -> api::EditFileArgs {
        api::EditFileArgs {
            path: self.path,
            edits: self.edits.conv(),
            expected_sha256: self.expected_sha256,
            dry_run: self.dry_run,
            match_level: self.match_.conv(),
        }
    }
}
impl Conv<api::ApplyPatchArgs> for wx::ApplyPatchArgs {
    fn conv(self) -> api::ApplyPatchArgs {
        api::ApplyPatchArgs {
            patch: self.patch,
            expected_sha256s: self.expected_sha256s.conv(),
            dry_run: self.dry_run,
            match_level: self.match_.conv(),
        }
    }
}

impl Conv<api::MatchLevel> for wx::MatchLevel {
    fn conv(self) -> api::MatchLevel {
        match self {
            wx::MatchLevel::Exact => api::MatchLevel::Exact,
            wx::MatchLevel::TrailingWhitespace => api::MatchLevel::TrailingWhitespace,
            wx::MatchLevel::Whitespace => api::MatchLevel::Whitespace,
            wx::MatchLevel::Punctuation => api::MatchLevel::Punctuation,
        }
    }
}

impl Conv<wx::MatchLevel> for api::MatchLevel {
    fn conv(self) -> wx::MatchLevel {
        match self {
            api::MatchLevel::Exact => wx::MatchLevel::Exact,
            api::MatchLevel::TrailingWhitespace => wx::MatchLevel::TrailingWhitespace,
            api::MatchLevel::Whitespace => wx::MatchLevel::Whitespace,
            api::MatchLevel::Punctuation => wx::MatchLevel::Punctuation,
        }
    }
}
args!(wx::AppendFileArgs => AppendFileArgs { path, content, expected_sha256, dry_run });
args!(wx::DeleteFileArgs => DeleteFileArgs { path, expected_sha256, dry_run });
args!(wx::MoveFileArgs => MoveFileArgs { from, to, expected_sha256, destination_sha256, dry_run });
args!(wx::DiffWorkspaceArgs => DiffWorkspaceArgs { paths, stat_only, max_bytes });

/// Path-and-hash pairs as the map the tools take.
impl Conv<std::collections::BTreeMap<String, String>> for Vec<wx::PathSha256> {
    fn conv(self) -> std::collections::BTreeMap<String, String> {
        self.into_iter().map(|p| (p.path, p.sha256)).collect()
    }
}

args!(wx::RevertArgs => RevertArgs { paths, expected_sha256s, dry_run });

impl Conv<api::WriteMode> for wx::WriteMode {
    fn conv(self) -> api::WriteMode {
        match self {
            wx::WriteMode::Create => api::WriteMode::Create,
            wx::WriteMode::Replace => api::WriteMode::Replace,
            wx::WriteMode::CreateOrReplace => api::WriteMode::CreateOrReplace,
        }
    }
}

impl Conv<api::SearchOutput> for wx::SearchOutput {
    fn conv(self) -> api::SearchOutput {
        match self {
            wx::SearchOutput::Matches => api::SearchOutput::Matches,
            wx::SearchOutput::Files => api::SearchOutput::Files,
            wx::SearchOutput::Count => api::SearchOutput::Count,
        }
    }
}

record!(api::SkipCount => wt::SkipCount { reason, count });
record!(api::Stop => wx::Stop { cap, limit });
record!(api::ListDirResult => wx::ListDirResult {
    entries, truncated, stopped_by, skipped, next_cursor, summary,
});
record!(api::FindFilesResult => wx::FindFilesResult {
    paths, truncated, stopped_by, skipped, next_cursor, summary,
});
record!(api::Change => wx::Change { path, change, size, sha256 });
record!(api::ChangesSinceResult => wx::ChangesSinceResult {
    changes, token, created, modified, deleted, rehashed, truncated, stopped_by, next_cursor,
    summary,
});
impl Conv<wx::ChangeKind> for api::ChangeKind {
    fn conv(self) -> wx::ChangeKind {
        match self {
            api::ChangeKind::Created => wx::ChangeKind::Created,
            api::ChangeKind::Modified => wx::ChangeKind::Modified,
            api::ChangeKind::Deleted => wx::ChangeKind::Deleted,
        }
    }
}
record!(api::ReadFileResult => wx::ReadFileResult {
    path, content, start_line, end_line, total_lines, size, sha256, truncated, line_ending, bom,
    encoding, valid_utf8, kind, summary,
});
record!(api::ReadManyResult => wx::ReadManyResult { files, summary });
record!(api::ReadMediaResult => wx::ReadMediaResult {
    path, mime_type, size, sha256, data_base64, summary,
});
record!(api::SearchMatch => wx::SearchMatch {
    path, line, column, text, cut_before, cut_after, match_start, match_len, before, after,
});
record!(api::FileCount => wx::FileCount { path, count });
record!(api::SearchTextResult => wx::SearchTextResult {
    matches, files, total_matches, files_matched, files_searched, truncated, stopped_by, skipped,
    next_cursor, summary,
});
record!(api::FileChange => wx::FileChange {
    path, action, sha256_before, sha256_after, insertions, deletions,
});
record!(api::MutationResult => wx::MutationResult {
    changes, insertions, deletions, diff, diff_truncated, dry_run, warnings, relaxed_hunks,
    summary,
});
record!(api::RelaxedHunk => wx::RelaxedHunk { path, hunk, line, level });
record!(api::FileStat => wx::FileStat { path, status, insertions, deletions });
record!(api::DiffWorkspaceResult => wx::DiffWorkspaceResult {
    files, insertions, deletions, diff, diff_sha256, truncated, summary,
});
record!(crate::audit::AuditFile => wt::AuditFile { path, action, sha256_before, sha256_after });
record!(crate::rules::approval::ApprovalRequest => wt::ApprovalRequest {
    tool, reasons, files, insertions, deletions, diff, escaped,
});
record!(AuditEvent => wt::AuditEvent {
    sequence, tool, ok, error_code, error_message, paths_read, paths_written, files, bytes_read,
    bytes_written, insertions, deletions, duration_us, diff, notes,
});

impl Conv<wx::DirEntry> for api::DirEntry {
    fn conv(self) -> wx::DirEntry {
        wx::DirEntry {
            path: self.path,
            type_: self.ty.conv(),
            kind: self.kind.conv(),
            size: self.size,
            modified: self.modified,
            target: self.target,
        }
    }
}

impl Conv<wx::FileInfoResult> for api::FileInfoResult {
    fn conv(self) -> wx::FileInfoResult {
        wx::FileInfoResult {
            path: self.path,
            type_: self.ty.conv(),
            kind: self.kind.conv(),
            size: self.size,
            modified: self.modified,
            sha256: self.sha256,
            target: self.target,
            readable: self.readable,
            read_denied_reason: self.read_denied_reason,
            writable: self.writable,
            write_denied_reason: self.write_denied_reason,
            summary: self.summary,
        }
    }
}

impl Conv<wx::ReadManyItem> for api::ReadManyItem {
    fn conv(self) -> wx::ReadManyItem {
        let outcome = match (self.result, self.error) {
            (Some(r), _) => Ok(r.conv()),
            (None, Some(e)) => Err(e.conv()),
            (None, None) => Err(ToolError::new(ErrorCode::Internal, "no result recorded").conv()),
        };
        wx::ReadManyItem {
            path: self.path,
            outcome,
        }
    }
}

impl Conv<wt::ToolError> for ToolError {
    fn conv(self) -> wt::ToolError {
        wt::ToolError {
            code: self.code.conv(),
            message: self.message,
            path: self.path,
            reason: self.reason,
            details: self
                .details
                .into_iter()
                .map(|(key, value)| wt::Detail { key, value })
                .collect(),
        }
    }
}

impl Conv<wt::ErrorCode> for ErrorCode {
    fn conv(self) -> wt::ErrorCode {
        use wt::ErrorCode as W;
        match self {
            ErrorCode::PathRejected => W::PathRejected,
            ErrorCode::NotFound => W::NotFound,
            ErrorCode::AlreadyExists => W::AlreadyExists,
            ErrorCode::NotAFile => W::NotAFile,
            ErrorCode::PolicyDenied => W::PolicyDenied,
            ErrorCode::FileTooLarge => W::FileTooLarge,
            ErrorCode::UnsupportedBinary => W::UnsupportedBinary,
            ErrorCode::EncodingError => W::EncodingError,
            ErrorCode::WriteConflict => W::WriteConflict,
            ErrorCode::EditNoMatch => W::EditNoMatch,
            ErrorCode::EditAmbiguous => W::EditAmbiguous,
            ErrorCode::PatchParseError => W::PatchParseError,
            ErrorCode::PatchConflict => W::PatchConflict,
            ErrorCode::PatchBudgetExceeded => W::PatchBudgetExceeded,
            ErrorCode::ApprovalRequired => W::ApprovalRequired,
            ErrorCode::InvalidInput => W::InvalidInput,
            ErrorCode::LimitExceeded => W::LimitExceeded,
            ErrorCode::IoError => W::IoError,
            ErrorCode::Internal => W::Internal,
            ErrorCode::Cancelled => W::Cancelled,
            ErrorCode::UnsupportedMedia => W::UnsupportedMedia,
        }
    }
}

impl Conv<EntryType> for wt::EntryType {
    fn conv(self) -> EntryType {
        match self {
            wt::EntryType::File => EntryType::File,
            wt::EntryType::Dir => EntryType::Dir,
            wt::EntryType::Symlink => EntryType::Symlink,
            wt::EntryType::Other => EntryType::Other,
        }
    }
}

impl Conv<wt::EntryType> for EntryType {
    fn conv(self) -> wt::EntryType {
        match self {
            EntryType::File => wt::EntryType::File,
            EntryType::Dir => wt::EntryType::Dir,
            EntryType::Symlink => wt::EntryType::Symlink,
            EntryType::Other => wt::EntryType::Other,
        }
    }
}

impl Conv<wt::FileKind> for Kind {
    fn conv(self) -> wt::FileKind {
        use wt::FileKind as W;
        match self {
            Kind::Source => W::Source,
            Kind::Config => W::Config,
            Kind::Doc => W::Doc,
            Kind::Text => W::Text,
            Kind::Secret => W::Secret,
            Kind::GitInternal => W::GitInternal,
            Kind::Generated => W::Generated,
            Kind::Vendored => W::Vendored,
            Kind::Lockfile => W::Lockfile,
            Kind::Automation => W::Automation,
            Kind::Binary => W::Binary,
            Kind::Directory => W::Directory,
        }
    }
}

impl Conv<wt::LineEnding> for api::LineEnding {
    fn conv(self) -> wt::LineEnding {
        match self {
            api::LineEnding::Lf => wt::LineEnding::Lf,
            api::LineEnding::Crlf => wt::LineEnding::Crlf,
            api::LineEnding::Mixed => wt::LineEnding::Mixed,
            api::LineEnding::None => wt::LineEnding::None,
        }
    }
}
