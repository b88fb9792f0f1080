//! The CLI's `mcp` command: the MCP server over stdio or HTTP (`serve.rs`). The server is
//! the cargo feature `mcp`, on by default; a binary built without it (as `scripts/demo.sh`
//! builds one, to compile less) keeps the command and says what it lacks.

#[cfg(feature = "mcp")]
mod serve;

use std::path::PathBuf;
use std::process::ExitCode;

use crate::setup::Options;

/// How the MCP server is reached.
#[derive(Debug, clap::Args)]
pub(crate) struct McpArgs {
    /// Serve over Streamable HTTP (stateless, many clients) on this address, such as
    /// 127.0.0.1:8080, instead of stdin/stdout; --repo is served at /mcp.
    #[arg(long, value_name = "ADDR")]
    pub(crate) http: Option<std::net::SocketAddr>,
    /// One more repository served over HTTP at /mcp/NAME (repeatable); clients never
    /// choose a directory themselves.
    #[arg(long, value_name = "NAME=DIR", requires = "http")]
    pub(crate) serve: Vec<String>,
    /// A file holding the bearer token HTTP requests must carry (required off loopback;
    /// keep it outside every repository).
    #[arg(long, value_name = "FILE", requires = "http")]
    pub(crate) http_token_file: Option<PathBuf>,
    /// A Host header value accepted over HTTP (repeatable; default: loopback names).
    #[arg(long, value_name = "HOST", requires = "http")]
    pub(crate) allowed_host: Vec<String>,
    /// A browser Origin accepted over HTTP, as scheme://host:port (repeatable; default:
    /// none, so requests from web pages other than the server's own origin are refused).
    #[arg(long, value_name = "ORIGIN", requires = "http")]
    pub(crate) allowed_origin: Vec<String>,
    /// For a 2026-07-28 client that declares the tasks extension: a call still running
    /// after this many milliseconds answers with a task the client polls (default 1000;
    /// 0: every call of such a client).
    #[arg(long, value_name = "MS")]
    pub(crate) task_after_ms: Option<u64>,
}

/// Runs the `mcp` command.
#[cfg(feature = "mcp")]
pub(crate) fn mcp(o: &Options, args: &McpArgs) -> ExitCode {
    serve::mcp(o, args)
}

/// Runs the `mcp` command in a binary built without the server: a usage error that says so.
#[cfg(not(feature = "mcp"))]
pub(crate) fn mcp(_: &Options, _: &McpArgs) -> ExitCode {
    crate::setup::usage_error(WITHOUT_MCP)
}

/// What a binary built without the `mcp` feature answers to the commands that need it.
#[cfg(not(feature = "mcp"))]
pub(crate) const WITHOUT_MCP: &str = "this file-tools was built without its MCP server \
     (the cargo feature `mcp`, on by default): build it with that feature";
