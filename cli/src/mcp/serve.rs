//! The MCP server of the `mcp` command: over stdio (on `--repo`, or on the client's one
//! root) or over HTTP (`--http`, several repositories).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use file_tools_host::describe_tools;
use file_tools_mcp::server::roots::Opener;
use file_tools_mcp::{serve_stdio, McpServer, Tasks};
use serde_json::Value;

use super::McpArgs;
use crate::setup::{load_policy, open_served, repo_key, runtime, state_dir, usage_error, Options};

/// Sessions one repository keeps on disk over HTTP; a request naming a new one past this
/// is refused, so that made-up names cannot fill the disk.
const MAX_SESSIONS: usize = 256;

/// How many session directories of the repository keyed `key` lie beside `place`.
fn sessions_kept(place: &Path, key: &str) -> usize {
    let prefix = format!("{key}-");
    place
        .parent()
        .and_then(|d| std::fs::read_dir(d).ok())
        .map_or(0, |entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
                .count()
        })
}

/// A server on the client's one `file://` root, for `mcp` without `--repo`.
pub(crate) fn mcp_from_roots(o: &Options) -> Result<McpServer, String> {
    let (policy, _) = load_policy(o)?;
    let read_only = o.read_only || policy["read_only"] == Value::Bool(true);
    let described = describe_tools(&runtime()?, policy).map_err(|e| e.to_string())?;
    let options = o.clone();
    let opener: Opener = Arc::new(move |dir: &Path| open_served(&options, dir, None, true));
    McpServer::from_roots(described, read_only, opener).map_err(|e| e.to_string())
}

/// The task store of one repository, with the threshold `args` names.
fn tasks(args: &McpArgs) -> Tasks {
    Tasks::new(args.task_after_ms.map_or(
        file_tools_mcp::server::tasks::DEFAULT_AFTER,
        Duration::from_millis,
    ))
}

pub(crate) fn mcp(o: &Options, args: &McpArgs) -> ExitCode {
    let served = match args.http {
        Some(bind) => mcp_http(o, args, bind),
        None => match &o.repo {
            Some(repo) => open_served(o, repo, None, true)
                .and_then(|s| McpServer::new(s).map_err(|e| e.to_string())),
            None => mcp_from_roots(o),
        }
        .map(|server| serve_stdio(server.with_tasks(tasks(args)))),
    };
    match served {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(e)) => {
            crate::errln(format_args!("file-tools: {e}"));
            ExitCode::from(1)
        }
        Err(e) => usage_error(&e),
    }
}

/// The HTTP server's set-up (errors are usage errors), and its run.
pub(crate) fn mcp_http(
    o: &Options,
    args: &McpArgs,
    bind: std::net::SocketAddr,
) -> Result<Result<(), String>, String> {
    use file_tools_mcp::http::{serve_http, HttpOptions, OpenError, Repositories};
    let metrics = Arc::new(file_tools_mcp::Metrics::new());
    let mut repos = Repositories::default();
    let mut named: Vec<(&str, PathBuf)> = Vec::new();
    if let Some(repo) = &o.repo {
        named.push(("", repo.clone()));
    }
    for s in &args.serve {
        let (name, dir) = s
            .split_once('=')
            .ok_or_else(|| format!("--serve {s}: expected NAME=DIR"))?;
        named.push((name, PathBuf::from(dir)));
    }
    for (name, dir) in named {
        let (options, metrics) = (o.clone(), metrics.clone());
        let default_session = o.session.clone();
        // One task store for the repository's sessions: its bounds hold however many
        // sessions come and go, and each session sees its own tasks only.
        let store = tasks(args);
        let key = repo_key(&dir)?;
        let opener: file_tools_mcp::http::Opener = Box::new(move |session: &str| {
            let mut o = options.clone();
            o.session = session.to_string();
            // The sessions of a repository share its search index: one folder beside their
            // directories (a name no session's directory can take: sessions have no '.').
            o.shared_index = o.state_dir.as_ref().map(|d| d.join(format!("{key}.index")));
            // One directory per repository and session under --state-dir, named as in the
            // user's state directory: repositories never share a baseline, and a session's
            // name reaches no other directory.
            o.state_dir = o
                .state_dir
                .as_ref()
                .map(|d| d.join(format!("{key}-{session}")));
            let place = state_dir(&o, &dir).map_err(OpenError::Failed)?;
            if !place.exists() && sessions_kept(&place, &key) >= MAX_SESSIONS {
                return Err(OpenError::TooMany);
            }
            // The session opened at start builds the index at once, for every session: those
            // a client opens later load it once it is saved (and scan meanwhile).
            let at_start = session == default_session;
            let s = open_served(&o, &dir, Some(&metrics), at_start).map_err(OpenError::Failed)?;
            McpServer::new(s)
                .map(|server| server.with_tasks(store.for_session(session)))
                .map_err(|e| OpenError::Failed(e.to_string()))
        });
        // The default session opens now, so that a repository that cannot be served stops
        // the server at start.
        let first = opener(&o.session).map_err(|e| e.to_string())?;
        let sessions = file_tools_mcp::http::Sessions::new(&o.session, first, opener);
        repos.add(name, sessions)?;
    }
    let token = match &args.http_token_file {
        Some(f) => Some(
            std::fs::read_to_string(f)
                .map_err(|e| format!("cannot read the token file {}: {e}", f.display()))?
                .trim()
                .to_string(),
        ),
        None => None,
    };
    let options = HttpOptions {
        bind,
        token,
        allowed_hosts: args.allowed_host.clone(),
        allowed_origins: args.allowed_origin.clone(),
    };
    file_tools_mcp::http::check(&options, &repos)?;
    Ok(serve_http(options, repos, Some(metrics)))
}
