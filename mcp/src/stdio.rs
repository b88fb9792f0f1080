//! The MCP server over stdin and stdout: one client, one session, until the client closes
//! the connection.

use rmcp::ServiceExt;

use crate::server::McpServer;
use crate::wire::lines;

/// Serves `server` on stdin/stdout until the client closes the connection.
///
/// # Errors
/// An I/O or protocol failure of the transport, as text.
pub fn serve_stdio(server: McpServer) -> Result<(), String> {
    let server = server.with_subscriptions();
    let subscriptions = server.subscriptions.clone();
    // Two workers: a request that must block before it answers (a subscriptions/listen
    // stream's read checks) leaves the other to serve the connection.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    rt.block_on(async move {
        // Each direction passes the translation of the 2025-11-25 form of tasks.
        let running = if both_pipes() {
            // Read and written on the runtime's reactor, not handed to a blocking thread
            // each time (rmcp reopens the two pipes for that, on descriptors of its own).
            let (read, write) = rmcp::transport::stdio_pipes();
            server.serve(lines::pair(read, write)).await
        } else {
            let (read, write) = rmcp::transport::stdio();
            server.serve(lines::pair(read, write)).await
        }
        .map_err(|e| format!("MCP handshake failed: {e}"))?;
        let stopped = running.waiting().await;
        // Clones of the server may outlive the connection: its watch must not.
        if let Some(s) = subscriptions {
            s.close();
        }
        stopped.map_err(|e| format!("MCP server stopped: {e}"))?;
        Ok(())
    })
}

/// Whether stdin and stdout are both pipes, as MCP clients start a server. Anything else
/// (a terminal, a socket, a file) is served through blocking handles and never reopened:
/// reopening a terminal could make it the process's controlling one.
#[cfg(unix)]
fn both_pipes() -> bool {
    use std::os::fd::{AsFd, BorrowedFd};
    use std::os::unix::fs::FileTypeExt;
    let is_pipe = |fd: BorrowedFd<'_>| {
        fd.try_clone_to_owned()
            .map(std::fs::File::from)
            .and_then(|f| f.metadata())
            .is_ok_and(|m| m.file_type().is_fifo())
    };
    is_pipe(std::io::stdin().as_fd()) && is_pipe(std::io::stdout().as_fd())
}

#[cfg(not(unix))]
fn both_pipes() -> bool {
    false
}
