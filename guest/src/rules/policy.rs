//! The session policy: given by the host, never changeable by the agent.
//!
//! The host passes it as JSON in the environment variable `FILE_TOOLS_POLICY`; every field
//! is optional and an absent policy means the safe defaults below. Unknown fields are
//! refused, so that a misspelt rule cannot silently fail open.

use serde::{Deserialize, Serialize};

use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::rules::approval::{Approval, ApprovalRules};
use crate::rules::classify::{self, DirMarks, Kind};
use crate::rules::glob::{Folding, Globs};
use crate::rules::path::LogicalPath;

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

/// The name right below `dir` on the way to `path`, when `path` lies below `dir`.
fn child_of<'p>(dir: &LogicalPath, path: &'p LogicalPath) -> Option<&'p str> {
    if !path.starts_with(dir) || path == dir {
        return None;
    }
    let rest = if dir.is_root() {
        path.as_str()
    } else {
        &path.as_str()[dir.as_str().len() + 1..]
    };
    rest.split('/').next()
}

impl DirScope {
    /// Marks the directory as one git would take for a repository: everything below it is
    /// git internals.
    pub fn mark_git(&mut self) {
        self.marks = self.marks.as_git();
    }

    /// The scope as bytes, equal for equal scopes only (what a walk's memo compares).
    pub fn key(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(1 + self.overrides.len());
        out.push(
            self.marks.bits() | u8::from(self.read_blocked) << 4 | u8::from(self.read_allowed) << 5,
        );
        out.extend(self.overrides.iter().map(|&o| u8::from(o)));
        out
    }
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

/// What a directory settles for every entry below it: its classification marks and which
/// policy globs it or an ancestor matched. A walk keeps one per directory, so that each
/// entry is classified and checked by its own path only, not by every ancestor again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirScope {
    marks: DirMarks,
    /// Per override, in order: matched by the directory or an ancestor.
    overrides: Vec<bool>,
    read_blocked: bool,
    read_allowed: bool,
}

/// A compiled policy.
#[derive(Debug, Clone)]
pub struct Policy {
    pub config: PolicyConfig,
    /// The tree classification looks into for build files; name-only when absent.
    fs: Option<crate::rules::fsx::Fs>,
    /// Answers of `root` lookups, by logical path.
    seen: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, bool>>>,
    read_allow: Globs,
    read_block: Globs,
    write_allow: Globs,
    write_block: Globs,
    blind_writes: Globs,
    sniff_exempt: Globs,
    overrides: Vec<(Globs, Kind)>,
    approval: Approval,
}

/// Name of the environment variable the component reads its policy from.
pub const POLICY_ENV: &str = file_tools_contract::env::POLICY;

impl Policy {
    /// Compiles a policy.
    ///
    /// # Errors
    /// `INVALID_INPUT` for a malformed glob.
    pub fn new(config: PolicyConfig) -> ToolResult<Self> {
        // Guarding rules always compare folded names; granting ones only where the file
        // system is known to fold (see `fold`).
        let grants_fold = config.case_mode().folds_grants().then_some(Folding::Grant);
        let overrides = config
            .overrides
            .iter()
            .map(|o| {
                let fold = if o.kind.guards() {
                    Some(Folding::Guard)
                } else {
                    grants_fold
                };
                Ok((
                    Globs::new_lazy_with(std::slice::from_ref(&o.pattern), false, fold)?,
                    o.kind,
                ))
            })
            .collect::<ToolResult<Vec<_>>>()?;
        let grants = |g: &[String]| Globs::new_lazy_with(g, false, grants_fold);
        Ok(Policy {
            // Compiled on first use; a list that cannot be compiled refuses (an allow
            // list matching nothing, a block list matching everything).
            read_allow: grants(&config.read.allow)?,
            read_block: Globs::new_lazy_folded(&config.read.block, true, true)?,
            write_allow: grants(&config.write.allow)?,
            write_block: Globs::new_lazy_folded(&config.write.block, true, true)?,
            blind_writes: grants(&config.blind_writes)?,
            sniff_exempt: grants(&config.sniff_exempt)?,
            overrides,
            approval: Approval::new(config.approval.clone())?,
            config,
            fs: None,
            seen: Default::default(),
        })
    }

    /// Parses a policy from JSON; the empty string means the defaults.
    ///
    /// # Errors
    /// `INVALID_INPUT` naming the malformed or unknown field.
    pub fn from_json(json: &str) -> ToolResult<Self> {
        if json.trim().is_empty() {
            return Policy::new(PolicyConfig::default());
        }
        let config: PolicyConfig = serde_json::from_str(json).map_err(|e| {
            ToolError::invalid(format!(
                "the session policy is malformed: {e}; the host must fix it"
            ))
        })?;
        Policy::new(config)
    }

    /// The policy's settings as one text, equal for equal policies (what binds a cursor
    /// to the policy it was made under).
    pub fn fingerprint(&self) -> String {
        serde_json::to_string(&self.config).unwrap_or_default()
    }

    /// [`Policy::fingerprint`] without the settings that only govern changes: equal for
    /// policies under which a search sees and reads the same files, so that a read-only and
    /// a writable session of one repository share one search index. Every field is named
    /// here, so that a new setting must be placed on one side or the other.
    pub fn search_fingerprint(&self) -> String {
        let PolicyConfig {
            read_only: _,
            read,
            write: _,
            overrides,
            allow_lockfile_writes: _,
            require_expected_sha256: _,
            allow_overwrite_without_sha256: _,
            allow_move: _,
            // Reads, lists and searches too: a file with more than one name is withheld
            // unless it is on.
            allow_hardlinks,
            limits,
            patch: _,
            approval: _,
            blind_writes: _,
            reserved,
            sniff_exempt,
            case_insensitive,
        } = self.config.clone();
        let seen = PolicyConfig {
            read,
            overrides,
            allow_hardlinks,
            limits,
            reserved,
            sniff_exempt,
            case_insensitive,
            ..PolicyConfig::default()
        };
        serde_json::to_string(&seen).unwrap_or_default()
    }

    /// Lets classification look for build files in `fs` (see `classify_with`).
    pub fn with_fs(mut self, fs: &crate::rules::fsx::Fs) -> Self {
        self.fs = Some(fs.clone());
        self
    }

    /// Forgets what looks into the tree found (build files, `HEAD` files). Each call starts
    /// afresh: another process may have changed the tree since the last call, and a
    /// directory given the shape of a git repository meanwhile is git internals at once.
    pub fn forget_lookups(&self) {
        if let Ok(mut m) = self.seen.lock() {
            m.clear();
        }
    }

    fn has_file(&self, p: &LogicalPath) -> bool {
        let Some(fs) = &self.fs else { return true };
        let key = p.to_string();
        if let Some(&v) = self
            .seen
            .lock()
            .ok()
            .and_then(|m| m.get(&key).copied())
            .as_ref()
        {
            return v;
        }
        let v = fs.stat_nofollow(p).is_some_and(|m| m.is_file());
        if let Ok(mut m) = self.seen.lock() {
            if m.len() > 100_000 {
                m.clear();
            }
            m.insert(key, v);
        }
        v
    }

    pub fn approval(&self) -> &Approval {
        &self.approval
    }

    pub fn limits(&self) -> &Limits {
        &self.config.limits
    }

    /// The kind of a path: an override if one matches, else the built-in classification.
    pub fn kind_of(&self, path: &LogicalPath, is_dir: bool) -> Kind {
        if is_dir && self.git_shaped(path) {
            return Kind::GitInternal;
        }
        self.kind_in(&self.scope_of(&path.parent()), path, is_dir)
    }

    /// The scope of the directory `dir`, built from the root down. A directory on the way
    /// that git would take for a repository (see [`classify::GIT_SHAPE`]) marks everything
    /// below it as git internals.
    pub fn scope_of(&self, dir: &LogicalPath) -> DirScope {
        let mut scope = self.root_scope();
        let mut d = LogicalPath::root();
        // The deepest directory on the way opened so far: each look goes down from it, so
        // the walk down opens each directory once (looking each up from the root took as
        // many opens as its depth, at every level).
        let mut held = None;
        if classify::is_git_shape(self.shape_in(&d, false, &mut held)) {
            scope.mark_git();
        }
        for part in dir.parts() {
            d = d.join(part);
            scope = self.enter(&scope, &d);
            if !scope.marks.is_git() && classify::is_git_shape(self.shape_in(&d, false, &mut held))
            {
                scope.mark_git();
            }
        }
        scope
    }

    /// Which entries of [`classify::GIT_SHAPE`] the directory `dir` has, by the names git
    /// opens (a folding file system finds other spellings by them), not following links.
    /// Without `full`, a directory with no HEAD answers at once (as having none of them).
    fn shape_of(&self, dir: &LogicalPath, full: bool) -> [bool; 4] {
        self.shape_in(dir, full, &mut None)
    }

    /// [`Policy::shape_of`], opening `dir` from `held` (a directory above it, opened
    /// earlier, or `None` for the root) when it must be looked at, and leaving `dir` there.
    fn shape_in(
        &self,
        dir: &LogicalPath,
        full: bool,
        held: &mut Option<(LogicalPath, std::sync::Arc<crate::fs::port::Dir>)>,
    ) -> [bool; 4] {
        let Some(fs) = &self.fs else {
            return [false; 4];
        };
        let key = format!("\0{dir}");
        if let Some(&v) = self
            .seen
            .lock()
            .ok()
            .and_then(|m| m.get(&key).copied())
            .as_ref()
        {
            if !v && !full {
                return [false; 4];
            }
        }
        let opened = match held.take() {
            Some((at, d)) if dir.starts_with(&at) => {
                let below = dir.as_str()[at.as_str().len()..].split('/');
                fs.open_below(d, below.filter(|p| !p.is_empty()))
            }
            _ => fs.open_dir(dir),
        };
        let opened = opened.ok();
        if let Some(d) = &opened {
            *held = Some((dir.clone(), d.clone()));
        }
        // As git counts them: a link or an executable file can stand for `objects/` or
        // `refs/`, and a link for `HEAD` (see `classify::fills_git_slot`).
        let has = |name: &str, want_dir: bool| {
            opened
                .as_ref()
                .and_then(|d| d.stat_at(name).ok().flatten())
                .is_some_and(|m| classify::fills_git_slot(want_dir, m.ty))
        };
        // Most directories have no HEAD: one look settles them.
        let head = has("HEAD", false);
        let shape = if head || full {
            [
                head,
                has("objects", true),
                has("refs", true),
                has("commondir", false),
            ]
        } else {
            [false; 4]
        };
        if let Ok(mut m) = self.seen.lock() {
            m.insert(key, head);
        }
        shape
    }

    /// Whether git would take the directory `dir` for a repository of its own.
    pub fn git_shaped(&self, dir: &LogicalPath) -> bool {
        classify::is_git_shape(self.shape_of(dir, false))
    }

    /// Refuses a change whose written files (`(target, shown)`) would give a directory the
    /// shape git takes for a repository: git run inside it would then obey its `config`
    /// (`core.fsmonitor`, hooks, filters), so a model writing `sub/HEAD`, `sub/objects/…`,
    /// `sub/refs/…` and `sub/config` would plant a command for the next `git status`.
    ///
    /// # Errors
    /// `POLICY_DENIED` with reason `git_shaped`.
    pub fn check_git_shape(&self, written: &[(&LogicalPath, &str)]) -> ToolResult<()> {
        let slot = |name: &str| {
            let f = crate::rules::fold::fold(name);
            classify::GIT_SHAPE.iter().position(|(n, _)| *n == f)
        };
        for (target, shown) in written {
            let mut dir = LogicalPath::root();
            for part in target.parts() {
                if slot(part).is_some() {
                    let mut has = self.shape_of(&dir, true);
                    for (other, _) in written {
                        if let Some(i) = child_of(&dir, other).and_then(slot) {
                            has[i] = true;
                        }
                    }
                    if classify::is_git_shape(has) {
                        return Err(ToolError::denied(
                            shown,
                            "git_shaped",
                            format!("'{shown}' would give a directory the shape of a git repository (HEAD beside objects/ and refs/, or beside commondir); git run there would obey that repository's config and hooks, so file-tools does not build one"),
                        ));
                    }
                }
                dir = dir.join(part);
            }
        }
        Ok(())
    }

    /// The scope of the repository root.
    pub fn root_scope(&self) -> DirScope {
        DirScope {
            marks: DirMarks::default(),
            overrides: vec![false; self.overrides.len()],
            read_blocked: false,
            read_allowed: false,
        }
    }

    /// The scope of directory `dir`, whose parent's scope is `parent`.
    pub fn enter(&self, parent: &DirScope, dir: &LogicalPath) -> DirScope {
        let s = dir.as_str();
        DirScope {
            marks: parent.marks.enter(dir, &|p| self.has_file(p)),
            overrides: self
                .overrides
                .iter()
                .zip(&parent.overrides)
                .map(|((g, _), &above)| above || g.matches(s))
                .collect(),
            read_blocked: parent.read_blocked || self.read_block.matches(s),
            read_allowed: parent.read_allowed || self.read_allow.matches(s),
        }
    }

    /// The kind of `path`, an entry of the directory whose scope is `scope`.
    pub fn kind_in(&self, scope: &DirScope, path: &LogicalPath, is_dir: bool) -> Kind {
        for ((globs, kind), &above) in self.overrides.iter().zip(&scope.overrides) {
            if above || globs.matches(path.as_str()) {
                return *kind;
            }
        }
        scope.marks.classify(path, is_dir, &|p| self.has_file(p))
    }

    /// Why the agent may not read `path` of `kind`, if it may not. A path the read rules
    /// hide (`blocked`, `not_allowed`) is invisible: the error is exactly the one for a
    /// path that does not exist, so no answer tells whether it does.
    pub fn read_denial(&self, path: &LogicalPath, kind: Kind) -> Option<ToolError> {
        let reason = self.read_denial_in(&self.scope_of(&path.parent()), path, kind)?;
        let s = path.as_str();
        let why = match reason {
            "secret" => "is classified as a secret; its content is never read, searched or shown (name and kind only)",
            "git_internal" => "is inside .git; git internals are never read or written",
            _ => return Some(ToolError::io(s, &std::io::ErrorKind::NotFound.into())),
        };
        Some(ToolError::denied(s, reason, format!("'{s}' {why}")))
    }

    /// Whether the read rules hide `path` of `kind` (`blocked` or `not_allowed`).
    pub fn hides(&self, path: &LogicalPath, kind: Kind) -> bool {
        matches!(
            self.read_denial_in(&self.scope_of(&path.parent()), path, kind),
            Some("blocked" | "not_allowed")
        )
    }

    /// Whether a file with `nlink` names may be read or changed (one name, or the policy
    /// allows hard links).
    pub fn links_allowed(&self, nlink: u64) -> bool {
        nlink <= 1 || self.config.allow_hardlinks
    }

    /// Refuses a file with several hard links unless the policy allows them: another name
    /// of it may lie outside the repository (a hard link to `~/.aws/credentials`).
    ///
    /// # Errors
    /// `POLICY_DENIED` with reason `hardlinked`.
    pub fn check_links(&self, shown: &str, nlink: u64) -> ToolResult<()> {
        if !self.links_allowed(nlink) {
            return Err(ToolError::denied(
                shown,
                "hardlinked",
                format!("'{shown}' has more than one hard link, so it may be a file outside the repository; the session policy does not read or change such files"),
            ));
        }
        Ok(())
    }

    /// What secret the content of `path` shows, unless the policy exempts the path.
    pub fn sniff(&self, path: &LogicalPath, data: &[u8]) -> Option<&'static str> {
        if self.sniff_exempt.matches_path_or_parent(path.as_str()) {
            return None;
        }
        crate::rules::sniff::secret_in(data)
    }

    /// Whether `path` is sniffed at all (see [`PolicyConfig::sniff_exempt`]).
    pub fn sniffs(&self, path: &LogicalPath) -> bool {
        !self.sniff_exempt.matches_path_or_parent(path.as_str())
    }

    /// Refuses content that holds what looks like a secret (`what`, from `sniff`).
    ///
    /// # Errors
    /// `POLICY_DENIED` with reason `secret_content`, when `what` is set.
    pub fn content_denial(shown: &str, what: Option<&str>) -> ToolResult<()> {
        match what {
            None => Ok(()),
            Some(what) => Err(ToolError::denied(
                shown,
                "secret_content",
                format!("'{shown}' holds what looks like {what}; its content is withheld from every tool (the host's policy can exempt the path with sniff_exempt)"),
            )),
        }
    }

    /// Whether `path` is a file the host owns (see [`PolicyConfig::reserved`]).
    pub fn is_host_file(&self, path: &LogicalPath) -> bool {
        self.config.reserved.iter().any(|r| {
            LogicalPath::parse(r).is_ok_and(|r| crate::rules::fold::same(r.as_str(), path.as_str()))
        })
    }

    /// Whether the read rules hide the path `p` itself, whatever it is.
    pub fn hidden_path(&self, p: &LogicalPath) -> bool {
        !p.is_root() && self.hides(p, Kind::Text)
    }

    /// Whether the read rules hide any path at all (a `read.block` or `read.allow` list).
    /// A directory's time moves when an entry is added to it or removed, hidden or not: a
    /// policy that hides paths shows no directory's time (see [`Policy::dir_time`]).
    pub fn hides_any_path(&self) -> bool {
        !self.read_block.is_empty() || !self.read_allow.is_empty()
    }

    /// The modification time to show for what `meta` describes: a file's own; a
    /// directory's only when no read rule hides anything, since it moves with hidden
    /// entries too.
    pub fn dir_time(&self, meta: &crate::fs::port::Stat) -> Option<String> {
        if meta.is_dir() && self.hides_any_path() {
            return None;
        }
        crate::rules::fsx::modified(meta)
    }

    /// Whether the policy lets the agent write `path` without being able to read it.
    pub fn blind_write_allowed(&self, path: &LogicalPath) -> bool {
        self.blind_writes.matches_path_or_parent(path.as_str())
    }

    /// The rule that forbids reading `path` of `kind`, an entry of the directory whose
    /// scope is `scope`: `secret`, `git_internal`, `blocked` or `not_allowed`.
    pub fn read_denial_in(
        &self,
        scope: &DirScope,
        path: &LogicalPath,
        kind: Kind,
    ) -> Option<&'static str> {
        match kind {
            Kind::Secret => return Some("secret"),
            Kind::GitInternal => return Some("git_internal"),
            _ => {}
        }
        if scope.read_blocked || self.read_block.matches(path.as_str()) {
            return Some("blocked");
        }
        let allowed = self.read_allow.is_empty()
            || scope.read_allowed
            || self.read_allow.matches(path.as_str());
        if !allowed {
            return Some("not_allowed");
        }
        None
    }

    /// Why the agent may not change `path` of `kind`, if it may not.
    pub fn write_denial(&self, path: &LogicalPath, kind: Kind) -> Option<ToolError> {
        let s = path.to_string();
        if self.config.read_only {
            return Some(ToolError::denied(
                &s,
                "read_only",
                "this session is read-only; no file can be changed",
            ));
        }
        let reason = match kind {
            Kind::Secret => Some(("secret", "is classified as a secret and cannot be changed")),
            Kind::GitInternal => Some((
                "git_internal",
                "is inside .git; use git itself for repository internals",
            )),
            Kind::Generated => Some((
                "generated",
                "is generated output; change its source and regenerate instead",
            )),
            Kind::Vendored => Some((
                "vendored",
                "is vendored third-party code and cannot be changed",
            )),
            Kind::Lockfile if !self.config.allow_lockfile_writes => Some((
                "lockfile",
                "is a lock file; let the package manager update it",
            )),
            _ => None,
        }
        .or_else(|| {
            self.write_block
                .matches_path_or_parent(&s)
                .then_some(("blocked", "is blocked for writing by the session policy"))
        })
        .or_else(|| {
            (!self.write_allow.is_empty() && !self.write_allow.matches_path_or_parent(&s))
                .then_some((
                    "not_allowed",
                    "is outside the paths the session policy allows changing",
                ))
        })?;
        Some(ToolError::denied(
            &s,
            reason.0,
            format!("'{s}' {}", reason.1),
        ))
    }

    /// Refuses reading `path` of `kind` when the policy does.
    ///
    /// # Errors
    /// `POLICY_DENIED` with the rule as `reason`.
    pub fn check_read(&self, path: &LogicalPath, kind: Kind) -> ToolResult<()> {
        self.read_denial(path, kind).map_or(Ok(()), Err)
    }

    /// Refuses changing `path` of `kind` when the policy does.
    ///
    /// # Errors
    /// `POLICY_DENIED` with the rule as `reason`.
    pub fn check_write(&self, path: &LogicalPath, kind: Kind) -> ToolResult<()> {
        self.write_denial(path, kind).map_or(Ok(()), Err)
    }

    /// True when a read allow-glob may match something below `dir`, so that a walk must
    /// enter it even though `dir` itself is not allowed.
    pub fn may_allow_below(&self, dir: &LogicalPath) -> bool {
        // Compared as the allow list itself is (see `Policy::new`).
        let fold = |s: &str| -> String {
            if self.config.case_mode().folds_grants() {
                Folding::Grant.apply(s).into_owned()
            } else {
                s.to_owned()
            }
        };
        let d = fold(dir.as_str());
        self.config.read.allow.iter().any(|g| {
            let g = fold(g);
            let g = g.trim_start_matches("./");
            if !g.contains('/') {
                return true;
            }
            let literal: String = g.chars().take_while(|c| !"*?[{".contains(*c)).collect();
            literal.starts_with(&format!("{d}/")) || d.starts_with(literal.trim_end_matches('/'))
        })
    }

    /// Clamps an optional argument to a limit, with a default.
    pub fn clamp(requested: Option<u32>, default: u32, cap: u32) -> u32 {
        requested.unwrap_or(default).min(cap).max(1)
    }
}

/// True when the error is a policy refusal.
pub fn is_denied(e: &ToolError) -> bool {
    e.code == ErrorCode::PolicyDenied
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> LogicalPath {
        LogicalPath::parse(s).unwrap()
    }

    #[test]
    fn defaults_deny_secrets_and_git_but_allow_source() {
        let pol = Policy::from_json("").unwrap();
        let r = pol.check_read(&p(".env"), Kind::Secret).unwrap_err();
        assert_eq!(r.reason.as_deref(), Some("secret"));
        assert!(pol.check_read(&p("src/a.rs"), Kind::Source).is_ok());
        assert!(pol.check_write(&p("src/a.rs"), Kind::Source).is_ok());
        let w = pol
            .check_write(&p("Cargo.lock"), Kind::Lockfile)
            .unwrap_err();
        assert_eq!(w.reason.as_deref(), Some("lockfile"));
    }

    #[test]
    fn block_wins_over_allow_and_covers_subtrees() {
        let pol =
            Policy::from_json(r#"{"read":{"allow":["src/**"],"block":["src/private"]}}"#).unwrap();
        assert!(pol.check_read(&p("src/a.rs"), Kind::Source).is_ok());
        // Hidden paths answer as missing ones; the rule is still told apart internally.
        let e = pol
            .check_read(&p("src/private/k.rs"), Kind::Source)
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::NotFound);
        let scope = pol.scope_of(&p("src/private"));
        assert_eq!(
            pol.read_denial_in(&scope, &p("src/private/k.rs"), Kind::Source),
            Some("blocked")
        );
        let e = pol.check_read(&p("docs/a.md"), Kind::Doc).unwrap_err();
        assert_eq!(e.code, ErrorCode::NotFound);
        let scope = pol.scope_of(&p("docs"));
        assert_eq!(
            pol.read_denial_in(&scope, &p("docs/a.md"), Kind::Doc),
            Some("not_allowed")
        );
    }

    #[test]
    fn read_only_refuses_every_write() {
        let pol = Policy::from_json(r#"{"read_only":true}"#).unwrap();
        let e = pol.check_write(&p("a.txt"), Kind::Text).unwrap_err();
        assert_eq!(e.reason.as_deref(), Some("read_only"));
    }

    #[test]
    fn overrides_reclassify() {
        let pol = Policy::from_json(r#"{"overrides":[{"pattern":".env.example","kind":"config"},{"pattern":"private","kind":"secret"}]}"#).unwrap();
        assert_eq!(pol.kind_of(&p(".env.example"), false), Kind::Config);
        assert_eq!(pol.kind_of(&p(".env"), false), Kind::Secret);
        assert_eq!(pol.kind_of(&p("private/notes.md"), false), Kind::Secret);
    }

    #[test]
    fn unknown_fields_and_bad_globs_are_refused() {
        assert_eq!(
            Policy::from_json(r#"{"read_onyl":true}"#).unwrap_err().code,
            ErrorCode::InvalidInput
        );
        assert_eq!(
            Policy::from_json(r#"{"read":{"block":["a[b"]}}"#)
                .unwrap_err()
                .code,
            ErrorCode::InvalidInput
        );
    }

    #[test]
    fn guarding_rules_match_every_spelling_granting_ones_only_where_names_fold() {
        let pol = Policy::from_json(
            r#"{"read":{"block":["private/**"]},"write":{"block":["ci/**"]},"reserved":["policy.toml"]}"#,
        )
        .unwrap();
        for hidden in [
            "PRIVATE/plan.txt",
            "Private./plan.txt",
            "priv\u{200B}ate/plan.txt",
        ] {
            assert!(pol.hides(&p(hidden), Kind::Text), "{hidden}");
        }
        assert!(!pol.hides(&p("public/plan.txt"), Kind::Text));
        let e = pol
            .check_write(&p("CI/deploy.sh"), Kind::Source)
            .unwrap_err();
        assert_eq!(e.reason.as_deref(), Some("blocked"));
        assert!(pol.check_write(&p("src/deploy.sh"), Kind::Source).is_ok());
        assert!(pol.is_host_file(&p("POLICY.toml")));
        assert!(pol.is_host_file(&p("policy.TOML.")));
        assert!(!pol.is_host_file(&p("policy.tom")));

        // An allow list grants: another spelling is another file unless names fold.
        let unknown = Policy::from_json(r#"{"write":{"allow":["src/**"]}}"#).unwrap();
        assert!(unknown.check_write(&p("src/a.rs"), Kind::Source).is_ok());
        assert!(unknown.check_write(&p("SRC/a.rs"), Kind::Source).is_err());
        let folding =
            Policy::from_json(r#"{"write":{"allow":["src/**"]},"case_insensitive":true}"#).unwrap();
        assert!(folding.check_write(&p("SRC/a.rs"), Kind::Source).is_ok());
        assert!(folding.check_write(&p("lib/a.rs"), Kind::Source).is_err());
        // Only spellings every folding file system joins: `ſrc` and `straße` are names of
        // their own on NTFS, so a granting rule does not reach them.
        let wide = Policy::from_json(
            r#"{"read":{"allow":["src/**","strasse/**"]},"case_insensitive":true}"#,
        )
        .unwrap();
        assert!(!wide.hides(&p("Src/a.rs"), Kind::Source));
        assert!(!wide.hides(&p("STRASSE/a.rs"), Kind::Source));
        for other in ["ſrc/a.rs", "s\u{200C}rc/a.rs", "src./a.rs", "straße/a.rs"] {
            assert!(wide.hides(&p(other), Kind::Source), "{other}");
        }
        // A walk descends where the allow list may grant something, in the same spelling.
        assert!(wide.may_allow_below(&p("SRC")));
        assert!(!wide.may_allow_below(&p("ſrc")));
    }

    #[test]
    fn overrides_that_guard_fold_and_overrides_that_relax_do_not() {
        let pol = Policy::from_json(
            r#"{"overrides":[{"pattern":"keys/**","kind":"secret"},{"pattern":"fixtures/**","kind":"text"}]}"#,
        )
        .unwrap();
        assert_eq!(pol.kind_of(&p("KEYS/a.txt"), false), Kind::Secret);
        assert_eq!(pol.kind_of(&p("fixtures/a.rs"), false), Kind::Text);
        assert_eq!(pol.kind_of(&p("FIXTURES/a.rs"), false), Kind::Source);
    }
}
