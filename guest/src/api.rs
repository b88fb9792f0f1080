//! Arguments and results of every tool, as plain Rust types. Their serde form is the JSON
//! API (snake_case names); their doc comments become the JSON Schemas handed to models. The
//! WIT records mirror them field for field.

#![deny(missing_docs)]

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
    /// Stop after this many entries (default and cap from the policy).
    pub max_entries: Option<u32>,
    /// Include names that start with a dot (default false).
    pub include_hidden: Option<bool>,
    /// Honour `.gitignore` and `.ignore` files and skip generated directories (default true).
    pub respect_ignore: Option<bool>,
    /// Continue after the previous page: that page's `next_cursor`. The other arguments must be the
    /// same (the page size may change); a cursor that was altered, made for another call or
    /// repository, or whose page the tree no longer matches is `INVALID_INPUT` (reason `cursor` or
    /// `tree_changed`).
    pub cursor: Option<String>,
}

/// One entry of a listing.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct DirEntry {
    /// The entry's logical path.
    pub path: String,
    /// What the entry is on disk: `file`, `dir`, `symlink` or `other`.
    #[serde(rename = "type")]
    pub ty: EntryType,
    /// Its classification (`source`, `config`, `doc`, `secret`, `generated`, ...), which decides
    /// what the policy allows.
    pub kind: Kind,
    /// Size in bytes (0 for directories).
    pub size: u64,
    /// Last modification time, RFC 3339 in UTC, when known.
    pub modified: Option<String>,
    /// For a symlink that stays inside the root: the logical path it resolves to.
    pub target: Option<String>,
}

/// How many entries a walk passed over, and why (`hidden`, `ignored`, `generated`, `git_internal`,
/// `secret`, `binary`, `too_large`, `symlink`, `special`, `policy`, `unreadable`, `encoding`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct SkipCount {
    /// Why the entries were passed over (one of the reasons above).
    pub reason: String,
    /// How many entries were passed over for it.
    pub count: u32,
}

/// The cap that cut a result short, and its value.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct Stop {
    /// The argument or policy limit that was reached: `max_entries` (`list_dir`), `max_results`
    /// (`find_files`), `max_matches` (`search_text`'s matching lines), `max_changes`
    /// (`changes_since`), `max_search_files` (the policy's cap on files a search lists) or
    /// `max_walk_entries` (the policy's cap on entries one walk visits).
    pub cap: String,
    /// Its value in this call.
    pub limit: u64,
}

impl Stop {
    /// The cap named `cap` (as the WIT `stop` record lists them), reached at `limit`.
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
    /// Entries sorted by path.
    pub entries: Vec<DirEntry>,
    /// True when a cap cut the listing short (`stopped_by` says which).
    pub truncated: bool,
    /// The cap that cut the listing short.
    pub stopped_by: Option<Stop>,
    /// What was passed over, by reason.
    pub skipped: Vec<SkipCount>,
    /// Set when a page cap cut the result short: pass it as `cursor` to get the next page, which
    /// continues exactly after this one.
    pub next_cursor: Option<String>,
    /// One line for the model: what was counted, and which cap stopped it.
    pub summary: String,
}

/// Arguments of `find_files`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindFilesArgs {
    /// Globs; a glob without `/` matches the file name at any depth (`*.rs`), one with `/` matches
    /// the whole logical path (`src/**/*.rs`). A file matches when any glob does.
    pub patterns: Vec<String>,
    /// Directory to search under; the root when absent.
    pub path: Option<String>,
    /// Stop after this many paths (default and cap from the policy).
    pub max_results: Option<u32>,
    /// Include hidden files (default false).
    pub include_hidden: Option<bool>,
    /// Honour ignore rules and skip generated directories (default true).
    pub respect_ignore: Option<bool>,
    /// Continue after the previous page: that page's `next_cursor`. The other arguments must be the
    /// same (the page size may change); a cursor that was altered, made for another call or
    /// repository, or whose page the tree no longer matches is `INVALID_INPUT` (reason `cursor` or
    /// `tree_changed`).
    pub cursor: Option<String>,
}

/// Result of `find_files`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct FindFilesResult {
    /// Matching file paths, sorted.
    pub paths: Vec<String>,
    /// True when a cap cut the result short (`stopped_by` says which).
    pub truncated: bool,
    /// The cap that cut the result short.
    pub stopped_by: Option<Stop>,
    /// What was passed over, by reason.
    pub skipped: Vec<SkipCount>,
    /// Set when a page cap cut the result short: pass it as `cursor` to get the next page, which
    /// continues exactly after this one.
    pub next_cursor: Option<String>,
    /// One line for the model: what was counted, and which cap stopped it.
    pub summary: String,
}

/// Arguments of `changes_since`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChangesSinceArgs {
    /// The token an earlier call returned; absent, the call only returns a token for the tree as it
    /// is now.
    pub token: Option<String>,
    /// Directory to watch under; the root when absent. Bound into the token.
    pub path: Option<String>,
    /// Stop after this many changes (default and cap: the policy's `max_find_results`).
    pub max_changes: Option<u32>,
    /// Include hidden files (default false). Bound into the token.
    pub include_hidden: Option<bool>,
    /// Honour ignore rules and skip generated directories (default true). Bound into the token.
    pub respect_ignore: Option<bool>,
    /// Continue after the previous page: that page's `next_cursor`, with the same token.
    pub cursor: Option<String>,
}

/// How a file changed. A rename is a deletion of the old path plus a creation of the new one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// The file is new since the token's snapshot.
    Created,
    /// The file's content changed since the token's snapshot.
    Modified,
    /// The file is gone since the token's snapshot.
    Deleted,
}

/// One changed file.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct Change {
    /// The file's logical path.
    pub path: String,
    /// Whether it was created, modified or deleted.
    pub change: ChangeKind,
    /// Its size now; absent for a deleted file, a symlink and a secret.
    pub size: Option<u64>,
    /// Its sha256 now, as `read_file` reports it (usable as `expected_sha256`); only for a regular
    /// file the policy lets be read and whose content holds no secret.
    pub sha256: Option<String>,
}

/// Result of `changes_since`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct ChangesSinceResult {
    /// The changes in path order (this page of them).
    pub changes: Vec<Change>,
    /// The token for the tree as it is now: pass it to the next call.
    pub token: String,
    /// How many files were created (over all pages).
    pub created: u32,
    /// How many files were modified (over all pages).
    pub modified: u32,
    /// How many files were deleted (over all pages).
    pub deleted: u32,
    /// Files whose content this call read and hashed: new files, files whose size, modification
    /// time, status change time or inode moved, and racily clean ones (a file found to hold a
    /// secret is not counted: the count would tell it moved).
    pub rehashed: u32,
    /// True when `max_changes` cut the list short.
    pub truncated: bool,
    /// The cap that cut the list short (`max_changes`).
    pub stopped_by: Option<Stop>,
    /// Set when the list was cut short: pass it as `cursor`, with the same token.
    pub next_cursor: Option<String>,
    /// One line for the model: the counts, and whether more pages follow.
    pub summary: String,
}

/// Arguments of `read_file`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFileArgs {
    /// File to read, relative to the repository root.
    pub path: String,
    /// First line to return, from 1 (default 1).
    pub start_line: Option<u32>,
    /// Most lines to return (default and cap from the policy).
    pub max_lines: Option<u32>,
    /// Most bytes of content to return (default and cap from the policy).
    pub max_bytes: Option<u32>,
    /// Prefix each line with its number and a tab (default false).
    pub line_numbers: Option<bool>,
}

/// How lines end in a text file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LineEnding {
    /// Every line break is LF.
    Lf,
    /// Every line break is CRLF.
    Crlf,
    /// Both LF and CRLF line breaks occur.
    Mixed,
    /// The file has no line break at all.
    None,
}

/// Result of `read_file`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ReadFileResult {
    /// The file's logical path.
    pub path: String,
    /// The requested lines as text, decoded from the file's `encoding` (bytes not valid
    /// in it replaced when `valid_utf8` is false), BOM removed, line endings as in the
    /// file.
    pub content: String,
    /// First line returned (from 1).
    pub start_line: u32,
    /// Last line returned; `start_line - 1` when nothing was returned.
    pub end_line: u32,
    /// Lines in the whole file.
    pub total_lines: u32,
    /// Size of the whole file in bytes.
    pub size: u64,
    /// sha256 of the whole file's bytes, lowercase hex: pass it as `expected_sha256`.
    pub sha256: String,
    /// True when lines after `end_line` exist but were not returned.
    pub truncated: bool,
    /// How the file's lines end: `lf`, `crlf`, `mixed`, or `none` (no line break at all).
    pub line_ending: LineEnding,
    /// True when the file starts with a byte-order mark (of UTF-8, UTF-16 or UTF-32).
    pub bom: bool,
    /// The file's text encoding, lowercase: `utf-8`, `utf-16le`, `utf-16be`, `utf-32le`,
    /// `utf-32be`, `iso-8859-1`, `windows-1252`, or another the repository declares.
    /// Changes write the file back in it.
    pub encoding: String,
    /// True when the content decoded cleanly: false when bytes not valid in the
    /// encoding were replaced by U+FFFD (such a file cannot be changed as text).
    pub valid_utf8: bool,
    /// The file's classification (`source`, `config`, `doc`, `text`, ...).
    pub kind: Kind,
    /// One line for the model: the lines returned, out of how many, and where to continue when more
    /// follow.
    pub summary: String,
}

/// Arguments of `read_many`: the same bounds apply to each file.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadManyArgs {
    /// Files to read, relative to the repository root (at most the policy's limit).
    pub paths: Vec<String>,
    /// Most lines to return per file (default and cap from the policy).
    pub max_lines: Option<u32>,
    /// Most bytes of content to return per file (default and cap from the policy).
    pub max_bytes: Option<u32>,
    /// Prefix each line with its number and a tab (default false).
    pub line_numbers: Option<bool>,
}

/// One file of a `read_many` call: its result or its own error.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct ReadManyItem {
    /// The file, as the request named it.
    pub path: String,
    /// True when the file was read (`result` holds it); false when `error` says why not.
    pub ok: bool,
    /// The file's `read_file` result, when `ok`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<ReadFileResult>,
    /// Why the file could not be read, when not `ok`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ToolError>,
}

/// Result of `read_many`, in the order of the request.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct ReadManyResult {
    /// One entry per requested path, in request order.
    pub files: Vec<ReadManyItem>,
    /// One line for the model: how many files were read and how many failed.
    pub summary: String,
}

/// What `search_text` returns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SearchOutput {
    /// Every matching line with context (default).
    #[default]
    Matches,
    /// Only the paths of files with a match, with their match counts.
    Files,
    /// Only the counts.
    Count,
}

/// Which part of the tree a search instance covers, for parallel searches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Shard {
    /// This instance's shard, from 0.
    pub index: u32,
    /// How many shards the tree is split into.
    pub count: u32,
}

/// Arguments of `search_text`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchTextArgs {
    /// The text to find, or a regular expression when `regex` is true.
    pub query: String,
    /// Treat `query` as a regular expression (Rust `regex` syntax; default false).
    pub regex: Option<bool>,
    /// Ignore case (default false).
    pub case_insensitive: Option<bool>,
    /// Directory or file to search; the root when absent.
    pub path: Option<String>,
    /// Only files matching one of these globs (`*.rs`, `src/**`).
    #[serde(default)]
    pub include: Vec<String>,
    /// Never files matching one of these globs.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Lines of context before and after each match (default 0, cap 10).
    pub context_lines: Option<u32>,
    /// Stop after this many matching lines (default and cap from the policy).
    pub max_matches: Option<u32>,
    /// What to return: `matches` (default), `files` or `count`.
    pub output: Option<SearchOutput>,
    /// Include hidden files (default false).
    pub include_hidden: Option<bool>,
    /// Honour ignore rules and skip generated directories (default true).
    pub respect_ignore: Option<bool>,
    /// Search only this shard of the tree (for hosts that split a search over several instances).
    pub shard: Option<Shard>,
    /// Continue after the previous page: that page's `next_cursor`. The other arguments must be the
    /// same (the page size may change); a cursor that was altered, made for another call or
    /// repository, or whose page the tree no longer matches is `INVALID_INPUT` (reason `cursor` or
    /// `tree_changed`).
    pub cursor: Option<String>,
}

/// One matching line.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct SearchMatch {
    /// The file's logical path.
    pub path: String,
    /// Line number, from 1.
    pub line: u32,
    /// Byte column of the first match in the whole line, from 1 (in its UTF-8 text, for a
    /// file decoded from another encoding).
    pub column: u32,
    /// The line, without its line ending. A line over 500 bytes is shown as a window around the
    /// match (the match kept, its first 1000 bytes when longer, with context on both sides), marked
    /// `[…N bytes cut]` at its start and `[N bytes cut…]` at its end where the line goes on; a
    /// window never splits a UTF-8 character.
    pub text: String,
    /// Bytes of the line cut before `text` (0 when it starts at the line's start).
    pub cut_before: u32,
    /// Bytes of the line cut after `text` (0 when it runs to the line's end).
    pub cut_after: u32,
    /// Byte offset of the match in `text` (markers included).
    pub match_start: u32,
    /// Bytes of the match shown in `text`.
    pub match_len: u32,
    /// Lines before the match, oldest first (each cut at 500 bytes, marked `[N bytes cut…]`).
    pub before: Vec<String>,
    /// Lines after the match.
    pub after: Vec<String>,
}

/// A file with matches and how many lines matched.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct FileCount {
    /// The file's logical path.
    pub path: String,
    /// How many of its lines matched.
    pub count: u32,
}

/// Result of `search_text`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct SearchTextResult {
    /// Matching lines (output `matches`), in path then line order.
    pub matches: Vec<SearchMatch>,
    /// Files with matches (output `files` and `matches`), sorted by path.
    pub files: Vec<FileCount>,
    /// Matching lines found in the files searched (every output counts the same).
    pub total_matches: u64,
    /// Files with at least one counted match (`files` may list fewer: `stopped_by`).
    pub files_matched: u64,
    /// Files whose content was searched.
    pub files_searched: u64,
    /// True when a cap stopped the search or cut the list of files short.
    pub truncated: bool,
    /// The cap that did: `max_matches` stops the search, `max_search_files` cuts the list of files
    /// (the counts still cover every file searched), `max_walk_entries` stops the walk.
    pub stopped_by: Option<Stop>,
    /// What was passed over, by reason.
    pub skipped: Vec<SkipCount>,
    /// Set when a page cap cut the result short: pass it as `cursor` to get the next page, which
    /// continues exactly after this one.
    pub next_cursor: Option<String>,
    /// One line for the model: what was counted, and which cap stopped it.
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
    /// The logical path described.
    pub path: String,
    /// What the path is on disk: `file`, `dir`, `symlink` or `other`.
    #[serde(rename = "type")]
    pub ty: EntryType,
    /// Its classification (`source`, `config`, `secret`, `git_internal`, ...), which decides what
    /// the policy allows.
    pub kind: Kind,
    /// Size in bytes (0 for directories).
    pub size: u64,
    /// Last modification time, RFC 3339 in UTC, when known.
    pub modified: Option<String>,
    /// sha256 of a readable regular file; never given for secrets.
    pub sha256: Option<String>,
    /// For a symlink: the logical path it resolves to.
    pub target: Option<String>,
    /// Whether the policy lets the agent read the file (`read_denied_reason` says why not).
    pub readable: bool,
    /// The policy rule that keeps the file from being read, when `readable` is false.
    pub read_denied_reason: Option<String>,
    /// Whether the policy lets the agent change the file (`write_denied_reason` says why not).
    pub writable: bool,
    /// The policy rule that keeps the file from being changed, when `writable` is false.
    pub write_denied_reason: Option<String>,
    /// One line for the model: what the path is and what the policy allows.
    pub summary: String,
}

/// One file a mutation changed (or, in a dry run, would change).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct FileChange {
    /// The file's logical path.
    pub path: String,
    /// `create`, `modify`, `delete`, `move_from` or `move_to`.
    pub action: String,
    /// Its sha256 before the change; absent for a file the change creates.
    pub sha256_before: Option<String>,
    /// Its sha256 after the change (usable as `expected_sha256` for the next change); absent for a
    /// file the change deletes or moves away.
    pub sha256_after: Option<String>,
    /// Lines the change inserts into this file.
    pub insertions: u32,
    /// Lines the change deletes from this file.
    pub deletions: u32,
}

/// Result of every mutation.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct MutationResult {
    /// Each file changed (in a dry run: each file that would change).
    pub changes: Vec<FileChange>,
    /// Lines inserted, over all files.
    pub insertions: u32,
    /// Lines deleted, over all files.
    pub deletions: u32,
    /// Unified diff in git format, cut at the policy's limit.
    pub diff: String,
    /// True when `diff` was cut at the policy's limit.
    pub diff_truncated: bool,
    /// True when this was a dry run and nothing was written.
    pub dry_run: bool,
    /// Things worth knowing that did not stop the call (hunk offsets, CRLF kept, relaxed matches,
    /// line endings chosen for a new file and why).
    pub warnings: Vec<String>,
    /// `apply_patch` and `edit_file`: the hunks (or edits) that matched only with relaxed matching
    /// (empty for every other tool, and for exact matches).
    pub relaxed_hunks: Vec<RelaxedHunk>,
    /// One line for the model: what changed, or in a dry run what would.
    pub summary: String,
}

/// How `write_file` treats an existing file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WriteMode {
    /// Only create: an existing file is `ALREADY_EXISTS`.
    Create,
    /// Only replace: a missing file is `NOT_FOUND`.
    Replace,
    /// Either (the default).
    #[default]
    CreateOrReplace,
}

/// Arguments of `write_file`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteFileArgs {
    /// File to write, relative to the repository root; missing parent directories are created.
    pub path: String,
    /// The whole new content. An existing file keeps its encoding and BOM, and in a CRLF file
    /// LF line breaks are written as CRLF. A new file takes the line endings, final newline,
    /// encoding and BOM that the repository's `.gitattributes` (`eol=crlf`/`eol=lf`,
    /// `working-tree-encoding`; `-text`/`binary`: written as given) and `.editorconfig`
    /// (`end_of_line`, `insert_final_newline`, `charset`) declare for its path; each change
    /// made is said in `warnings`.
    pub content: String,
    /// How an existing file is treated: `create`, `replace` or `create_or_replace` (the default).
    pub mode: Option<WriteMode>,
    /// sha256 of the file as last read; a mismatch is `WRITE_CONFLICT`.
    pub expected_sha256: Option<String>,
    /// Return what would change, without writing (default false).
    pub dry_run: Option<bool>,
}

/// One exact replacement.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Edit {
    /// Text to find, exactly (LF line breaks, also in CRLF files).
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
    /// The replacements, applied in order; either every one applies or none does.
    pub edits: Vec<Edit>,
    /// sha256 of the file as last read; a mismatch is `WRITE_CONFLICT`.
    pub expected_sha256: Option<String>,
    /// Return what would change, without writing (default false).
    pub dry_run: Option<bool>,
    /// How loosely an `old_text` that is not found exactly may match whole lines of the file (JSON
    /// name `match`); `exact` when absent. A relaxed match must be unique (`EDIT_AMBIGUOUS`
    /// otherwise); `new_text` then takes the file's indentation for each depth (tabs stay tabs, the
    /// file's indent width), and the edit is listed in `relaxed_hunks` (its number as `hunk`) and
    /// in the call's audit event.
    #[serde(rename = "match")]
    pub match_level: Option<MatchLevel>,
}

/// Arguments of `apply_patch`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApplyPatchArgs {
    /// A unified diff (git headers allowed) or a `*** Begin Patch` envelope.
    pub patch: String,
    /// Current sha256 of files the patch changes, as last read: each one named is checked
    /// (`WRITE_CONFLICT` on a mismatch); a delete and an add or rename onto an existing file need
    /// one, and every changed file does when the policy requires hashes (`POLICY_DENIED`, reason
    /// `sha_required`, without it).
    #[serde(default)]
    pub expected_sha256s: std::collections::BTreeMap<String, String>,
    /// Check the patch and return what would change, without writing (default false).
    pub dry_run: Option<bool>,
    /// How loosely a hunk's old lines may match when they do not match exactly (JSON name `match`);
    /// `exact` when absent. Looser levels are tried only after the stricter ones fail, every
    /// relaxed hunk is listed in `relaxed_hunks` (and in the call's audit event), and the file's
    /// own text is kept in the hunk's context lines. A relaxed match of a hunk without line numbers
    /// must be unique.
    #[serde(rename = "match")]
    pub match_level: Option<MatchLevel>,
}

/// How loosely `apply_patch` and `edit_file` may match text that is not found exactly, from
/// strictest to loosest.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum MatchLevel {
    /// Byte for byte (the default).
    #[default]
    Exact,
    /// Whitespace at the end of lines (and a missing final line break) ignored.
    TrailingWhitespace,
    /// Every run of spaces and tabs read as one space; indentation ignored.
    Whitespace,
    /// As `whitespace`, and Unicode quotes, dashes, ellipsis, non-breaking and other Unicode spaces
    /// read as their ASCII forms (zero-width characters and the BOM ignored).
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
    /// The hunk's number within that file's part of the patch, from 1.
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
    /// File to append to, relative to the repository root; created when missing.
    pub path: String,
    /// Text to add at the end of the file.
    pub content: String,
    /// sha256 of the file as last read; a mismatch is `WRITE_CONFLICT`.
    pub expected_sha256: Option<String>,
    /// Return what would change, without writing (default false).
    pub dry_run: Option<bool>,
}

/// Arguments of `delete_file`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteFileArgs {
    /// File to delete (never a directory), relative to the repository root.
    pub path: String,
    /// sha256 of the file as last read; a mismatch is `WRITE_CONFLICT`.
    pub expected_sha256: Option<String>,
    /// Return what would change, without deleting (default false).
    pub dry_run: Option<bool>,
}

/// Arguments of `move_file`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveFileArgs {
    /// File to move, relative to the repository root.
    pub from: String,
    /// Its new path; missing parent directories are created.
    pub to: String,
    /// sha256 of the source as last read.
    pub expected_sha256: Option<String>,
    /// To overwrite an existing destination: its current sha256 (without it, an existing
    /// destination is `ALREADY_EXISTS`).
    pub destination_sha256: Option<String>,
    /// Return what would change, without moving (default false).
    pub dry_run: Option<bool>,
}

/// Arguments of `diff_workspace`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiffWorkspaceArgs {
    /// Only these paths or directories; everything when empty.
    #[serde(default)]
    pub paths: Vec<String>,
    /// Only the per-file statistics, no diff text (default false).
    pub stat_only: Option<bool>,
    /// Most bytes of diff text to return.
    pub max_bytes: Option<u32>,
}

/// One changed file of `diff_workspace`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct FileStat {
    /// The file's logical path.
    pub path: String,
    /// `created`, `modified`, `deleted` or `renamed`.
    pub status: String,
    /// Lines inserted into this file since the session's baseline.
    pub insertions: u32,
    /// Lines deleted from this file since the session's baseline.
    pub deletions: u32,
}

/// Result of `diff_workspace`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct DiffWorkspaceResult {
    /// Each changed file, with its status and line counts, sorted by path.
    pub files: Vec<FileStat>,
    /// Lines inserted, over all files.
    pub insertions: u32,
    /// Lines deleted, over all files.
    pub deletions: u32,
    /// Unified diff (git format) of the session's changes, cut at `max_bytes`.
    pub diff: String,
    /// sha256 of the whole diff, also when the returned text is cut.
    pub diff_sha256: String,
    /// True when `diff` was cut short.
    pub truncated: bool,
    /// One line for the model: how many files changed, and the line counts.
    pub summary: String,
}

/// Arguments of `revert`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RevertArgs {
    /// Files to restore to their content before the session first touched them.
    pub paths: Vec<String>,
    /// Current sha256 of each path as last read.
    #[serde(default)]
    pub expected_sha256s: std::collections::BTreeMap<String, String>,
    /// Return what would change, without writing (default false).
    pub dry_run: Option<bool>,
}

mod media;
pub use media::{ReadMediaArgs, ReadMediaResult};

#[cfg(test)]
mod contract_tests;
