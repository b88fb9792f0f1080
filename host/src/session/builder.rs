//! Configuring a session: the limits and the builder (repository, policy, state directory,
//! keys, sinks).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::state_dir::{check_outside, identity, StateDir};
use super::{random_key, Config, Session};
use crate::approval::Approver;
use crate::audit::AuditSink;
use crate::error::HostError;
use crate::hex;
use crate::runtime::{Runtime, ToolSets};

/// Limits applied to every call of a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Fuel (roughly, WebAssembly instructions) one call may use.
    pub fuel_per_call: u64,
    /// Most bytes of linear memory the instance may hold.
    pub memory_bytes: usize,
    /// Wall-clock time one call may take.
    pub timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            fuel_per_call: 200_000_000_000,
            memory_bytes: 1 << 30,
            timeout: Duration::from_secs(60),
        }
    }
}

/// Configures a [`Session`]. Nothing is granted by default: the repository must be named,
/// writes are off until [`SessionBuilder::writable`] is called, and every limit is finite.
#[derive(Clone)]
pub struct SessionBuilder {
    runtime: Runtime,
    repo: Option<PathBuf>,
    state_dir: Option<PathBuf>,
    index_dir: Option<PathBuf>,
    writable: bool,
    policy: Value,
    limits: Limits,
    sink: Option<Arc<dyn AuditSink>>,
    approver: Option<Arc<dyn Approver>>,
    batched_reads: bool,
    fresh_per_call: bool,
    fault: Option<String>,
    host_files: Vec<PathBuf>,
    cursor_key: Option<[u8; 32]>,
    observer: Option<Arc<dyn crate::CallObserver>>,
    watch_tree: bool,
    index_builder: bool,
    index_checkpoint: Option<Duration>,
}

impl std::fmt::Debug for SessionBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionBuilder")
            .field("repo", &self.repo)
            .field("state_dir", &self.state_dir)
            .field("writable", &self.writable)
            .field("policy", &self.policy)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl SessionBuilder {
    /// A session over `runtime` that grants nothing yet: no repository, read-only, the
    /// default policy and limits, no audit sink, approver or observer.
    pub fn new(runtime: &Runtime) -> Self {
        SessionBuilder {
            runtime: runtime.clone(),
            repo: None,
            state_dir: None,
            index_dir: None,
            writable: false,
            policy: Value::Object(Default::default()),
            limits: Limits::default(),
            sink: None,
            approver: None,
            batched_reads: true,
            fresh_per_call: false,
            fault: None,
            host_files: Vec::new(),
            cursor_key: None,
            observer: None,
            watch_tree: false,
            index_builder: false,
            index_checkpoint: None,
        }
    }

    /// Runs a watch on the repository (inotify, Linux, with the `watch` feature) whose
    /// count of changes lets the component's search index, when the policy turns it on
    /// (`limits.max_index_bytes`), answer a search without looking at any file while
    /// nothing changed, and whose record of where things changed lets the host answer a
    /// listing of a directory in which nothing changed from the one it made before, so
    /// that a walk lists again only what changed. Costs one inotify watch per directory
    /// of the repository, and the memory of the listings kept; where
    /// they cannot be had, or without the feature or Linux, searches look at every file's
    /// metadata instead. Off by default; the MCP server turns it on.
    pub fn watch_tree(mut self, yes: bool) -> Self {
        self.watch_tree = yes;
        self
    }

    /// Tells `observer` about every call of the session (one observer may serve as many
    /// sessions as the embedder likes: the MCP crate's metrics count calls this way).
    pub fn observer(mut self, observer: Arc<dyn crate::CallObserver>) -> Self {
        self.observer = Some(observer);
        self
    }

    /// The key that signs the continuation cursors of `list_dir`, `find_files` and
    /// `search_text`. Sessions given the same key accept each other's cursors (one CLI
    /// call continues the last one's page); by default every session makes its own.
    pub fn cursor_key(mut self, key: [u8; 32]) -> Self {
        self.cursor_key = Some(key);
        self
    }

    /// Runs every call in a new instance, dropped afterwards, so that nothing a call leaves
    /// in the component's memory can reach the next. Cheap with a pooling runtime
    /// ([`crate::RuntimeBuilder::pooling`]). Off by default: one instance serves all calls.
    pub fn fresh_instance_per_call(mut self, yes: bool) -> Self {
        self.fresh_per_call = yes;
        self
    }

    /// Whether the component may use the host's batched reads (`host-fs.read-dir` and
    /// `read-file`: one host call per directory or file instead of one per entry or read).
    /// On by default; off, walks and searches go through WASI alone (for measurements).
    pub fn batched_reads(mut self, yes: bool) -> Self {
        self.batched_reads = yes;
        self
    }

    /// Who decides on changes the policy's `approval` rules mark (see [`crate::approval`]).
    /// Without one, such changes are refused with `APPROVAL_REQUIRED`.
    pub fn approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = Some(approver);
        self
    }

    /// Opens the session to build the search index for other sessions of the repository
    /// ([`crate::index_build`]): its searches record the index even while a build is
    /// announced in the state directory (the announced build is its own), where other
    /// sessions scan.
    pub fn index_builder(mut self, yes: bool) -> Self {
        self.index_builder = yes;
        self
    }

    /// How often an [index builder](SessionBuilder::index_builder)'s search saves what it
    /// has recorded so far (default: a third of the call timeout), so that a build that
    /// the call's limits end keeps its work and the next call goes on from it
    /// ([`crate::index_build::build`] makes those calls). An interval longer than the
    /// timeout saves only at the end.
    pub fn index_checkpoint_every(mut self, every: Duration) -> Self {
        self.index_checkpoint = Some(every);
        self
    }

    /// Where the session will keep the search index, when it has a place that outlives it:
    /// the index folder given, else `index/` in the state directory given; refused, as
    /// [`SessionBuilder::build`] refuses it, when either lies inside the repository, so
    /// that nothing is made there before the session is built.
    ///
    /// # Errors
    /// `HostError::Config` for a folder inside the repository (or no repository given),
    /// `HostError::Repo` when the repository cannot be opened.
    pub(crate) fn index_dir_given(&self) -> Result<Option<PathBuf>, HostError> {
        if self.state_dir.is_none() && self.index_dir.is_none() {
            return Ok(None);
        }
        let repo = self
            .repo
            .as_deref()
            .ok_or_else(|| HostError::Config("no repository directory given".into()))?;
        let repo = std::fs::canonicalize(repo).map_err(|e| HostError::Repo {
            path: repo.display().to_string(),
            source: e,
        })?;
        let state = match self.state_dir.as_deref() {
            Some(d) => Some(check_outside(d, &repo, "state directory")?),
            None => None,
        };
        Ok(match (&self.index_dir, state) {
            (Some(d), _) => Some(check_outside(d, &repo, "index folder")?),
            (None, state) => state.map(|s| s.join(file_tools_contract::INDEX_DIR_NAME)),
        })
    }

    /// For tests of trap handling with the fault-injection build of the component: the
    /// point where it should panic. The shipped component ignores it.
    #[doc(hidden)]
    pub fn fault_injection(mut self, point: &str) -> Self {
        self.fault = Some(point.to_string());
        self
    }

    /// The repository directory: the only directory the component can see.
    pub fn repo(mut self, dir: impl Into<PathBuf>) -> Self {
        self.repo = Some(dir.into());
        self
    }

    /// Where the session keeps its baseline (for `diff_workspace` and `revert`) and the
    /// snapshots behind `changes_since` tokens; must be outside the repository. A session
    /// reopened on the same directory continues the same baseline and takes the same
    /// tokens. Without one, the session uses a temporary directory removed when the
    /// session is dropped (its tokens end with it).
    pub fn state_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.state_dir = Some(dir.into());
        self
    }

    /// Where the session keeps the search index, instead of `index/` in its state
    /// directory: a private folder outside the repository that the sessions of one
    /// repository may share, so that an index one of them built (or
    /// [`crate::index_build`] built for them) serves them all. Each index file is bound to
    /// the repository and the policy it was made under; a session never uses one made for
    /// anything else.
    pub fn index_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.index_dir = Some(dir.into());
        self
    }

    /// Lets mutation tools change files (subject to the policy). Off by default; when off
    /// the repository is also preopened read-only, a second wall behind the policy.
    pub fn writable(mut self, yes: bool) -> Self {
        self.writable = yes;
        self
    }

    /// The component's policy, as the JSON object documented in
    /// `guest/src/rules/policy/config.rs`.
    pub fn policy(mut self, policy: Value) -> Self {
        self.policy = policy;
        self
    }

    /// Per-call limits.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// A file the host owns (its policy file, say). If it lies inside the repository, every
    /// tool refuses to change it (it stays readable); outside, this changes nothing.
    pub fn host_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.host_files.push(path.into());
        self
    }

    /// Receives every call's audit event, numbered across the whole session.
    pub fn audit_sink(mut self, sink: Arc<dyn AuditSink>) -> Self {
        self.sink = Some(sink);
        self
    }

    /// Checks the configuration and opens the session; the policy is checked by the
    /// component itself.
    ///
    /// # Errors
    /// `HostError::Config` (no repository, policy not an object, state directory inside the
    /// repository), `HostError::Repo` (the directory cannot be opened), `HostError::Policy`
    /// (the component refused the policy).
    pub fn build(self) -> Result<Session, HostError> {
        let repo = self
            .repo
            .clone()
            .ok_or_else(|| HostError::Config("no repository directory given".into()))?;
        let repo_err = |e| HostError::Repo {
            path: repo.display().to_string(),
            source: e,
        };
        let canonical_repo = std::fs::canonicalize(&repo).map_err(repo_err)?;
        // The runtime's compiled artifacts are code this process runs: a repository the
        // agent may write must not hold them.
        for place in self.runtime.artifact_places() {
            check_outside(place, &canonical_repo, "compiled component's place")?;
        }
        if !canonical_repo.is_dir() {
            return Err(HostError::Config(format!(
                "{} is not a directory",
                repo.display()
            )));
        }
        let mut policy = self.policy.clone();
        let obj = policy
            .as_object_mut()
            .ok_or_else(|| HostError::Config("the policy must be a JSON object".into()))?;
        if !self.writable {
            obj.insert("read_only".into(), Value::Bool(true));
        }
        let reserved: Vec<Value> = self
            .host_files
            .iter()
            .filter_map(|f| inside(&canonical_repo, f))
            .map(Value::String)
            .collect();
        if !reserved.is_empty() {
            obj.insert("reserved".into(), Value::Array(reserved));
        }
        // How the file system compares names, unless the policy says so itself.
        if !obj.contains_key("case_insensitive") {
            if let Some(folds) = crate::case_probe::folds_case(&canonical_repo) {
                obj.insert("case_insensitive".into(), Value::Bool(folds));
            }
        }
        let obj_allow_hardlinks = obj
            .get("allow_hardlinks")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let read_only = obj
            .get("read_only")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        // Read-only sessions get one too: `changes_since` keeps its snapshots there. It is
        // private to the host and never inside the repository, so read-only still holds.
        // The repository as opened now: its identity binds the state directory, and every
        // later instance must find the same directory at the path.
        let held = std::fs::File::open(&canonical_repo).map_err(repo_err)?;
        if !held.metadata().map_err(repo_err)?.is_dir() {
            return Err(HostError::Config(format!(
                "{} is not a directory",
                repo.display()
            )));
        }
        let repo_id = identity(&held).map_err(repo_err)?;
        let mut state = match &self.state_dir {
            Some(d) => StateDir::given(d, &canonical_repo, &repo_id)?,
            None => StateDir::temporary()?,
        };
        if let Some(d) = &self.index_dir {
            state.share_index(d, &canonical_repo)?;
        }
        let state = Some(state);
        // The watch serves only an index the policy turns on.
        #[cfg(all(feature = "watch", target_os = "linux"))]
        let tree_watch = {
            let indexed = policy
                .pointer("/limits/max_index_bytes")
                .and_then(Value::as_u64)
                .is_some_and(|n| n > 0);
            match (&state, self.watch_tree && indexed && self.batched_reads) {
                (Some(st), true) => crate::tree_watch::TreeWatch::start(&held, &st.path)
                    .ok()
                    .map(Arc::new),
                _ => None,
            }
        };
        let repo_dir = if self.batched_reads {
            Some(Arc::new(cap_std::fs::Dir::from_std_file(held)))
        } else {
            None
        };
        let mut session = Session {
            config: Arc::new(Config {
                runtime: self.runtime,
                repo_dir,
                fresh_per_call: self.fresh_per_call,
                repo: Some(canonical_repo),
                repo_id: Some(repo_id),
                state,
                read_only,
                allow_hardlinks: obj_allow_hardlinks,
                policy_json: policy.to_string(),
                limits: self.limits,
                sink: None,
                approver: self.approver.clone(),
                mutating: HashSet::new(),
                known: HashSet::new(),
                fault: self.fault.clone(),
                index_builder: self.index_builder,
                index_checkpoint: self.index_checkpoint.unwrap_or(self.limits.timeout / 3),
                observer: self.observer.clone(),
                cursor_key: match self.cursor_key {
                    Some(k) => hex(&k),
                    None => hex(&random_key().map_err(|e| {
                        HostError::Config(format!("no randomness for the cursor key: {e}"))
                    })?),
                },
                lock_token: hex(&random_key().map_err(|e| {
                    HostError::Config(format!("no randomness for the lock token: {e}"))
                })?),
                #[cfg(all(feature = "watch", target_os = "linux"))]
                tree_watch,
            }),
            instance: None,
            sequence: 0,
            listing: false,
        };
        // Ask the component to parse the policy now rather than fail every call later.
        // This check is set-up, not a tool call: it reaches no sink and takes no number.
        // A policy the component accepted before in this runtime needs no second look
        // (with a fault injected, the component may answer otherwise: always ask).
        let key = session.config.policy_json.clone();
        let cacheable = session.config.fault.is_none();
        let runtime = session.config.runtime.clone();
        let sets = match cacheable.then(|| runtime.tool_sets(&key)).flatten() {
            Some(sets) => sets,
            None => {
                let tools = session
                    .describe()
                    .map_err(|e| HostError::Policy(e.message))?;
                let sets = Arc::new(ToolSets::from_describe(&tools));
                if cacheable {
                    runtime.keep_tool_sets(&key, sets.clone());
                }
                sets
            }
        };
        if let Some(c) = Arc::get_mut(&mut session.config) {
            c.sink = self.sink;
            c.mutating = sets.mutating.clone();
            c.known = sets.known.clone();
        }
        session.sequence = 0;
        Ok(session)
    }
}

/// The path of `file` relative to `repo` (canonical) when it lies inside it, as a logical
/// path; `None` outside. The file itself need not exist yet.
pub fn inside(repo: &Path, file: &Path) -> Option<String> {
    let dir = file
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let dir = std::fs::canonicalize(dir).ok()?;
    let full = dir.join(file.file_name()?);
    let rel = full.strip_prefix(repo).ok()?;
    let text = rel.to_str()?;
    (!text.is_empty()).then(|| text.to_string())
}
