//! The MCP handler that offers every tool of one [`Session`], whatever the transport.
//!
//! The tool list (names, titles, descriptions, input and output schemas, annotations)
//! comes from the component's own `describe` (see the `tools` module). In a read-only session
//! `describe` leaves out the mutation tools, so the server does not offer them at all.
//!
//! A tool that fails answers with a normal tool result marked `isError`, whose structured
//! content is the error object (`code`, `message`, `path`, ...): the model sees the code
//! and can act on it. Only a call of a tool the server does not offer is a protocol error
//! (invalid params), as the MCP specification asks.
//!
//! The handler knows nothing of its transport: [`crate::stdio`] and [`crate::http`] serve
//! the same [`McpServer`].

mod approval;
mod input_required;
mod progress;
mod repo;
pub mod resources;
pub mod roots;
mod subscriptions;
pub mod tasks;
mod tasks_2025;
mod tools;

use std::sync::Arc;

use rmcp::model::CacheScope;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams,
    CompleteRequestParams, CompleteResult, CustomRequest, CustomResult, GetTaskParams,
    GetTaskResult, Implementation, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, Reference, ServerCapabilities, ServerConfig, SubscribeRequestParams,
    SubscriptionFilter, Tool, UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{json, Value};

use file_tools_host::bindings::agent::file_tools::types::{ErrorCode, ToolError};
use file_tools_host::call::{CallOptions, CancelToken};
use file_tools_host::error::HostError;
use file_tools_host::session::{parse_answer, Session};
use input_required::{modern_can_ask, needs_approval, Round, SealKey};
use repo::{RepoSlot, State};
use roots::Opener;
use subscriptions::Subscriptions;
use tasks::Tasks;
use tools::{error_result, ok_result};

/// The MCP face of a session.
#[derive(Clone)]
pub struct McpServer {
    repo: Arc<RepoSlot>,
    tools: Arc<Vec<Tool>>,
    read_only: bool,
    /// Opens the repository the client's roots name, for a server without one.
    opener: Option<Opener>,
    /// Seals the state of input-required approval rounds.
    seal: SealKey,
    /// Resource subscriptions, on a transport that can send notifications.
    pub(crate) subscriptions: Option<Arc<Subscriptions>>,
    /// Calls handed to tasks, for clients that declare the tasks extension.
    tasks: Tasks,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("tools", &self.tools.len())
            .field("read_only", &self.read_only)
            .field("from_roots", &self.opener.is_some())
            .finish_non_exhaustive()
    }
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
        // Derived from the cursor key: server processes that share it accept each other's
        // approval states, so a retry may reach any of them.
        let seal = SealKey::from_bytes(session.derived_key("mcp approval seal"));
        Ok(McpServer {
            read_only: session.read_only(),
            repo: Arc::new(RepoSlot::new(State::Open(Box::new(session)))),
            tools: Arc::new(tools::from_describe(described)?),
            opener: None,
            seal,
            subscriptions: None,
            tasks: Tasks::new(tasks::DEFAULT_AFTER),
        })
    }

    /// A server without a repository yet: it opens the one directory the client's roots
    /// name, with `opener`, once the client is initialized, and again when the roots
    /// change (see [`roots`]). `described` is the tool list ([`file_tools_host::describe_tools`])
    /// under the policy `opener` applies.
    ///
    /// # Errors
    /// `HostError::Policy` when `described` is not a usable tool list.
    pub fn from_roots(
        described: Value,
        read_only: bool,
        opener: Opener,
    ) -> Result<Self, HostError> {
        Ok(McpServer {
            read_only,
            repo: Arc::new(RepoSlot::new(State::Pending)),
            tools: Arc::new(tools::from_describe(described)?),
            opener: Some(opener),
            seal: new_seal()?,
            subscriptions: None,
            tasks: Tasks::new(tasks::DEFAULT_AFTER),
        })
    }

    /// The same server offering resource subscriptions (`resources/subscribe`), for a
    /// transport that keeps one connection open and can send notifications on it, as
    /// [`crate::serve_stdio`] does. See the `subscriptions` module.
    pub fn with_subscriptions(mut self) -> Self {
        self.subscriptions = Some(Arc::default());
        self
    }

    /// The same server offering `subscriptions/listen` streams only (2026-07-28 clients),
    /// for a transport that can send notifications on a request's own response but not
    /// between requests, as the stateless HTTP server: `resources/subscribe` is refused
    /// there. See the `subscriptions` module.
    pub fn with_listen_streams(mut self) -> Self {
        self.subscriptions = Some(Arc::new(subscriptions::Subscriptions::listen_only()));
        self
    }

    /// The same server keeping its tasks in `tasks` (by default a store of its own whose
    /// calls become tasks after [`tasks::DEFAULT_AFTER`]): the sessions of one repository
    /// share one, each seeing it through [`Tasks::for_session`]. See [`tasks`].
    pub fn with_tasks(mut self, tasks: Tasks) -> Self {
        self.tasks = tasks;
        self
    }

    /// Runs `f` on the server's session (waiting a while for the client's roots when the
    /// server has no repository yet).
    ///
    /// # Errors
    /// Why there is no repository.
    pub fn with_session<T>(&self, f: impl FnOnce(&mut Session) -> T) -> Result<T, String> {
        self.repo.with(f)
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
            // Without a repository there is no audit log to write to.
            let _ = self.repo.with(|s| s.audit_refusal(&shown, &refusal));
            return Err(ErrorData::invalid_params(message, None));
        }
        let args = args.map_or_else(
            || "{}".to_string(),
            |a| Value::Object(a.clone()).to_string(),
        );
        let outcome = match self.repo.with(|s| s.call_text_with(name, &args, options)) {
            Ok(outcome) => outcome,
            Err(why) => {
                return Ok(error_result(
                    json!({ "code": "INVALID_INPUT", "message": why }),
                ))
            }
        };
        let outcome = outcome.and_then(|text| Ok((parse_answer(&text)?, text)));
        Ok(match outcome {
            Ok((result, text)) => ok_result(name, result, text),
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
        let mode = if self.read_only {
            "This session is read-only: only the reading tools are offered."
        } else {
            "Changes are atomic; pass expected_sha256 from read_file to avoid overwriting newer work."
        };
        let mut builder = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources();
        if self.subscriptions.is_some() {
            builder = builder.enable_resources_subscribe();
        }
        let capabilities = builder.enable_completions().enable_tasks().build();
        ServerConfig::new(capabilities)
            .with_server_info(
                Implementation::new("file-tools", env!("CARGO_PKG_VERSION"))
                    .with_icons(vec![tools::icon()]),
            )
            .with_instructions(format!(
                "Tools to read, search and change one repository. Paths are relative to its root. \
                 Failures carry a machine-readable code (PATH_REJECTED, NOT_FOUND, WRITE_CONFLICT, ...). {mode}"
            ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut r = ListToolsResult::with_all_items(self.tools.as_ref().clone());
        // The list depends on the session's policy (a read-only one offers fewer tools),
        // so no other session may share it.
        if modern(&context) {
            (r.ttl_ms, r.cache_scope) = (Some(0), Some(CacheScope::Private));
        }
        Ok(r)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.refresh_roots(&context.peer).await;
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        self.refresh_roots(&context.peer).await;
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let mut r = self.resource_templates()?;
        // The same for every session and for the life of the server.
        if modern(&context) {
            (r.ttl_ms, r.cache_scope) = (Some(FIXED_TTL_MS), Some(CacheScope::Public));
        }
        Ok(r)
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.roots_never_come(modern(&context));
        let cursor = request.and_then(|r| r.cursor);
        let mut r = self.blocking(move |s| s.resources(cursor)).await?;
        // What is listed depends on the session's policy, and files come and go at any time.
        if modern(&context) {
            (r.ttl_ms, r.cache_scope) = (Some(0), Some(CacheScope::Private));
        }
        Ok(r)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.roots_never_come(modern(&context));
        let uri = request.uri;
        let mut r = self.blocking(move |s| s.read_resource_at(&uri)).await?;
        // Whether the file may be read depends on the session's policy, and it may change at
        // any time.
        if modern(&context) {
            (r.ttl_ms, r.cache_scope) = (Some(0), Some(CacheScope::Private));
        }
        Ok(r.into())
    }

    // Deprecated in rmcp for 2026-07-28 clients, which listen instead; earlier ones use it.
    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscribe_to(request.uri, context.peer).await
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        // Only a 2026-07-28 client listens.
        self.roots_never_come(true);
        self.listen_filter(requested)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        self.listen_on(context).await
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.unsubscribe_from(request.uri).await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        self.roots_never_come(modern(&context));
        let for_files =
            matches!(&request.r#ref, Reference::Resource(r) if r.uri == resources::TEMPLATE);
        if !for_files || request.argument.name != "path" {
            return Ok(CompleteResult::default());
        }
        let value = request.argument.value;
        self.blocking(move |s| s.complete_path(&value)).await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
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
        // A 2026-07-28 client is asked through an input-required result (no request from
        // server to client); an earlier one by an elicitation request.
        let modern = context
            .meta
            .protocol_version()
            .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
        self.roots_never_come(modern);
        let mut round = None;
        if modern && modern_can_ask(&context.meta) {
            let args_json = Value::Object(args.clone().unwrap_or_default()).to_string();
            let r = Arc::new(Round::new(
                self.seal.clone(),
                &args_json,
                request.input_responses.as_ref(),
                request.request_state.as_deref(),
            ));
            options = options.approver(r.clone());
            round = Some(r);
        } else if let Some(elicitor) = approval::Elicitor::for_request(&context, &cancel) {
            options = options.approver(Arc::new(elicitor));
        }
        if let Some(notifier) = progress::Notifier::for_request(&context) {
            options = options.progress(Arc::new(notifier));
        }
        // Only a 2026-07-28 request that declares the tasks extension may get a task.
        let declared = context
            .client_capabilities()
            .is_some_and(|c| c.supports_tasks());
        let permit = (modern && declared).then(|| self.tasks.permit()).flatten();
        let call = tasks::Call {
            name,
            args,
            cancel,
            round: round.clone(),
        };
        let ran = self.run_call(call, options, permit).await;
        // Answered, or the task owns the call from now on.
        watcher.abort();
        let result = match ran {
            tasks::Ran::Task(task) => return Ok(CallToolResponse::Task(task)),
            tasks::Ran::Answered(result) => result?,
        };
        if let Some(ask) = round.and_then(|r| needs_approval(&result).then(|| r.ask()).flatten()) {
            return Ok(CallToolResponse::InputRequired(ask));
        }
        Ok(result.into())
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        // The only custom requests are the 2025-11-25 form of tasks.
        self.answer_2025(request, context).await
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        self.tasks.get(&request.task_id).map(GetTaskResult::new)
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks.update(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks.cancel(&request.task_id)
    }
}

/// How long a 2026-07-28 client may keep a result that is the same for every session of
/// every server of this version (the one resource template): a day.
const FIXED_TTL_MS: u64 = 24 * 60 * 60 * 1000;

/// Whether the request comes from a client of the 2026-07-28 revision or later, which
/// reads cache hints (earlier ones get results in their own revision's shape).
fn modern(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28)
}

/// The answer of a call run on a blocking thread: a thread that failed is an internal
/// error of the call.
fn settled(
    joined: Result<Result<CallToolResult, ErrorData>, tokio::task::JoinError>,
) -> Result<CallToolResult, ErrorData> {
    joined.unwrap_or_else(|e| {
        Ok(error_result(
            json!({"code": "INTERNAL", "message": format!("the call failed: {e}")}),
        ))
    })
}

fn new_seal() -> Result<SealKey, HostError> {
    SealKey::new().map_err(|e| HostError::Config(format!("no randomness for the seal key: {e}")))
}

impl McpServer {
    /// Runs `f` on a blocking thread (every session call blocks), mapping a panic to an
    /// internal error.
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&McpServer) -> Result<T, ErrorData> + Send + 'static,
    ) -> Result<T, ErrorData> {
        let this = self.clone();
        tokio::task::spawn_blocking(move || f(&this))
            .await
            .map_err(|e| ErrorData::internal_error(format!("the request failed: {e}"), None))?
    }
}
