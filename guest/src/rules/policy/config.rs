//! The policy as the host writes it: which paths may be read and changed, overrides of
//! the classification, the limits of every call and the rules of approval.

use serde::{Deserialize, Serialize};

use crate::rules::approval::ApprovalRules;
use crate::rules::classify::Kind;

/// Allowed and blocked globs for one kind of access. An empty `allow` allows everything
/// that `block` does not block; `block` always wins.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Rules {
    pub allow: Vec<String>,
    pub block: Vec<String>,
}

/// Reclassifies paths matching `pattern` as `kind`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Override {
    pub pattern: String,
    pub kind: Kind,
}

/// Sizes and counts. Arguments asking for more than a limit are clamped to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// Most bytes of content one read returns.
    pub max_read_bytes: u32,
    /// Most lines one read returns.
    pub max_read_lines: u32,
    /// Largest file that may be read without a range (`start_line` or `max_lines`).
    pub max_whole_read_bytes: u64,
    /// Most files in one `read_many`.
    pub max_read_many: u32,
    /// Largest image or PDF `read_media` returns (its base64 is a third larger); a larger
    /// one is refused whole.
    pub max_media_bytes: u64,
    /// Most entries one `list_dir` returns.
    pub max_list_entries: u32,
    /// Most paths one `find_files` returns.
    pub max_find_results: u32,
    /// Most matching lines one search returns.
    pub max_search_matches: u32,
    /// Most files one search lists.
    pub max_search_files: u32,
    /// Files larger than this are skipped by searches.
    pub max_search_file_bytes: u64,
    /// Size limit of a compiled regular expression, in bytes.
    pub max_regex_bytes: u32,
    /// Deepest nesting of a regular expression.
    pub max_regex_nesting: u32,
    /// Most entries a walk visits before it stops and reports truncation.
    pub max_walk_entries: u64,
    /// Largest file a mutation may write.
    pub max_write_bytes: u64,
    /// Most bytes of diff a mutation's result carries (the diff is cut beyond, and says so).
    pub max_diff_bytes: u32,
    /// Largest file `file_info` hashes (larger ones report no sha256; `read_file` by range
    /// still gives it).
    pub max_hash_bytes: u64,
    /// Most bytes the search index may take (in memory, and on disk in the state
    /// directory); 0, the default, turns the index off. Files beyond it are searched by
    /// reading them.
    pub max_index_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_read_bytes: 256 * 1024,
            max_read_lines: 2000,
            max_whole_read_bytes: 8 * 1024 * 1024,
            max_read_many: 20,
            max_media_bytes: 5 * 1024 * 1024,
            max_list_entries: 2000,
            max_find_results: 2000,
            max_search_matches: 500,
            max_search_files: 2000,
            max_search_file_bytes: 16 * 1024 * 1024,
            max_regex_bytes: 4 * 1024 * 1024,
            max_regex_nesting: 64,
            max_walk_entries: 2_000_000,
            max_write_bytes: 8 * 1024 * 1024,
            max_diff_bytes: 64 * 1024,
            max_hash_bytes: 256 * 1024 * 1024,
            max_index_bytes: 0,
        }
    }
}

/// Size budgets of one `apply_patch` call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PatchBudget {
    /// Most files one patch may touch.
    pub max_files: u32,
    /// Most lines one patch may insert.
    pub max_inserted_lines: u32,
    /// Most lines one patch may delete.
    pub max_deleted_lines: u32,
    /// Largest patch text accepted, in bytes.
    pub max_bytes: u64,
}

impl Default for PatchBudget {
    fn default() -> Self {
        PatchBudget {
            max_files: 100,
            max_inserted_lines: 20_000,
            max_deleted_lines: 20_000,
            max_bytes: 4 * 1024 * 1024,
        }
    }
}

/// The policy as the host writes it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PolicyConfig {
    /// Refuse every mutation.
    pub read_only: bool,
    /// Which paths may be read, listed and searched.
    pub read: Rules,
    /// Which paths may be changed.
    pub write: Rules,
    /// Classification overrides, first match wins.
    pub overrides: Vec<Override>,
    /// Let mutations change lock files.
    pub allow_lockfile_writes: bool,
    /// Refuse a change to an existing file unless the call gives its `expected_sha256`.
    pub require_expected_sha256: bool,
    /// Let a whole-content change (a write over an existing file, a delete) go through
    /// without the `expected_sha256` of the file it replaces. Off by default: the agent
    /// must have read what it overwrites.
    pub allow_overwrite_without_sha256: bool,
    /// Offer `move_file`.
    pub allow_move: bool,
    /// Let mutations replace or delete files with more than one hard link.
    pub allow_hardlinks: bool,
    pub limits: Limits,
    pub patch: PatchBudget,
    /// Which changes need the embedder's approval before they are written.
    pub approval: ApprovalRules,
    /// Paths the agent may write although the read rules hide them (whole-file writes and
    /// deletes only; nothing derived from the old content is returned).
    pub blind_writes: Vec<String>,
    /// Files the host owns inside the repository (its policy file), as logical paths:
    /// readable, never changed by any tool.
    pub reserved: Vec<String>,
    /// Paths whose content is not sniffed for private keys and tokens (test fixtures that
    /// hold fake ones, say).
    pub sniff_exempt: Vec<String>,
    /// Whether the repository's file system folds case in names (`PRIVATE` opens
    /// `private`), as the host found by probing the root; absent when unknown. Rules that
    /// refuse or guard always match every spelling such a file system could open; rules
    /// that grant (`allow` lists, `blind_writes`, `sniff_exempt`, overrides to a kind that
    /// guards nothing) do so only when this is true.
    pub case_insensitive: Option<bool>,
}

impl PolicyConfig {
    /// How the repository's file system compares names, as far as the host said.
    pub fn case_mode(&self) -> crate::rules::fold::CaseMode {
        match self.case_insensitive {
            None => crate::rules::fold::CaseMode::Unknown,
            Some(true) => crate::rules::fold::CaseMode::Insensitive,
            Some(false) => crate::rules::fold::CaseMode::Sensitive,
        }
    }
}
