//! `file-tools`: the command-line face of the host library.
//!
//! ```text
//! file-tools [--repo DIR] [--read-only] [--policy FILE] [--audit-log FILE] [--state-dir DIR] call TOOL 'JSON-ARGS'|-
//! file-tools --repo DIR [--session NAME] session reset
//! file-tools --repo DIR [--read-only] [--policy FILE] [--audit-log FILE] mcp
//! file-tools [--policy FILE] [--read-only] schema
//! file-tools compile OUT.cwasm
//! file-tools component [--standalone] OUT.wasm
//! ```
//! `call` prints one JSON object: `{"ok":true,"result":{...}}` and exits 0, or
//! `{"ok":false,"error":{...}}` and exits 1. Usage and set-up errors exit 2.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use file_tools_host::mcp::{serve_stdio, McpServer};
use file_tools_host::{describe_tools, policy_file, JsonLinesSink, Limits, Runtime, Session};
use serde_json::{json, Value};
use sha2::Digest as _;

const USAGE: &str = "usage:
  file-tools [--repo DIR] [--read-only] [--policy FILE] [--audit-log FILE] [--state-dir DIR]
             [--session NAME] call TOOL 'JSON-ARGS'
      (give - as JSON-ARGS to read the arguments from stdin; the session baseline, for
       diff_workspace and revert, is kept across calls in --state-dir, by default in the
       user's state directory per repository and --session NAME, default 'default')
  file-tools --repo DIR [--session NAME] session reset
      (forgets that session's baseline: diff_workspace starts from the tree as it is)
  file-tools --repo DIR [--read-only] [--policy FILE] [--audit-log FILE] [--state-dir DIR] mcp
      (serves every tool over MCP on stdin/stdout until the client disconnects)
  file-tools [--read-only] [--policy FILE] schema
  file-tools compile OUT.cwasm
  file-tools component [--standalone] OUT.wasm
      (writes the component; --standalone: the variant with WASI imports only, for
       `wasmtime run --dir REPO::/ --invoke ...`)
  file-tools [--audit-key KEY] audit verify FILE
                                  check an audit log's hash chain (exit 1 when broken); with
                                  --audit-key, also every line's and the head's mac
      (--audit-key KEY with --audit-log signs every line with the key in KEY, a file outside
       the repository made on first use, so that a log rewritten without it is found)
  file-tools audit stats FILE     calls per tool and outcome, p50/p99 durations, bytes

environment:
  XDG_STATE_HOME        the user's state directory (default ~/.local/state); sessions live
                        in its file-tools/ folder, keyed by the repository's canonical path
  FILE_TOOLS_CACHE_DIR  where compiled components are cached (default: ~/.cache/file-tools;
                        set it to 'off' to compile every time)";

#[derive(Debug, Default)]
struct Options {
    repo: Option<PathBuf>,
    read_only: bool,
    policy: Option<PathBuf>,
    audit_log: Option<PathBuf>,
    audit_key: Option<PathBuf>,
    state_dir: Option<PathBuf>,
    session: Option<String>,
    command: Vec<String>,
}

fn parse_options(args: Vec<String>) -> Result<Options, String> {
    let mut o = Options::default();
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        match a.as_str() {
            "--repo" => o.repo = Some(PathBuf::from(value("--repo")?)),
            "--policy" => o.policy = Some(PathBuf::from(value("--policy")?)),
            "--audit-log" => o.audit_log = Some(PathBuf::from(value("--audit-log")?)),
            "--audit-key" => o.audit_key = Some(PathBuf::from(value("--audit-key")?)),
            "--state-dir" => o.state_dir = Some(PathBuf::from(value("--state-dir")?)),
            "--session" => o.session = Some(value("--session")?),
            "--read-only" => o.read_only = true,
            "-h" | "--help" => return Err(String::new()),
            flag if flag.starts_with("--") => return Err(format!("unknown option {flag}")),
            _ => {
                o.command.push(a);
                o.command.extend(it.by_ref());
            }
        }
    }
    Ok(o)
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

fn usage_error(msg: &str) -> ExitCode {
    if !msg.is_empty() {
        eprintln!("file-tools: {msg}");
    }
    eprintln!("{USAGE}");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let opts = match parse_options(std::env::args().skip(1).collect()) {
        Ok(o) => o,
        Err(msg) => return usage_error(&msg),
    };
    let cmd: Vec<&str> = opts.command.iter().map(String::as_str).collect();
    match cmd.as_slice() {
        ["call", tool, args] => call(&opts, tool, args),
        ["schema"] => schema(&opts),
        ["component", out] => write_component(file_tools_host::runtime::GUEST_WASM, out),
        ["component", "--standalone", out] => {
            write_component(file_tools_host::runtime::STANDALONE_WASM, out)
        }
        ["component", "--wassette", out] => {
            write_component(&file_tools_host::runtime::wassette_component(), out)
        }
        ["mcp"] => mcp(&opts),
        ["session", "reset"] => session_reset(&opts),
        ["compile", out] => match Runtime::precompile(&PathBuf::from(out)) {
            Ok(()) => {
                println!("{}", json!({"ok": true, "result": {"path": out}}));
                ExitCode::SUCCESS
            }
            Err(e) => usage_error(&e.to_string()),
        },
        ["audit", "verify", file] => match verify_log(&opts, &PathBuf::from(file)) {
            Ok(lines) => {
                let keyed = opts.audit_key.is_some();
                println!(
                    "{}",
                    json!({"ok": true, "result": {"lines": lines, "keyed": keyed}})
                );
                ExitCode::SUCCESS
            }
            Err(e) => {
                println!(
                    "{}",
                    json!({"ok": false, "error": {"code": "AUDIT_CHAIN_BROKEN", "message": e.message, "line": e.line}})
                );
                ExitCode::from(1)
            }
        },
        ["audit", "stats", file] => match file_tools_host::audit_log::stats(&PathBuf::from(file)) {
            Ok(v) => {
                println!("{}", json!({"ok": true, "result": v}));
                ExitCode::SUCCESS
            }
            Err(e) => usage_error(&e.to_string()),
        },
        [] => usage_error("no command given"),
        _ => usage_error(&format!(
            "unknown or incomplete command: {}",
            opts.command.join(" ")
        )),
    }
}

fn write_component(bytes: &[u8], out: &str) -> ExitCode {
    match std::fs::write(out, bytes) {
        Ok(()) => {
            println!(
                "{}",
                json!({"ok": true, "result": {"path": out, "bytes": bytes.len()}})
            );
            ExitCode::SUCCESS
        }
        Err(e) => usage_error(&format!("cannot write {out}: {e}")),
    }
}

fn schema(opts: &Options) -> ExitCode {
    let result = load_policy(opts).and_then(|(policy, _)| {
        runtime().and_then(|rt| describe_tools(&rt, policy).map_err(|e| e.to_string()))
    });
    match result {
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

/// The session's state directory: `--state-dir`, else one per repository and session
/// name in the user's state directory (outside any repository).
fn state_dir(opts: &Options, repo: &Path) -> Result<PathBuf, String> {
    if let Some(d) = &opts.state_dir {
        return Ok(d.clone());
    }
    let name = opts.session.as_deref().unwrap_or("default");
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
    let base = std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))
        .ok_or("no state directory: set XDG_STATE_HOME or HOME, or give --state-dir")?;
    let canonical = std::fs::canonicalize(repo)
        .map_err(|e| format!("cannot open the repository {}: {e}", repo.display()))?;
    let digest = sha2::Sha256::digest(canonical.as_os_str().as_encoded_bytes());
    let key: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    Ok(base.join("file-tools").join(format!("{key}-{name}")))
}

fn open_session(opts: &Options, repo: &PathBuf) -> Result<Session, String> {
    let (policy, limits) = load_policy(opts)?;
    let rt = runtime()?;
    let mut builder = Session::builder(&rt)
        .repo(repo)
        .writable(!opts.read_only)
        .policy(policy)
        .limits(limits);
    if !opts.read_only {
        builder = builder.state_dir(state_dir(opts, repo)?);
    }
    if let Some(p) = &opts.policy {
        builder = builder.host_file(p);
    }
    if let Some(log) = &opts.audit_log {
        let repo_dir = std::fs::canonicalize(repo)
            .map_err(|e| format!("cannot open the repository {}: {e}", repo.display()))?;
        if file_tools_host::session::inside(&repo_dir, log).is_some() {
            return Err(format!(
                "the audit log {} lies inside the repository {}: a tool could rewrite it. Put it outside the repository",
                log.display(),
                repo.display()
            ));
        }
        let open_err =
            |e: std::io::Error| format!("cannot open the audit log {}: {e}", log.display());
        let sink = match &opts.audit_key {
            Some(key_file) => {
                if file_tools_host::session::inside(&repo_dir, key_file).is_some() {
                    return Err(format!(
                        "the audit key {} lies inside the repository {}: keep it outside",
                        key_file.display(),
                        repo.display()
                    ));
                }
                let key = file_tools_host::audit_key::AuditKey::load_or_create(key_file).map_err(
                    |e| {
                        format!(
                            "cannot read or create the audit key {}: {e}",
                            key_file.display()
                        )
                    },
                )?;
                JsonLinesSink::open_keyed(log, key).map_err(open_err)?
            }
            None => JsonLinesSink::open(log).map_err(open_err)?,
        };
        builder = builder.audit_sink(Arc::new(sink));
    }
    builder.build().map_err(|e| e.to_string())
}

/// Checks a log's chain, and its macs when `--audit-key` names the key.
fn verify_log(opts: &Options, log: &Path) -> Result<u64, file_tools_host::audit_log::VerifyError> {
    let Some(key_file) = &opts.audit_key else {
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

fn session_reset(opts: &Options) -> ExitCode {
    let Some(repo) = &opts.repo else {
        return usage_error("session reset needs --repo DIR");
    };
    let dir = match state_dir(opts, repo) {
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
    println!(
        "{}",
        json!({"ok": true, "result": {"state_dir": dir, "removed": existed}})
    );
    ExitCode::SUCCESS
}

fn mcp(opts: &Options) -> ExitCode {
    let Some(repo) = &opts.repo else {
        return usage_error("mcp needs --repo DIR");
    };
    let server =
        match open_session(opts, repo).and_then(|s| McpServer::new(s).map_err(|e| e.to_string())) {
            Ok(s) => s,
            Err(e) => return usage_error(&e),
        };
    match serve_stdio(server) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("file-tools: {e}");
            ExitCode::from(1)
        }
    }
}

fn call(opts: &Options, tool: &str, args: &str) -> ExitCode {
    let Some(repo) = &opts.repo else {
        return usage_error("call needs --repo DIR");
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
    let mut session = match open_session(opts, repo) {
        Ok(s) => s,
        Err(e) => return usage_error(&e),
    };
    match session.call(tool, &args) {
        Ok(result) => {
            println!("{}", json!({"ok": true, "result": result}));
            ExitCode::SUCCESS
        }
        Err(e) => {
            println!("{}", json!({"ok": false, "error": e.to_json()}));
            ExitCode::from(1)
        }
    }
}
