//! `file-tools`: the command-line face of the host library.
//!
//! `file-tools --help` lists the commands, `file-tools help COMMAND` (or `COMMAND --help`)
//! explains one, `file-tools tools` lists the tools and `file-tools call TOOL --help` shows
//! a tool's argument schema. `call` prints one JSON object, `{"ok":true,"result":{...}}`
//! with exit 0 or `{"ok":false,"error":{...}}` with exit 1, unless `--format text` (the
//! default when stdout is a terminal) asks for what a person reads. Usage and set-up errors
//! exit 2.

mod index;
mod mcp;
mod output;
mod policy_file;
mod setup;
mod text;

use mcp::{mcp, McpArgs};
use output::{errln, exit, out, outln};
use setup::{
    load_policy, need_repo, open_session, runtime, state_dir, usage_error, Format, Options,
};

use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};
use file_tools_host::{describe_tools, Runtime};
use serde_json::{json, Value};

const ENVIRONMENT: &str = "Environment:
  XDG_STATE_HOME        the user's state directory (default ~/.local/state); sessions live in
                        its file-tools/ folder, keyed by the repository's canonical path
  FILE_TOOLS_CACHE_DIR  where compiled components, and the tools they offer under each
                        policy, are cached (default ~/.cache/file-tools; 'off' compiles
                        every time)

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
    /// The search index in the session's state directory (on where the policy's
    /// `limits.max_index_bytes` is above 0).
    #[command(subcommand)]
    Index(index::IndexCommand),
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
    /// The calls an audit log records as metrics, in the Prometheus text format. A tool
    /// name the session (under --policy, --read-only) does not offer counts as `unknown`, and
    /// so does an error code the project does not define (a log may have been edited).
    Metrics { file: PathBuf },
    /// Print a completion script for a shell.
    Completions { shell: clap_complete::Shell },
}

#[derive(Debug, Subcommand)]
enum SessionCommand {
    /// Forget the session's baseline: diff_workspace starts from the tree as it is. Only the
    /// files file-tools made in the state directory are removed; any other is kept and listed.
    Reset,
}

#[derive(Debug, Subcommand)]
enum AuditCommand {
    /// Check a log's hash chain (exit 1 when broken) and, with --audit-key, its signatures.
    Verify { file: PathBuf },
    /// Calls per tool and outcome, p50/p99 durations, bytes.
    Stats { file: PathBuf },
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
        Command::Index(cmd) => index::index(o, cmd),
        Command::Compile { out } => match Runtime::precompile(out) {
            Ok(()) => ok(json!({ "path": out })),
            Err(e) => usage_error(&e.to_string()),
        },
        Command::Component {
            standalone,
            wassette,
            out,
        } => {
            if *wassette || *standalone {
                standalone_component(*wassette, out)
            } else {
                write_component(file_tools_host::runtime::GUEST_WASM, out)
            }
        }
        Command::Audit(AuditCommand::Verify { file }) => match verify_log(o, file) {
            Ok(lines) => ok(json!({"lines": lines, "keyed": o.audit_key.is_some()})),
            Err(e) => {
                failed(json!({"code": "AUDIT_CHAIN_BROKEN", "message": e.message, "line": e.line}))
            }
        },
        Command::Audit(AuditCommand::Stats { file }) => {
            match file_tools_host::audit_log::stats(file) {
                Ok(v) => ok(v),
                Err(e) => usage_error(&e.to_string()),
            }
        }
        Command::Metrics { file } => metrics(o, file),
        Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(*shell, &mut Cli::command(), "file-tools", &mut script);
            exit(out(String::from_utf8_lossy(&script)), ExitCode::SUCCESS)
        }
    }
}

/// Prints the calls the audit log `file` records as metrics (the `metrics` command).
#[cfg(feature = "mcp")]
fn metrics(o: &Options, file: &Path) -> ExitCode {
    let counted = offered(o).and_then(|names| {
        let records =
            file_tools_host::audit_log::call_records(file, &names).map_err(|e| e.message)?;
        let metrics = file_tools_mcp::Metrics::new();
        records.iter().for_each(|r| metrics.count(r));
        Ok(metrics)
    });
    match counted {
        Ok(m) => exit(out(m.encode()), ExitCode::SUCCESS),
        Err(e) => usage_error(&e),
    }
}

/// The `metrics` command in a binary built without the MCP server, whose metrics it prints.
#[cfg(not(feature = "mcp"))]
fn metrics(_: &Options, _: &Path) -> ExitCode {
    usage_error(mcp::WITHOUT_MCP)
}

/// Prints `{"ok":true,"result":...}`.
fn ok(result: Value) -> ExitCode {
    exit(
        outln(json!({"ok": true, "result": result})),
        ExitCode::SUCCESS,
    )
}

/// Prints `{"ok":false,"error":...}`; the command failed (exit 1).
fn failed(error: Value) -> ExitCode {
    outln(json!({"ok": false, "error": error}));
    ExitCode::from(1)
}

/// Writes the standalone component, or its Wassette form.
#[cfg(feature = "standalone")]
fn standalone_component(wassette: bool, out: &Path) -> ExitCode {
    if wassette {
        write_component(&file_tools_host::runtime::wassette_component(), out)
    } else {
        write_component(file_tools_host::runtime::STANDALONE_WASM, out)
    }
}

/// The standalone variants in a binary built without them: a usage error that says so.
#[cfg(not(feature = "standalone"))]
fn standalone_component(_: bool, _: &Path) -> ExitCode {
    usage_error(
        "this file-tools was built without the standalone component (the cargo feature \
         `standalone`, on by default): build it with that feature",
    )
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

/// The names of the tools offered under the options' policy.
#[cfg(feature = "mcp")]
fn offered(o: &Options) -> Result<std::collections::HashSet<String>, String> {
    Ok(described(o)?
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect())
}

fn schema(o: &Options) -> ExitCode {
    match described(o) {
        Ok(tools) => exit(
            outln(serde_json::to_string_pretty(&tools).unwrap_or_default()),
            ExitCode::SUCCESS,
        ),
        Err(e) => usage_error(&e),
    }
}

fn tools(o: &Options) -> ExitCode {
    match described(o) {
        Ok(tools) => {
            // All lines, or up to the first that could not be written.
            let written = tools.iter().all(|t| outln(text::tool_line(t)));
            exit(written, ExitCode::SUCCESS)
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
        Some(t) => exit(out(text::tool_help(t)), ExitCode::SUCCESS),
        None => usage_error(&format!(
            "no tool '{name}' under this policy (file-tools tools lists them)"
        )),
    }
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
    // Only what file-tools made goes: a --state-dir may hold files of the user's own.
    match file_tools_host::session::reset_state_dir(&dir) {
        Ok(r) => ok(json!({"state_dir": dir, "removed": r.existed, "kept": r.kept})),
        Err(e) => failed(
            json!({"code": "IO_ERROR", "message": format!("cannot reset {}: {e}", dir.display())}),
        ),
    }
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
        (Format::Json, Err(e)) => failed(e.to_json()),
        (Format::Text, Ok(result)) => {
            let t = text::result(tool, &result);
            let written = out(t.out);
            if let Some(note) = t.note {
                errln(note);
            }
            exit(written, ExitCode::SUCCESS)
        }
        (Format::Text, Err(e)) => {
            errln(text::error(&e.to_json()));
            ExitCode::from(1)
        }
    }
}
