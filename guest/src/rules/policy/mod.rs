//! The session policy: given by the host, never changeable by the agent.
//!
//! The host passes it as JSON in the environment variable `FILE_TOOLS_POLICY`; every field
//! is optional and an absent policy means the safe defaults (`config`). Unknown fields are
//! refused, so that a misspelt rule cannot silently fail open.

use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::rules::approval::Approval;
use crate::rules::classify::Kind;
use crate::rules::glob::{Folding, Globs};
use crate::rules::path::LogicalPath;

mod config;
mod scope;

pub use config::{Limits, Override, PatchBudget, PolicyConfig, Rules};
pub use scope::DirScope;

/// A compiled policy.
#[derive(Debug, Clone)]
pub struct Policy {
    pub config: PolicyConfig,
    /// The tree classification looks into for build files; name-only when absent.
    fs: Option<crate::rules::fsx::Fs>,
    /// Answers of `root` lookups, by logical path.
    seen: std::sync::Arc<std::sync::Mutex<crate::text::keyhash::KeyMap<String, bool>>>,
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

    /// The answer of an earlier lookup kept under `key` in this call, if any.
    fn remembered(&self, key: &str) -> Option<bool> {
        self.seen.lock().ok().and_then(|m| m.get(key).copied())
    }

    fn has_file(&self, p: &LogicalPath) -> bool {
        let Some(fs) = &self.fs else { return true };
        let key = p.to_string();
        if let Some(v) = self.remembered(&key) {
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
mod tests;
