//! Set-up shared by the CLI's commands: the global options, the runtime, the policy, and
//! the session (its state directory, cursor key and audit sink). Part of the binary.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use crate::policy_file;
use clap::ValueEnum;
use file_tools_host::{JsonLinesSink, Limits, Runtime, Session, SessionBuilder};
use serde_json::{json, Value};
use sha2::Digest as _;

/// A usage or set-up error: one line on stderr, exit 2.
pub(crate) fn usage_error(msg: &str) -> ExitCode {
    crate::errln(format_args!("file-tools: {msg}"));
    crate::errln("(file-tools --help lists the commands and options)");
    ExitCode::from(2)
}

#[derive(Debug, Clone, clap::Args)]
pub(crate) struct Options {
    /// The repository the tools work in.
    #[arg(long, global = true, value_name = "DIR")]
    pub(crate) repo: Option<PathBuf>,
    /// Offer and allow no change to any file.
    #[arg(long, global = true)]
    pub(crate) read_only: bool,
    /// A policy file (TOML); default: the built-in policy.
    #[arg(long, global = true, value_name = "FILE")]
    pub(crate) policy: Option<PathBuf>,
    /// Append an audit event per call to this JSON-lines log (outside the repository).
    #[arg(long, global = true, value_name = "FILE")]
    pub(crate) audit_log: Option<PathBuf>,
    /// Sign the audit log with the key in this file (made on first use; outside the
    /// repository); with `audit verify`, check the signatures too.
    #[arg(long, global = true, value_name = "KEY")]
    pub(crate) audit_key: Option<PathBuf>,
    /// Where the session baseline (for diff_workspace and revert) lives; default: the
    /// user's state directory, per repository and --session. Over HTTP, it holds a
    /// directory per session.
    #[arg(long, global = true, value_name = "DIR")]
    pub(crate) state_dir: Option<PathBuf>,
    /// The session's name: calls with the same name share a baseline.
    #[arg(long, global = true, value_name = "NAME", default_value = "default")]
    pub(crate) session: String,
    /// Output: json (what agents parse; the default when stdout is not a terminal) or text
    /// (search hits as path:line:text, diffs as unified diffs, errors as one line).
    #[arg(long, global = true, value_enum)]
    pub(crate) format: Option<Format>,
    /// The search index's folder that the HTTP server's sessions of one repository share
    /// under `--state-dir` (set by the server, not a flag); see [`index_dir`].
    #[arg(skip)]
    pub(crate) shared_index: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    Json,
    Text,
}

pub(crate) fn runtime() -> Result<Runtime, String> {
    let mut b = Runtime::builder();
    // An empty variable counts as unset; a relative XDG_CACHE_HOME or HOME is ignored, as
    // the XDG base directory rules say (it would name a folder of whatever directory the
    // command runs in, perhaps the repository, where a session refuses a cache).
    let set = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let absolute = |name: &str| set(name).map(PathBuf::from).filter(|p| p.is_absolute());
    let dir = match set("FILE_TOOLS_CACHE_DIR") {
        Some(d) if d == "off" => None,
        Some(d) => Some(PathBuf::from(d)),
        None => absolute("XDG_CACHE_HOME")
            .or_else(|| absolute("HOME").map(|h| h.join(".cache")))
            .map(|d| d.join("file-tools")),
    };
    if let Some(d) = dir {
        b = b.cache_dir(d);
    }
    b.build().map_err(|e| e.to_string())
}

pub(crate) fn load_policy(o: &Options) -> Result<(Value, Limits), String> {
    let (mut policy, limits) = match &o.policy {
        Some(p) => {
            let f = policy_file::load(p).map_err(|e| e.to_string())?;
            (f.policy, f.limits)
        }
        None => (json!({}), Limits::default()),
    };
    if o.read_only {
        if let Some(obj) = policy.as_object_mut() {
            obj.insert("read_only".into(), Value::Bool(true));
        }
    }
    Ok((policy, limits))
}

/// The session's state directory: `--state-dir`, else one per repository and session
/// name in the user's state directory (outside any repository).
pub(crate) fn state_dir(o: &Options, repo: &Path) -> Result<PathBuf, String> {
    if let Some(d) = &o.state_dir {
        return Ok(d.clone());
    }
    let name = &o.session;
    if name.is_empty()
        || name.len() > 64
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err(format!(
            "--session '{name}': use 1 to 64 letters, digits, '-' or '_'"
        ));
    }
    Ok(state_home()?.join(format!("{}-{name}", repo_key(repo)?)))
}

/// The search index's folder that every session of the repository shares: with no
/// `--state-dir`, `<repository key>.index` beside the sessions' directories in the user's
/// state directory (the CLI, the stdio server and each HTTP session then use one index);
/// the one the HTTP server chose under `--state-dir`; `None` when `--state-dir` names this
/// session's directory alone (the index is its `index/`).
pub(crate) fn index_dir(o: &Options, repo: &Path) -> Result<Option<PathBuf>, String> {
    if let Some(d) = &o.shared_index {
        return Ok(Some(d.clone()));
    }
    if o.state_dir.is_some() {
        return Ok(None);
    }
    Ok(Some(
        state_home()?.join(format!("{}.index", repo_key(repo)?)),
    ))
}

/// A short key of the repository's canonical path, which names its state directories.
pub(crate) fn repo_key(repo: &Path) -> Result<String, String> {
    let canonical = std::fs::canonicalize(repo)
        .map_err(|e| format!("cannot open the repository {}: {e}", repo.display()))?;
    let digest = sha2::Sha256::digest(canonical.as_os_str().as_encoded_bytes());
    Ok(digest[..8].iter().map(|b| format!("{b:02x}")).collect())
}

/// The user's state directory for file-tools (`$XDG_STATE_HOME/file-tools`).
pub(crate) fn state_home() -> Result<PathBuf, String> {
    std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))
        .map(|d| d.join("file-tools"))
        .ok_or_else(|| "no state directory: set XDG_STATE_HOME or HOME, or give --state-dir".into())
}

/// The key that signs continuation cursors, kept in the user's state directory (readable
/// by its owner only), so that one call's `next_cursor` is taken by the next call.
pub(crate) fn cursor_key() -> Result<[u8; 32], String> {
    let dir = state_home()?;
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let path = dir.join("cursor.key");
    file_tools_host::audit_key::AuditKey::load_or_create(&path)
        .map(|k| k.bytes())
        .map_err(|e| {
            format!(
                "cannot read or create the cursor key {}: {e}",
                path.display()
            )
        })
}

pub(crate) fn need_repo<'a>(o: &'a Options, what: &str) -> Result<&'a PathBuf, String> {
    o.repo
        .as_ref()
        .ok_or_else(|| format!("{what} needs --repo DIR"))
}

/// A session for the calls of one command.
pub(crate) fn open_session(o: &Options, repo: &Path) -> Result<Session, String> {
    let (builder, _) = session_builder(o, repo)?;
    builder.build().map_err(|e| e.to_string())
}

/// A session an MCP server serves for a long time, counting every call in `metrics` when
/// given. Where the policy turns the search index on, a watch lets searches answer without
/// looking at the tree while nothing changed, and, with `build_index`, the index is built
/// (or brought up to date) at once on a thread of its own
/// ([`file_tools_host::index_build::spawn`]): calls scan until it is saved, then use it.
#[cfg(feature = "mcp")]
pub(crate) fn open_served(
    o: &Options,
    repo: &Path,
    metrics: Option<&Arc<file_tools_mcp::Metrics>>,
    build_index: bool,
) -> Result<Session, String> {
    let (builder, indexed) = session_builder(o, repo)?;
    // The host starts the watch only where the policy turns the index on.
    let mut served = builder.clone().watch_tree(true);
    if let Some(m) = metrics {
        served = served.observer(m.clone());
    }
    let session = served.build().map_err(|e| e.to_string())?;
    if indexed && build_index {
        // The build's own session: no watch, and not counted in the metrics.
        let built = file_tools_host::index_build::spawn(builder, |answer| {
            if let Err(e) = answer {
                crate::errln(format_args!(
                    "file-tools: the search index was not built: {e}"
                ));
            }
        });
        if let Err(e) = built {
            crate::errln(format_args!(
                "file-tools: the search index was not built: {e}"
            ));
        }
    }
    Ok(session)
}

/// How a session for `repo` is opened under the command line's options; and whether the
/// policy turns the search index on.
pub(crate) fn session_builder(o: &Options, repo: &Path) -> Result<(SessionBuilder, bool), String> {
    let (policy, limits) = load_policy(o)?;
    let indexed = policy
        .pointer("/limits/max_index_bytes")
        .and_then(serde_json::Value::as_u64)
        .is_some_and(|n| n > 0);
    let rt = runtime()?;
    let mut builder = Session::builder(&rt)
        .repo(repo)
        .writable(!o.read_only)
        .policy(policy)
        .limits(limits)
        .cursor_key(cursor_key()?)
        // Read-only sessions too: `changes_since` tokens must outlive this process.
        .state_dir(state_dir(o, repo)?);
    if let Some(d) = index_dir(o, repo)? {
        builder = builder.index_dir(d);
    }
    if let Some(p) = &o.policy {
        builder = builder.host_file(p);
    }
    if let Some(log) = &o.audit_log {
        builder = builder.audit_sink(audit_sink(o, repo, log)?);
    }
    Ok((builder, indexed))
}

/// The audit log's sink, refused inside the repository, keyed when `--audit-key` says so.
pub(crate) fn audit_sink(
    o: &Options,
    repo: &Path,
    log: &Path,
) -> Result<Arc<dyn file_tools_host::AuditSink>, String> {
    let repo_dir = std::fs::canonicalize(repo)
        .map_err(|e| format!("cannot open the repository {}: {e}", repo.display()))?;
    if file_tools_host::session::inside(&repo_dir, log).is_some() {
        return Err(format!(
            "the audit log {} lies inside the repository {}: a tool could rewrite it. Put it outside the repository",
            log.display(),
            repo.display()
        ));
    }
    let open_err = |e: std::io::Error| format!("cannot open the audit log {}: {e}", log.display());
    let sink = match &o.audit_key {
        Some(key_file) => {
            if file_tools_host::session::inside(&repo_dir, key_file).is_some() {
                return Err(format!(
                    "the audit key {} lies inside the repository {}: keep it outside",
                    key_file.display(),
                    repo.display()
                ));
            }
            let key =
                file_tools_host::audit_key::AuditKey::load_or_create(key_file).map_err(|e| {
                    format!(
                        "cannot read or create the audit key {}: {e}",
                        key_file.display()
                    )
                })?;
            JsonLinesSink::open_keyed(log, key).map_err(open_err)?
        }
        None => JsonLinesSink::open(log).map_err(open_err)?,
    };
    Ok(Arc::new(sink))
}
