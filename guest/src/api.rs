//! Arguments and results of every tool, as plain Rust types. Their serde form is the JSON
//! API (snake_case names); their doc comments become the JSON Schemas handed to models. The
//! WIT records mirror them field for field.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::ToolError;
use crate::fs::port::EntryType;
use crate::rules::classify::Kind;

/// Arguments of `list_dir`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListDirArgs {
    /// Directory to list, relative to the repository root; the root when absent.
    pub path: Option<String>,
    /// How deep to descend: 1 lists only the directory's own entries (default 1).
    pub max_depth: Option<u32>,
    /// Stop after this many entries (default and cap set by the policy).
    pub max_entries: Option<u32>,
    /// Include names starting with a dot (default false).
    pub include_hidden: Option<bool>,
    /// Honour .gitignore/.ignore files and skip generated directories (default true).
    pub respect_ignore: Option<bool>,
    /// Continue after the previous page: that page's `next_cursor`. The other arguments
    /// must be the same (the page size may change).
    pub cursor: Option<String>,
}

/// One entry of a listing.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct DirEntry {
    pub path: String,
    #[serde(rename = "type")]
    pub ty: EntryType,
    pub kind: Kind,
    pub size: u64,
    pub modified: Option<String>,
    pub target: Option<String>,
}

/// How many entries were passed over for one reason.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct SkipCount {
    pub reason: String,
    pub count: u32,
}

/// The cap that cut a result short, and its value.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct Stop {
    pub cap: String,
    pub limit: u64,
}

impl Stop {
    pub fn new(cap: &str, limit: impl Into<u64>) -> Self {
        Stop {
            cap: cap.to_string(),
            limit: limit.into(),
        }
    }

    /// The summary's words for it: which cap, at what value, and what to do.
    pub fn note(&self, advice: &str) -> String {
        format!("; stopped at {} = {}: {advice}", self.cap, self.limit)
    }
}

/// Result of `list_dir`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct ListDirResult {
    pub entries: Vec<DirEntry>,
    pub truncated: bool,
    pub stopped_by: Option<Stop>,
    pub skipped: Vec<SkipCount>,
    pub next_cursor: Option<String>,
    pub summary: String,
}

/// Arguments of `find_files`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindFilesArgs {
    /// Globs. One without '/' matches the file name at any depth ("*.rs"); one with '/'
    /// matches the whole path from the root ("src/**/*.rs"). A file matches when any does.
    pub patterns: Vec<String>,
    /// Directory to search under; the root when absent.
    pub path: Option<String>,
    /// Stop after this many paths (default and cap set by the policy).
    pub max_results: Option<u32>,
    /// Include hidden files (default false).
    pub include_hidden: Option<bool>,
    /// Honour ignore files and skip generated directories (default true).
    pub respect_ignore: Option<bool>,
    /// Continue after the previous page: that page's `next_cursor`. The other arguments
    /// must be the same (the page size may change).
    pub cursor: Option<String>,
}

/// Result of `find_files`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct FindFilesResult {
    pub paths: Vec<String>,
    pub truncated: bool,
    pub stopped_by: Option<Stop>,
    pub skipped: Vec<SkipCount>,
    pub next_cursor: Option<String>,
    pub summary: String,
}

/// Arguments of `changes_since`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChangesSinceArgs {
    /// The token an earlier call returned. Absent: the call only returns a token for the
    /// tree as it is now.
    pub token: Option<String>,
    /// Directory to watch under; the root when absent. Part of the token: pass the same.
    pub path: Option<String>,
    /// Stop after this many changes (default and cap: the policy's max_find_results).
    pub max_changes: Option<u32>,
    /// Include hidden files (default false). Part of the token: pass the same.
    pub include_hidden: Option<bool>,
    /// Honour ignore files and skip generated directories (default true). Part of the
    /// token: pass the same.
    pub respect_ignore: Option<bool>,
    /// Continue after the previous page: that page's `next_cursor`, with the same token.
    pub cursor: Option<String>,
}

/// How a file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    Created,
    Modified,
    Deleted,
}

/// One changed file.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct Change {
    pub path: String,
    pub change: ChangeKind,
    /// Its size now (not for a deleted file, a symlink or a secret).
    pub size: Option<u64>,
    /// Its sha256 now, as read_file reports it (only for a file the policy lets be read).
    pub sha256: Option<String>,
}

/// Result of `changes_since`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct ChangesSinceResult {
    /// The changes in path order (this page of them).
    pub changes: Vec<Change>,
    /// The token for the tree as it is now.
    pub token: String,
    /// Counts over all pages.
    pub created: u32,
    pub modified: u32,
    pub deleted: u32,
    /// Files whose content this call read and hashed (metadata moved, new, or racily
    /// clean); a file found to hold a secret is not counted.
    pub rehashed: u32,
    pub truncated: bool,
    pub stopped_by: Option<Stop>,
    pub next_cursor: Option<String>,
    pub summary: String,
}

/// Arguments of `read_file`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFileArgs {
    /// File to read, relative to the repository root.
    pub path: String,
    /// First line to return, counting from 1 (default 1).
    pub start_line: Option<u32>,
    /// Most lines to return (default and cap set by the policy).
    pub max_lines: Option<u32>,
    /// Most bytes of content to return (default and cap set by the policy).
    pub max_bytes: Option<u32>,
    /// Prefix every line with its number and a tab (default false).
    pub line_numbers: Option<bool>,
}

/// How lines end in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LineEnding {
    Lf,
    Crlf,
    Mixed,
    None,
}

/// Result of `read_file`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ReadFileResult {
    pub path: String,
    pub content: String,
    pub start_line: u32,
    pub end_line: u32,
    pub total_lines: u32,
    pub size: u64,
    pub sha256: String,
    pub truncated: bool,
    pub line_ending: LineEnding,
    pub bom: bool,
    pub valid_utf8: bool,
    pub kind: Kind,
    pub summary: String,
}

/// Arguments of `read_many`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadManyArgs {
    /// Files to read, relative to the repository root (at most the policy's limit).
    pub paths: Vec<String>,
    /// Most lines to return per file.
    pub max_lines: Option<u32>,
    /// Most bytes of content to return per file.
    pub max_bytes: Option<u32>,
    /// Prefix every line with its number and a tab (default false).
    pub line_numbers: Option<bool>,
}

/// One file of a `read_many` call.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct ReadManyItem {
    pub path: String,
    pub ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<ReadFileResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ToolError>,
}

/// Result of `read_many`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct ReadManyResult {
    pub files: Vec<ReadManyItem>,
    pub summary: String,
}

/// What `search_text` returns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SearchOutput {
    /// Every matching line with its context.
    #[default]
    Matches,
    /// Only the files that match, with their counts.
    Files,
    /// Only the counts.
    Count,
}

/// A part of the tree, for searches split over several instances.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Shard {
    /// This instance's shard, from 0.
    pub index: u32,
    /// How many shards there are.
    pub count: u32,
}

/// Arguments of `search_text`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchTextArgs {
    /// The text to find, or a regular expression when `regex` is true.
    pub query: String,
    /// Treat `query` as a regular expression in Rust regex syntax (default false: literal).
    pub regex: Option<bool>,
    /// Ignore case (default false).
    pub case_insensitive: Option<bool>,
    /// Directory or file to search; the whole repository when absent.
    pub path: Option<String>,
    /// Only search files matching one of these globs ("*.rs", "src/**").
    #[serde(default)]
    pub include: Vec<String>,
    /// Never search files matching one of these globs.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Lines of context before and after each match (default 0, at most 10).
    pub context_lines: Option<u32>,
    /// Stop after this many matching lines (default and cap set by the policy).
    pub max_matches: Option<u32>,
    /// "matches" (default), "files" or "count".
    pub output: Option<SearchOutput>,
    /// Include hidden files (default false).
    pub include_hidden: Option<bool>,
    /// Honour ignore files and skip generated directories (default true).
    pub respect_ignore: Option<bool>,
    /// Search only one shard of the tree (for parallel hosts).
    pub shard: Option<Shard>,
    /// Continue after the previous page: that page's `next_cursor`. The other arguments
    /// must be the same (the page size may change).
    pub cursor: Option<String>,
}

/// One matching line.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct SearchMatch {
    pub path: String,
    pub line: u32,
    /// Byte column of the first match in the whole line, from 1.
    pub column: u32,
    /// The line, or for a long line a window around the match with `[…N bytes cut]` /
    /// `[N bytes cut…]` markers where it was cut.
    pub text: String,
    /// Bytes of the line cut before `text` (0: it starts at the line's start).
    pub cut_before: u32,
    /// Bytes of the line cut after `text` (0: it runs to the line's end).
    pub cut_after: u32,
    /// Byte offset of the match in `text`.
    pub match_start: u32,
    /// Bytes of the match shown in `text`.
    pub match_len: u32,
    pub before: Vec<String>,
    pub after: Vec<String>,
}

/// A file with matches.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct FileCount {
    pub path: String,
    pub count: u32,
}

/// Result of `search_text`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct SearchTextResult {
    pub matches: Vec<SearchMatch>,
    pub files: Vec<FileCount>,
    pub total_matches: u64,
    pub files_matched: u64,
    pub files_searched: u64,
    pub truncated: bool,
    pub stopped_by: Option<Stop>,
    pub skipped: Vec<SkipCount>,
    pub next_cursor: Option<String>,
    pub summary: String,
}

/// Arguments of `file_info`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileInfoArgs {
    /// File or directory to describe, relative to the repository root.
    pub path: String,
}

/// Result of `file_info`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct FileInfoResult {
    pub path: String,
    #[serde(rename = "type")]
    pub ty: EntryType,
    pub kind: Kind,
    pub size: u64,
    pub modified: Option<String>,
    pub sha256: Option<String>,
    pub target: Option<String>,
    pub readable: bool,
    pub read_denied_reason: Option<String>,
    pub writable: bool,
    pub write_denied_reason: Option<String>,
    pub summary: String,
}

/// One file a mutation changed (or, in a dry run, would change).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct FileChange {
    pub path: String,
    /// `create`, `modify` or `delete`.
    pub action: String,
    pub sha256_before: Option<String>,
    pub sha256_after: Option<String>,
    pub insertions: u32,
    pub deletions: u32,
}

/// Result of every mutation tool.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct MutationResult {
    pub changes: Vec<FileChange>,
    pub insertions: u32,
    pub deletions: u32,
    /// Unified diff (git format) of the change, cut at the policy's limit.
    pub diff: String,
    pub diff_truncated: bool,
    pub dry_run: bool,
    pub warnings: Vec<String>,
    /// `apply_patch` and `edit_file`: hunks (or edits) that matched only with relaxed
    /// matching.
    pub relaxed_hunks: Vec<RelaxedHunk>,
    pub summary: String,
}

/// How `write_file` treats an existing file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WriteMode {
    /// Only create: an existing file is ALREADY_EXISTS.
    Create,
    /// Only replace: a missing file is NOT_FOUND.
    Replace,
    /// Create or replace (default).
    #[default]
    CreateOrReplace,
}

/// Arguments of `write_file`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteFileArgs {
    /// File to write, relative to the repository root; missing parent directories are created.
    pub path: String,
    /// The whole new content (UTF-8). In a file that uses CRLF, LF line breaks are written as CRLF.
    /// A new file takes the line endings, final newline and BOM that .gitattributes and
    /// .editorconfig declare for its path (changes made are listed in warnings).
    pub content: String,
    /// "create", "replace" or "create_or_replace" (default).
    pub mode: Option<WriteMode>,
    /// sha256 of the file as you last read it; the write is refused if it changed since.
    pub expected_sha256: Option<String>,
    /// Return the diff without writing (default false).
    pub dry_run: Option<bool>,
}

/// One exact replacement of `edit_file`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Edit {
    /// Text to find, exactly as in the file (use \n for line breaks, also in CRLF files).
    pub old_text: String,
    /// Text to put in its place.
    pub new_text: String,
    /// Replace every occurrence instead of requiring exactly one (default false).
    pub replace_all: Option<bool>,
}

/// Arguments of `edit_file`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditFileArgs {
    /// File to edit, relative to the repository root.
    pub path: String,
    /// Replacements, applied in order; all apply or none does.
    pub edits: Vec<Edit>,
    /// sha256 of the file as you last read it; the edit is refused if it changed since.
    pub expected_sha256: Option<String>,
    /// Return the diff without writing (default false).
    pub dry_run: Option<bool>,
    /// How loosely an old_text that is not found exactly may match whole lines of the file:
    /// "exact" (default), "trailing_whitespace", "whitespace" (indentation and spacing,
    /// tabs against spaces included) or "punctuation" (also curly quotes, dashes and
    /// Unicode spaces). A relaxed match must be unique; new_text then takes the file's
    /// indentation (tabs stay tabs, its indent width), and the edit is listed in
    /// `relaxed_hunks` (hunk = the edit's number).
    #[serde(rename = "match")]
    pub match_level: Option<MatchLevel>,
}

/// Arguments of `apply_patch`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApplyPatchArgs {
    /// A unified diff (one or many files, git headers allowed) or a "*** Begin Patch" envelope.
    pub patch: String,
    /// Current sha256 of files the patch changes, as you last read them (path to sha256):
    /// checked for every file named here; needed for a delete, for an add or rename onto
    /// an existing file, and for every changed file when the policy requires hashes.
    #[serde(default)]
    pub expected_sha256s: std::collections::BTreeMap<String, String>,
    /// Check and return the result without writing (default false).
    pub dry_run: Option<bool>,
    /// How loosely a hunk's old lines may match the file when they do not match exactly:
    /// "exact" (default), "trailing_whitespace", "whitespace" (runs of spaces and tabs,
    /// indentation included) or "punctuation" (also curly quotes, dashes, ellipsis and
    /// non-breaking or other Unicode spaces read as their ASCII forms). Looser levels are
    /// tried only after the stricter ones fail; every relaxed hunk is reported in
    /// `relaxed_hunks`, and the file's own text is kept outside the lines a hunk changes.
    #[serde(rename = "match")]
    pub match_level: Option<MatchLevel>,
}

/// How loosely `apply_patch` may match a hunk's old lines, from strictest to loosest.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum MatchLevel {
    /// Byte for byte.
    #[default]
    Exact,
    /// Whitespace at the end of lines ignored.
    TrailingWhitespace,
    /// Every run of spaces and tabs counts as one space; indentation ignored.
    Whitespace,
    /// As whitespace, with Unicode quotes, dashes, ellipsis and spaces read as ASCII.
    Punctuation,
}

impl MatchLevel {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            MatchLevel::Exact => "exact",
            MatchLevel::TrailingWhitespace => "trailing_whitespace",
            MatchLevel::Whitespace => "whitespace",
            MatchLevel::Punctuation => "punctuation",
        }
    }
}

/// A hunk of `apply_patch` that matched only at a relaxed level.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct RelaxedHunk {
    /// The file, as the patch names it.
    pub path: String,
    /// The hunk's number in that file's part of the patch, from 1.
    pub hunk: u32,
    /// The file line where the hunk's old lines were found, from 1.
    pub line: u32,
    /// The level that was needed.
    pub level: MatchLevel,
}

/// Arguments of `append_file`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppendFileArgs {
    /// File to append to (created when missing, in the line endings .gitattributes and
    /// .editorconfig declare), relative to the repository root.
    pub path: String,
    /// Text to add at the end.
    pub content: String,
    /// sha256 of the file as you last read it.
    pub expected_sha256: Option<String>,
    /// Return the diff without writing (default false).
    pub dry_run: Option<bool>,
}

/// Arguments of `delete_file`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteFileArgs {
    /// File to delete (never a directory), relative to the repository root.
    pub path: String,
    /// sha256 of the file as you last read it.
    pub expected_sha256: Option<String>,
    /// Return the diff without deleting (default false).
    pub dry_run: Option<bool>,
}

/// Arguments of `move_file`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveFileArgs {
    /// File to move, relative to the repository root.
    pub from: String,
    /// New path; missing parent directories are created.
    pub to: String,
    /// sha256 of the source as you last read it.
    pub expected_sha256: Option<String>,
    /// To overwrite an existing destination, its current sha256; without it an existing
    /// destination is ALREADY_EXISTS.
    pub destination_sha256: Option<String>,
    /// Return the diff without moving (default false).
    pub dry_run: Option<bool>,
}

/// Arguments of `diff_workspace`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiffWorkspaceArgs {
    /// Only these paths (or directories); everything changed when empty.
    #[serde(default)]
    pub paths: Vec<String>,
    /// Only the per-file statistics, no diff text (default false).
    pub stat_only: Option<bool>,
    /// Most bytes of diff to return.
    pub max_bytes: Option<u32>,
}

/// One changed file in `diff_workspace`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct FileStat {
    pub path: String,
    /// `created`, `modified` or `deleted`.
    pub status: String,
    pub insertions: u32,
    pub deletions: u32,
}

/// Result of `diff_workspace`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct DiffWorkspaceResult {
    pub files: Vec<FileStat>,
    pub insertions: u32,
    pub deletions: u32,
    pub diff: String,
    /// sha256 of the whole diff (also when the returned text is cut).
    pub diff_sha256: String,
    pub truncated: bool,
    pub summary: String,
}

/// Arguments of `revert`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RevertArgs {
    /// Paths to restore to how they were when the session began.
    pub paths: Vec<String>,
    /// Current sha256 of each path, as you last read it (path to sha256).
    #[serde(default)]
    pub expected_sha256s: std::collections::BTreeMap<String, String>,
    /// Return the diff without writing (default false).
    pub dry_run: Option<bool>,
}
