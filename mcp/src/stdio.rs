//! The MCP server over stdin and stdout: one client, one session, until the client closes
//! the connection.

use rmcp::ServiceExt;

use crate::server::McpServer;

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
        let running = server
            .serve(rmcp::transport::stdio_pipes())
            .await
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
