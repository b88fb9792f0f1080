//! What every tool works against: the tree below the root and the policy in force, plus
//! the guard-classify-policy sequence shared by the tools that read one file.

use crate::error::ToolResult;
use crate::rules::classify::Kind;
use crate::rules::fsx::{Fs, Resolved};
use crate::rules::path::LogicalPath;
use crate::rules::policy::Policy;

/// The root and policy of one component instance.
#[derive(Debug, Clone)]
pub struct Session {
    pub fs: Fs,
    pub policy: Policy,
    /// The private state directory (session baseline), when the host provides one. Only
    /// ever a directory the host mounted for this purpose, never one in the repository.
    pub state_dir: Option<std::path::PathBuf>,
    /// The baseline kept in memory when there is no state directory.
    pub memory: crate::tools::baseline::Memory,
    /// The `changes_since` snapshots kept in memory when there is no state directory.
    pub changes_memory: crate::tools::changes::store::Memory,
    /// The newest `changes_since` snapshot, kept in memory for the next call (see
    /// [`crate::tools::changes::watched`]).
    pub changes_live: crate::tools::changes::watched::Shared,
    /// The search index, kept between calls (see [`crate::tools::index`]).
    pub index: crate::tools::index::Shared,
    /// Calls made in this session, for the audit events' numbers.
    pub calls: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// The key that signs continuation cursors (the host's, or one made per session).
    pub cursor_key: crate::tools::cursor::CursorKey,
    /// The token the host writes to the state directory while it holds the repository's
    /// mutation lock for this session's call (see [`crate::tools::journal`]); `None` when the host
    /// has no such lock.
    pub lock_token: Option<String>,
    /// Set once the state directory was found without an older version's record of
    /// unfinished temporary files (see [`crate::journal`]): none can appear later, since
    /// this version never writes one.
    pub legacy_settled: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// The host opened this instance to build the search index for others: its searches
    /// record even while a build is announced (see [`crate::tools::index::file`]).
    pub index_builder: bool,
    /// For an index builder: how often its search saves what it has recorded so far
    /// (nanoseconds), so that a build a call's limit ends keeps its work.
    pub index_checkpoint_ns: Option<u64>,
    /// The index folder the host mounted for this instance (shared with other sessions of
    /// the repository), if any; see [`Session::index_dir`].
    pub shared_index_dir: Option<std::path::PathBuf>,
}

/// A path that passed the guard, was resolved, and that the policy lets the agent read.
#[derive(Debug)]
pub struct Readable {
    pub resolved: Resolved,
    /// Classification of the link target (what the content really is).
    pub kind: Kind,
}

/// A key no one outside this instance can predict ([`crate::fs::random`]).
fn random_key() -> crate::tools::cursor::CursorKey {
    let mut k = [0u8; 32];
    for chunk in k.chunks_mut(8) {
        chunk.copy_from_slice(&crate::fs::random::random_u64().to_le_bytes());
    }
    crate::tools::cursor::CursorKey::new(k)
}

impl Session {
    pub fn new(fs: Fs, policy: Policy) -> Self {
        let policy = policy.with_fs(&fs);
        Session {
            fs,
            policy,
            state_dir: None,
            memory: Default::default(),
            changes_memory: Default::default(),
            changes_live: Default::default(),
            index: Default::default(),
            calls: Default::default(),
            cursor_key: random_key(),
            lock_token: None,
            legacy_settled: Default::default(),
            index_builder: false,
            index_checkpoint_ns: None,
            shared_index_dir: None,
        }
    }

    /// Keeps the session baseline in `dir` (outside the repository).
    /// The same session with cursors signed by `key` (the host's, so that cursors stay
    /// valid across instances).
    pub fn with_cursor_key(mut self, key: crate::tools::cursor::CursorKey) -> Self {
        self.cursor_key = key;
        self
    }

    /// The same session under a host that takes the mutation lock and names it by `token`.
    pub fn with_lock_token(mut self, token: impl Into<String>) -> Self {
        self.lock_token = Some(token.into());
        self
    }

    pub fn with_state_dir(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.state_dir = Some(dir.into());
        self
    }

    /// Where the search index is kept: the folder the host mounted for it, else `index/`
    /// in the state directory; `None` without either (the index lives in memory only).
    pub fn index_dir(&self) -> Option<std::path::PathBuf> {
        self.shared_index_dir.clone().or_else(|| {
            self.state_dir
                .as_ref()
                .map(|d| d.join(file_tools_contract::INDEX_DIR_NAME))
        })
    }

    /// Resolves `path` without following a link into what the read rules hide: such a
    /// path answers exactly as a missing one.
    ///
    /// # Errors
    /// As [`Fs::resolve`]; `NOT_FOUND` for a path that leads into a hidden area.
    pub fn resolve(&self, path: &LogicalPath) -> ToolResult<crate::rules::fsx::Resolved> {
        self.fs
            .resolve_with(path, &|t| self.policy.hidden_path(t))
            .map_err(|e| {
                if e.reason.as_deref() == Some("hidden") {
                    missing(path)
                } else {
                    e
                }
            })
    }

    /// Guards, resolves and classifies `input`, then asks the policy whether it may be
    /// read. A symlink is judged by its target, and the link's own path must pass the
    /// policy's path rules as well.
    ///
    /// # Errors
    /// `PATH_REJECTED`, `POLICY_DENIED`, `IO_ERROR`.
    pub fn readable(&self, input: &str) -> ToolResult<Readable> {
        let path = LogicalPath::parse(input)?;
        self.readable_path(&path)
    }

    /// [`Session::readable`] for an already parsed path.
    ///
    /// # Errors
    /// As [`Session::readable`].
    pub fn readable_path(&self, path: &LogicalPath) -> ToolResult<Readable> {
        // Hidden by the read rules: exactly what a missing path answers, before anything
        // on disk is looked at.
        if self.policy.hidden_path(path) {
            return Err(missing(path));
        }
        let own_kind = self.policy.kind_of(path, false);
        if matches!(own_kind, Kind::Secret | Kind::GitInternal) {
            // Refused by name before anything on disk is touched.
            self.policy.check_read(path, own_kind)?;
        }
        let resolved = self.resolve(path)?;
        let is_dir = resolved.meta.as_ref().is_some_and(|m| m.is_dir());
        let kind = self.policy.kind_of(&resolved.target, is_dir);
        self.policy.check_read(&resolved.target, kind)?;
        if resolved.via_link {
            self.policy
                .check_read(path, self.policy.kind_of(path, is_dir))?;
        }
        if let Some(m) = resolved.meta.filter(|m| m.is_file()) {
            self.policy
                .check_links(&resolved.requested.to_string(), m.nlink)?;
        }
        Ok(Readable { resolved, kind })
    }
}

/// The answer for a path that does not exist (or that the read rules hide).
pub fn missing(path: &LogicalPath) -> crate::error::ToolError {
    crate::error::ToolError::io(path.as_str(), &std::io::ErrorKind::NotFound.into())
}
