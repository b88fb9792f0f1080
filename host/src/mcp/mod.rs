//! An MCP server over stdio that offers every tool of one [`Session`].
//!
//! The tool list (names, titles, descriptions, input and output schemas, annotations)
//! comes from the component's own `describe` (see [`tools`]). In a read-only session
//! `describe` leaves out the mutation tools, so the server does not offer them at all.
//!
//! A tool that fails answers with a normal tool result marked `isError`, whose structured
//! content is the error object (`code`, `message`, `path`, ...): the model sees the code
//! and can act on it. Only a call of a tool the server does not offer is a protocol error
//! (invalid params), as the MCP specification asks.
//!
//! The handler knows nothing of stdio: [`serve_stdio`] is one transport over it, and another
//! transport can serve the same [`McpServer`].

mod approval;
mod progress;
mod tools;

use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{ElicitationMode, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Value};

use crate::bindings::agent::file_tools::types::{ErrorCode, ToolError};
use crate::call::{CallOptions, CancelToken};
use crate::error::HostError;
use crate::session::Session;
use tools::{error_result, ok_result};

/// The MCP face of a session.
#[derive(Debug, Clone)]
pub struct McpServer {
    session: Arc<Mutex<Session>>,
    tools: Arc<Vec<Tool>>,
}

impl McpServer {
    /// Wraps `session`, reading its tool list once.
    ///
    /// # Errors
    /// `HostError::Policy` when the component cannot describe its tools under the policy.
    pub fn new(mut session: Session) -> Result<Self, HostError> {
        let described = session
            .describe()
            .map_err(|e| HostError::Policy(e.message))?;
        Ok(McpServer {
            session: Arc::new(Mutex::new(session)),
            tools: Arc::new(tools::from_describe(described)?),
        })
    }

    /// The tools this server offers.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// Runs one tool call and shapes the answer as an MCP tool result.
    ///
    /// # Errors
    /// An invalid-params protocol error for a tool this server does not offer (as the MCP
    /// specification asks); the refusal is audited like any other refused call. Every
    /// failure of an offered tool is a tool result marked `isError` instead.
    pub fn call(
        &self,
        name: &str,
        args: Option<&serde_json::Map<String, Value>>,
        options: &CallOptions,
    ) -> Result<CallToolResult, ErrorData> {
        if !self.tools.iter().any(|t| t.name == name) {
            let shown: String = name.chars().take(64).filter(|c| !c.is_control()).collect();
            let message =
                format!("unknown tool `{shown}`; tools/list names the tools this server offers");
            let refusal = ToolError::host(ErrorCode::InvalidInput, message.clone());
            if let Ok(mut s) = self.session.lock() {
                s.audit_refusal(&shown, &refusal);
            }
            return Err(ErrorData::invalid_params(message, None));
        }
        let args = args.map_or_else(
            || "{}".to_string(),
            |a| Value::Object(a.clone()).to_string(),
        );
        let outcome = match self.session.lock() {
            Ok(mut s) => s.call_with(name, &args, options),
            Err(_) => {
                return Ok(error_result(json!({
                    "code": "INTERNAL",
                    "message": "an earlier call panicked inside the host; restart the server",
                })))
            }
        };
        Ok(match outcome {
            Ok(result) => ok_result(result),
            Err(mut e) => {
                if e.code == ErrorCode::ApprovalRequired && options.approver.is_none() {
                    e.message.push_str(
                        " (this MCP client does not support elicitation, so the server cannot ask its user; \
                         approve such changes in a client that does, or change the policy's approval rules)",
                    );
                }
                error_result(e.to_json())
            }
        })
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let read_only = self.session.lock().map(|s| s.read_only()).unwrap_or(true);
        let mode = if read_only {
            "This session is read-only: only the reading tools are offered."
        } else {
            "Changes are atomic; pass expected_sha256 from read_file to avoid overwriting newer work."
        };
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("file-tools", env!("CARGO_PKG_VERSION")))
            .with_instructions(format!(
                "Tools to read, search and change one repository. Paths are relative to its root. \
                 Failures carry a machine-readable code (PATH_REJECTED, NOT_FOUND, WRITE_CONFLICT, ...). {mode}"
            ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let this = self.clone();
        let name = request.name.to_string();
        let args = request.arguments;
        // `notifications/cancelled` for this request cancels `context.ct`: pass it on to
        // the call, which stops unless it has begun to change files.
        let cancel = CancelToken::new();
        let watcher = {
            let (ct, cancel) = (context.ct.clone(), cancel.clone());
            tokio::spawn(async move {
                ct.cancelled().await;
                cancel.cancel();
            })
        };
        let mut options = CallOptions::new().cancel(cancel.clone());
        let can_ask = context
            .peer
            .supported_elicitation_modes()
            .contains(&ElicitationMode::Form);
        if can_ask {
            let elicitor = approval::Elicitor::new(
                context.peer.clone(),
                tokio::runtime::Handle::current(),
                cancel,
            );
            options = options.approver(Arc::new(elicitor));
        }
        if let Some(token) = context.meta.get_progress_token() {
            let notifier = progress::Notifier::start(context.peer.clone(), token);
            options = options.progress(Arc::new(notifier));
        }
        let result = tokio::task::spawn_blocking(move || this.call(&name, args.as_ref(), &options))
            .await
            .unwrap_or_else(|e| {
                Ok(error_result(
                    json!({"code": "INTERNAL", "message": format!("the call failed: {e}")}),
                ))
            });
        watcher.abort();
        Ok(result?.into())
    }
}

/// Serves `server` on stdin/stdout until the client closes the connection.
///
/// # Errors
/// An I/O or protocol failure of the transport, as text.
pub fn serve_stdio(server: McpServer) -> Result<(), String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    rt.block_on(async move {
        let running = server
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| format!("MCP handshake failed: {e}"))?;
        running
            .waiting()
            .await
            .map_err(|e| format!("MCP server stopped: {e}"))?;
        Ok(())
    })
}
