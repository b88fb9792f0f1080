//! `file-tools`: the command-line face of the host library.
//!
//! `file-tools --help` lists the commands, `file-tools help COMMAND` (or `COMMAND --help`)
//! explains one, `file-tools tools` lists the tools and `file-tools call TOOL --help` shows
//! a tool's argument schema. `call` prints one JSON object, `{"ok":true,"result":{...}}`
//! with exit 0 or `{"ok":false,"error":{...}}` with exit 1, unless `--format text` (the
//! default when stdout is a terminal) asks for what a person reads. Usage and set-up errors
//! exit 2.

mod cli_text;

use cli_text as text;

use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::{CommandFactory, Parser, Subcommand, ValueEnum};
use file_tools_host::mcp::roots::Opener;
use file_tools_host::mcp::{serve_stdio, McpServer};
use file_tools_host::{describe_tools, policy_file, JsonLinesSink, Limits, Runtime, Session};
use serde_json::{json, Value};
use sha2::Digest as _;

const ENVIRONMENT: &str = "Environment:
  XDG_STATE_HOME        the user's state directory (default ~/.local/state); sessions live in
                        its file-tools/ folder, keyed by the repository's canonical path
  FILE_TOOLS_CACHE_DIR  where compiled components are cached (default ~/.cache/file-tools;
                        'off' compiles every time)

Exit codes: 0 ok, 1 a tool's error (or a broken audit chain), 2 usage or set-up error.";

/// File tools for AI coding agents, run in a WebAssembly sandbox over one repository.
#[derive(Debug, Parser)]
#[command(name = "file-tools", version, after_help = ENVIRONMENT, propagate_version = true)]
struct Cli {
    #[command(flatten)]
    opts: Options,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Clone, clap::Args)]
struct Options {
    /// The repository the tools work in.
    #[arg(long, global = true, value_name = "DIR")]
    repo: Option<PathBuf>,
    /// Offer and allow no change to any file.
    #[arg(long, global = true)]
    read_only: bool,
    /// A policy file (TOML); default: the built-in policy.
    #[arg(long, global = true, value_name = "FILE")]
    policy: Option<PathBuf>,
    /// Append an audit event per call to this JSON-lines log (outside the repository).
    #[arg(long, global = true, value_name = "FILE")]
    audit_log: Option<PathBuf>,
    /// Sign the audit log with the key in this file (made on first use; outside the
    /// repository); with `audit verify`, check the signatures too.
    #[arg(long, global = true, value_name = "KEY")]
    audit_key: Option<PathBuf>,
    /// Where the session baseline (for diff_workspace and revert) lives; default: the
    /// user's state directory, per repository and --session. Over HTTP, it holds a
    /// directory per session.
    #[arg(long, global = true, value_name = "DIR")]
    state_dir: Option<PathBuf>,
    /// The session's name: calls with the same name share a baseline.
    #[arg(long, global = true, value_name = "NAME", default_value = "default")]
    session: String,
    /// Output: json (what agents parse; the default when stdout is not a terminal) or text
    /// (search hits as path:line:text, diffs as unified diffs, errors as one line).
    #[arg(long, global = true, value_enum)]
    format: Option<Format>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Json,
    Text,
}

/// How the MCP server is reached.
#[derive(Debug, clap::Args)]
struct McpArgs {
    /// Serve over Streamable HTTP (stateless, many clients) on this address, such as
    /// 127.0.0.1:8080, instead of stdin/stdout; --repo is served at /mcp.
    #[arg(long, value_name = "ADDR")]
    http: Option<std::net::SocketAddr>,
    /// One more repository served over HTTP at /mcp/NAME (repeatable); clients never
    /// choose a directory themselves.
    #[arg(long, value_name = "NAME=DIR", requires = "http")]
    serve: Vec<String>,
    /// A file holding the bearer token HTTP requests must carry (required off loopback;
    /// keep it outside every repository).
    #[arg(long, value_name = "FILE", requires = "http")]
    http_token_file: Option<PathBuf>,
    /// A Host header value accepted over HTTP (repeatable; default: loopback names).
    #[arg(long, value_name = "HOST", requires = "http")]
    allowed_host: Vec<String>,
    /// A browser Origin accepted over HTTP, as scheme://host:port (repeatable; default:
    /// none, so requests from web pages are refused).
    #[arg(long, value_name = "ORIGIN", requires = "http")]
    allowed_origin: Vec<String>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one tool with JSON arguments (`-` reads them from stdin); `call TOOL --help`
    /// shows the tool's argument schema.
    #[command(disable_help_flag = true)]
    Call {
        /// The tool's name (see `file-tools tools`).
        #[arg(required_unless_present = "help")]
        tool: Option<String>,
        /// Its arguments as one JSON object (`'{}'` for none), or `-` for stdin.
        #[arg(allow_hyphen_values = true, required_unless_present = "help")]
        args: Option<String>,
        /// Show the tool's description and argument schema.
        #[arg(short, long)]
        help: bool,
    },
    /// One line per tool: its name and what it is for.
    Tools,
    /// Every tool's name, description, JSON Schema and annotations, as JSON.
    Schema,
    /// Serve every tool over MCP: on stdin/stdout until the client disconnects (without
    /// --repo, the repository is the client's one file:// root), or with --http over
    /// Streamable HTTP until stopped.
    Mcp(McpArgs),
    /// The session baseline.
    #[command(subcommand)]
    Session(SessionCommand),
    /// Write the precompiled component for this engine.
    Compile {
        /// Where to write it.
        out: PathBuf,
    },
    /// Write the component itself, for other hosts.
    Component {
        /// The variant with WASI imports only (for `wasmtime run --dir REPO::/ --invoke`).
        #[arg(long, conflicts_with = "wassette")]
        standalone: bool,
        /// The standalone variant with the tools' descriptions embedded where Wassette
        /// reads them (its `package-docs` section; other tools, jco among them, refuse a
        /// component that carries one).
        #[arg(long)]
        wassette: bool,
        /// Where to write it.
        out: PathBuf,
    },
    /// Audit logs.
    #[command(subcommand)]
    Audit(AuditCommand),
    /// The calls an audit log records as metrics, in the Prometheus text format.
    Metrics { file: PathBuf },
    /// Print a completion script for a shell.
    Completions { shell: clap_complete::Shell },
}

#[derive(Debug, Subcommand)]
enum SessionCommand {
    /// Forget the session's baseline: diff_workspace starts from the tree as it is.
    Reset,
}

#[derive(Debug, Subcommand)]
enum AuditCommand {
    /// Check a log's hash chain (exit 1 when broken) and, with --audit-key, its signatures.
    Verify { file: PathBuf },
    /// Calls per tool and outcome, p50/p99 durations, bytes.
    Stats { file: PathBuf },
}

/// A usage or set-up error: one line on stderr, exit 2.
fn usage_error(msg: &str) -> ExitCode {
    eprintln!("file-tools: {msg}");
    eprintln!("(file-tools --help lists the commands and options)");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            // --help and --version print and exit 0; real usage errors exit 2.
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    let format = cli
        .opts
        .format
        .unwrap_or(if std::io::stdout().is_terminal() {
            Format::Text
        } else {
            Format::Json
        });
    let o = &cli.opts;
    match &cli.command {
        Command::Call {
            tool: None,
            help: true,
            ..
        } => {
            let mut cmd = Cli::command();
            cmd.build();
            if let Some(c) = cmd.find_subcommand_mut("call") {
                let _ = c.print_help();
            }
            ExitCode::SUCCESS
        }
        Command::Call {
            tool: Some(tool),
            help: true,
            ..
        } => tool_help(o, tool),
        Command::Call {
            tool: Some(tool),
            args,
            ..
        } => call(o, format, tool, args.as_deref().unwrap_or("{}")),
        Command::Call { tool: None, .. } => usage_error("call needs a TOOL"),
        Command::Tools => tools(o),
        Command::Schema => schema(o),
        Command::Mcp(args) => mcp(o, args),
        Command::Session(SessionCommand::Reset) => session_reset(o),
        Command::Compile { out } => match Runtime::precompile(out) {
            Ok(()) => ok(json!({ "path": out })),
            Err(e) => usage_error(&e.to_string()),
        },
        Command::Component {
            standalone,
            wassette,
            out,
        } => {
            if *wassette {
                write_component(&file_tools_host::runtime::wassette_component(), out)
            } else if *standalone {
                write_component(file_tools_host::runtime::STANDALONE_WASM, out)
            } else {
                write_component(file_tools_host::runtime::GUEST_WASM, out)
            }
        }
        Command::Audit(AuditCommand::Verify { file }) => match verify_log(o, file) {
            Ok(lines) => ok(json!({"lines": lines, "keyed": o.audit_key.is_some()})),
            Err(e) => {
                println!(
                    "{}",
                    json!({"ok": false, "error": {"code": "AUDIT_CHAIN_BROKEN", "message": e.message, "line": e.line}})
                );
                ExitCode::from(1)
            }
        },
        Command::Audit(AuditCommand::Stats { file }) => {
            match file_tools_host::audit_log::stats(file) {
                Ok(v) => ok(v),
                Err(e) => usage_error(&e.to_string()),
            }
        }
        Command::Metrics { file } => match file_tools_host::audit_log::metrics(file) {
            Ok(m) => {
                print!("{}", m.encode());
                ExitCode::SUCCESS
            }
            Err(e) => usage_error(&e.message),
        },
        Command::Completions { shell } => {
            clap_complete::generate(
                *shell,
                &mut Cli::command(),
                "file-tools",
                &mut std::io::stdout(),
            );
            ExitCode::SUCCESS
        }
    }
}

/// Prints `{"ok":true,"result":...}`.
fn ok(result: Value) -> ExitCode {
    println!("{}", json!({"ok": true, "result": result}));
    ExitCode::SUCCESS
}

fn runtime() -> Result<Runtime, String> {
    let mut b = Runtime::builder();
    let dir = match std::env::var_os("FILE_TOOLS_CACHE_DIR") {
        Some(d) if d == "off" => None,
        Some(d) => Some(PathBuf::from(d)),
        None => std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .map(|d| d.join("file-tools")),
    };
    if let Some(d) = dir {
        b = b.cache_dir(d);
    }
    b.build().map_err(|e| e.to_string())
}

fn load_policy(o: &Options) -> Result<(Value, Limits), String> {
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

fn write_component(bytes: &[u8], out: &Path) -> ExitCode {
    match std::fs::write(out, bytes) {
        Ok(()) => ok(json!({"path": out, "bytes": bytes.len()})),
        Err(e) => usage_error(&format!("cannot write {}: {e}", out.display())),
    }
}

/// Every tool offered under the options' policy.
fn described(o: &Options) -> Result<Vec<Value>, String> {
    let (policy, _) = load_policy(o)?;
    let rt = runtime()?;
    let tools = describe_tools(&rt, policy).map_err(|e| e.to_string())?;
    Ok(tools.as_array().cloned().unwrap_or_default())
}

fn schema(o: &Options) -> ExitCode {
    match described(o) {
        Ok(tools) => {
            println!(
                "{}",
                serde_json::to_string_pretty(&tools).unwrap_or_default()
            );
            ExitCode::SUCCESS
        }
        Err(e) => usage_error(&e),
    }
}

fn tools(o: &Options) -> ExitCode {
    match described(o) {
        Ok(tools) => {
            for t in &tools {
                println!("{}", text::tool_line(t));
            }
            ExitCode::SUCCESS
        }
        Err(e) => usage_error(&e),
    }
}

fn tool_help(o: &Options, name: &str) -> ExitCode {
    let tools = match described(o) {
        Ok(t) => t,
        Err(e) => return usage_error(&e),
    };
    match tools.iter().find(|t| t["name"] == name) {
        Some(t) => {
            print!("{}", text::tool_help(t));
            ExitCode::SUCCESS
        }
        None => usage_error(&format!(
            "no tool '{name}' under this policy (file-tools tools lists them)"
        )),
    }
}

/// The session's state directory: `--state-dir`, else one per repository and session
/// name in the user's state directory (outside any repository).
fn state_dir(o: &Options, repo: &Path) -> Result<PathBuf, String> {
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

/// A short key of the repository's canonical path, which names its state directories.
fn repo_key(repo: &Path) -> Result<String, String> {
    let canonical = std::fs::canonicalize(repo)
        .map_err(|e| format!("cannot open the repository {}: {e}", repo.display()))?;
    let digest = sha2::Sha256::digest(canonical.as_os_str().as_encoded_bytes());
    Ok(digest[..8].iter().map(|b| format!("{b:02x}")).collect())
}

/// The user's state directory for file-tools (`$XDG_STATE_HOME/file-tools`).
fn state_home() -> Result<PathBuf, String> {
    std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))
        .map(|d| d.join("file-tools"))
        .ok_or_else(|| "no state directory: set XDG_STATE_HOME or HOME, or give --state-dir".into())
}

/// The key that signs continuation cursors, kept in the user's state directory (readable
/// by its owner only), so that one call's `next_cursor` is taken by the next call.
fn cursor_key() -> Result<[u8; 32], String> {
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

fn need_repo<'a>(o: &'a Options, what: &str) -> Result<&'a PathBuf, String> {
    o.repo
        .as_ref()
        .ok_or_else(|| format!("{what} needs --repo DIR"))
}

fn open_session(o: &Options, repo: &Path) -> Result<Session, String> {
    open_session_counted(o, repo, None)
}

/// `open_session`, counting every call in `metrics` when given.
fn open_session_counted(
    o: &Options,
    repo: &Path,
    metrics: Option<&Arc<file_tools_host::Metrics>>,
) -> Result<Session, String> {
    let (policy, limits) = load_policy(o)?;
    let rt = runtime()?;
    let mut builder = Session::builder(&rt)
        .repo(repo)
        .writable(!o.read_only)
        .policy(policy)
        .limits(limits)
        .cursor_key(cursor_key()?)
        // Read-only sessions too: `changes_since` tokens must outlive this process.
        .state_dir(state_dir(o, repo)?);
    if let Some(m) = metrics {
        builder = builder.metrics(m.clone());
    }
    if let Some(p) = &o.policy {
        builder = builder.host_file(p);
    }
    if let Some(log) = &o.audit_log {
        builder = builder.audit_sink(audit_sink(o, repo, log)?);
    }
    builder.build().map_err(|e| e.to_string())
}

/// The audit log's sink, refused inside the repository, keyed when `--audit-key` says so.
fn audit_sink(
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

/// Checks a log's chain, and its macs when `--audit-key` names the key.
fn verify_log(o: &Options, log: &Path) -> Result<u64, file_tools_host::audit_log::VerifyError> {
    let Some(key_file) = &o.audit_key else {
        return file_tools_host::audit_log::verify(log);
    };
    let key = file_tools_host::audit_key::AuditKey::load(key_file).map_err(|e| {
        file_tools_host::audit_log::VerifyError {
            line: 0,
            message: format!("cannot read the audit key {}: {e}", key_file.display()),
        }
    })?;
    file_tools_host::audit_key::verify_keyed(log, &key)
}

fn session_reset(o: &Options) -> ExitCode {
    let dir = match need_repo(o, "session reset").and_then(|repo| state_dir(o, repo)) {
        Ok(d) => d,
        Err(e) => return usage_error(&e),
    };
    let existed = dir.exists();
    if existed {
        if let Err(e) = std::fs::remove_dir_all(&dir) {
            println!(
                "{}",
                json!({"ok": false, "error": {"code": "IO_ERROR", "message": format!("cannot remove {}: {e}", dir.display())}})
            );
            return ExitCode::from(1);
        }
    }
    ok(json!({"state_dir": dir, "removed": existed}))
}

/// A server on the client's one `file://` root, for `mcp` without `--repo`.
fn mcp_from_roots(o: &Options) -> Result<McpServer, String> {
    let (policy, _) = load_policy(o)?;
    let read_only = o.read_only || policy["read_only"] == Value::Bool(true);
    let described = describe_tools(&runtime()?, policy).map_err(|e| e.to_string())?;
    let options = o.clone();
    let opener: Opener = Arc::new(move |dir: &Path| open_session(&options, &dir.to_path_buf()));
    McpServer::from_roots(described, read_only, opener).map_err(|e| e.to_string())
}

fn mcp(o: &Options, args: &McpArgs) -> ExitCode {
    let served = match args.http {
        Some(bind) => mcp_http(o, args, bind),
        None => match &o.repo {
            Some(repo) => {
                open_session(o, repo).and_then(|s| McpServer::new(s).map_err(|e| e.to_string()))
            }
            None => mcp_from_roots(o),
        }
        .map(serve_stdio),
    };
    match served {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(e)) => {
            eprintln!("file-tools: {e}");
            ExitCode::from(1)
        }
        Err(e) => usage_error(&e),
    }
}

/// The HTTP server's set-up (errors are usage errors), and its run.
fn mcp_http(
    o: &Options,
    args: &McpArgs,
    bind: std::net::SocketAddr,
) -> Result<Result<(), String>, String> {
    use file_tools_host::mcp_http::{serve_http, HttpOptions, Repositories};
    let metrics = Arc::new(file_tools_host::Metrics::new());
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
        let key = repo_key(&dir)?;
        let opener: file_tools_host::mcp_http::Opener = Box::new(move |session: &str| {
            let mut o = options.clone();
            o.session = session.to_string();
            // One directory per repository and session under --state-dir, named as in the
            // user's state directory: repositories never share a baseline, and a session's
            // name reaches no other directory.
            o.state_dir = o
                .state_dir
                .as_ref()
                .map(|d| d.join(format!("{key}-{session}")));
            let s = open_session_counted(&o, &dir, Some(&metrics))?;
            McpServer::new(s).map_err(|e| e.to_string())
        });
        // The default session opens now, so that a repository that cannot be served stops
        // the server at start.
        let first = opener(&o.session)?;
        let sessions = file_tools_host::mcp_http::Sessions::new(&o.session, first, opener);
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
    file_tools_host::mcp_http::check(&options, &repos)?;
    Ok(serve_http(options, repos, Some(metrics)))
}

fn call(o: &Options, format: Format, tool: &str, args: &str) -> ExitCode {
    let repo = match need_repo(o, "call") {
        Ok(r) => r,
        Err(e) => return usage_error(&e),
    };
    let args = if args == "-" {
        let mut s = String::new();
        if let Err(e) = std::io::stdin().read_to_string(&mut s) {
            return usage_error(&format!("cannot read the arguments from stdin: {e}"));
        }
        s
    } else {
        args.to_string()
    };
    let mut session = match open_session(o, repo) {
        Ok(s) => s,
        Err(e) => return usage_error(&e),
    };
    let outcome = session.call(tool, &args);
    match (format, outcome) {
        (Format::Json, Ok(result)) => ok(result),
        (Format::Json, Err(e)) => {
            println!("{}", json!({"ok": false, "error": e.to_json()}));
            ExitCode::from(1)
        }
        (Format::Text, Ok(result)) => {
            let t = text::result(tool, &result);
            print!("{}", t.out);
            if let Some(note) = t.note {
                eprintln!("{note}");
            }
            ExitCode::SUCCESS
        }
        (Format::Text, Err(e)) => {
            eprintln!("{}", text::error(&e.to_json()));
            ExitCode::from(1)
        }
    }
}
