//! An MCP server over stdio that offers every tool of one [`Session`].
//!
//! The tool list (names, descriptions, JSON Schemas and annotations) comes from the
//! component's own `describe`, so the server never disagrees with the component about
//! what a tool takes. In a read-only session `describe` leaves out the mutation tools,
//! so the server does not offer them at all.
//!
//! A tool that fails answers with a normal tool result marked `isError`, whose structured
//! content is the error object (`code`, `message`, `path`, ...), never with a protocol
//! error: the model sees the code and can act on it.

use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Value};

use crate::bindings::agent::file_tools::types::{ErrorCode, ToolError};
use crate::error::HostError;
use crate::session::Session;

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
        let tools = match described {
            Value::Array(list) => list
                .into_iter()
                .map(|mut t| {
                    // `describe` speaks snake_case JSON like every tool; MCP wants camelCase.
                    if let Some(o) = t.as_object_mut() {
                        if let Some(schema) = o.remove("input_schema") {
                            o.insert("inputSchema".into(), schema);
                        }
                    }
                    serde_json::from_value::<Tool>(t)
                })
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| HostError::Policy(format!("unusable tool description: {e}")))?,
            other => {
                return Err(HostError::Policy(format!(
                    "describe returned {other} instead of a list"
                )))
            }
        };
        Ok(McpServer {
            session: Arc::new(Mutex::new(session)),
            tools: Arc::new(tools),
        })
    }

    /// The session behind the server, shared: what [`crate::watch()`] takes, so that a
    /// watch on the server's repository runs `changes_since` in the same session (for
    /// resource-updated notifications).
    pub fn session(&self) -> Arc<Mutex<Session>> {
        self.session.clone()
    }

    /// The tools this server offers.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// Runs one tool call and shapes the answer as an MCP tool result.
    pub fn call(
        &self,
        name: &str,
        args: Option<&serde_json::Map<String, Value>>,
    ) -> CallToolResult {
        if !self.tools.iter().any(|t| t.name == name) {
            let message =
                format!("unknown tool `{name}`; tools/list names the tools this server offers");
            let refusal = ToolError::host(ErrorCode::InvalidInput, message.clone());
            if let Ok(mut s) = self.session.lock() {
                s.audit_refusal(name, &refusal);
            }
            return error_result(json!({ "code": "INVALID_INPUT", "message": message }));
        }
        let args = args.map_or_else(
            || "{}".to_string(),
            |a| Value::Object(a.clone()).to_string(),
        );
        let outcome = match self.session.lock() {
            Ok(mut s) => s.call(name, &args),
            Err(_) => {
                return error_result(json!({
                    "code": "INTERNAL",
                    "message": "an earlier call panicked inside the host; restart the server",
                }))
            }
        };
        match outcome {
            Ok(result) => {
                let summary = result
                    .get("summary")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                let mut content = Vec::new();
                if let Some(s) = summary {
                    content.push(ContentBlock::text(s));
                }
                content.push(ContentBlock::text(result.to_string()));
                let mut r = CallToolResult::success(content);
                r.structured_content = Some(result);
                r
            }
            Err(e) => error_result(e.to_json()),
        }
    }
}

fn error_result(error: Value) -> CallToolResult {
    let code = error
        .get("code")
        .and_then(Value::as_str)
        .unwrap_or("INTERNAL");
    let message = error.get("message").and_then(Value::as_str).unwrap_or("");
    let text = format!("{code}: {message}");
    let mut r = CallToolResult::error(vec![ContentBlock::text(text)]);
    r.structured_content = Some(json!({ "error": error }));
    r
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
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let this = self.clone();
        let name = request.name.to_string();
        let args = request.arguments;
        let result = tokio::task::spawn_blocking(move || this.call(&name, args.as_ref()))
            .await
            .unwrap_or_else(|e| {
                error_result(
                    json!({"code": "INTERNAL", "message": format!("the call failed: {e}")}),
                )
            });
        Ok(result.into())
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
