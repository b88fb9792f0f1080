#![deny(missing_docs)]
//! The MCP server of file-tools over the host library (`file-tools-host`): one handler
//! ([`server::McpServer`]) that offers a session's tools, resources and approvals, served
//! over stdio ([`stdio`]) or Streamable HTTP ([`http`]) (each translating the 2025-11-25
//! form of tasks, [`wire`]), and the call metrics ([`metrics`])
//! the HTTP server exposes at `/metrics`.

pub mod http;
pub mod metrics;
pub mod server;
pub mod stdio;
pub mod wire;

pub use metrics::Metrics;
pub use server::tasks::Tasks;
pub use server::McpServer;
pub use stdio::serve_stdio;
