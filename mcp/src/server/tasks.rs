//! Long calls as tasks, for clients that declare the tasks extension
//! (`io.modelcontextprotocol/tasks`, SEP-2663) on the request: a call still running after
//! the server's threshold (`--task-after-ms`, one second by default) answers with a task
//! handle instead of holding the request open, and the client polls `tasks/get` for the
//! result. A call that ends sooner answers as usual, so quick calls cost no extra round.
//!
//! The call goes on exactly as it began (same session, audit event, limits): the task only
//! waits for it. `tasks/cancel` cancels it as `notifications/cancelled` would (it stops
//! unless it has begun to change files; the task then ends `cancelled` or with what the
//! call returned). A change that needs approval asks inside the task: the task turns
//! `input_required` with the approval form, the client answers through `tasks/update`, and
//! the call is planned again with that answer exactly as a 2026-07-28 retry would be (see
//! [`super::input_required`]). Tasks live in the server's memory: a task of another server
//! process, or of an HTTP session the server has since closed, is unknown.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{CallToolResult, CreateTaskResult, InputResponses, Task};
use rmcp::service::RequestContext;
use rmcp::task_manager::{TaskContext, TaskExit, TaskManager, TaskOptions};
use rmcp::RoleServer;
use serde_json::Value;
use tokio::task::JoinHandle;

use file_tools_host::call::{CallOptions, CancelToken};

use super::input_required::{needs_approval, Round, INPUT_KEY};
use super::{settled, McpServer};

/// The threshold when the server names none.
pub const DEFAULT_AFTER: Duration = Duration::from_secs(1);
/// Tasks running at once; past this a call answers in the request, as for a client
/// without tasks (so clients cannot pile up work the server holds).
const MAX_RUNNING: usize = 32;
/// Tasks made within the time a task may be kept (a finished task keeps its result for up to
/// twice [`TTL_MS`] after its creation); past this a call answers in the request, so that
/// kept results cannot fill the server's memory.
const MAX_KEPT: usize = 256;
/// How long a task and its result are kept (from its creation).
const TTL_MS: u64 = 10 * 60 * 1000;
/// How often a client should poll.
const POLL_MS: u64 = 250;
/// Approval rounds inside one task (a plan that keeps changing is answered as it stands).
const MAX_ROUNDS: usize = 4;

/// The server's tasks, and when a call becomes one.
#[derive(Clone)]
pub(crate) struct Tasks {
    manager: TaskManager,
    after: Duration,
    /// When the tasks that may still be kept were made, oldest first.
    made: Arc<Mutex<VecDeque<Instant>>>,
}

impl Tasks {
    pub(crate) fn new(after: Duration) -> Tasks {
        Tasks {
            manager: TaskManager::new(),
            after,
            made: Arc::default(),
        }
    }

    /// The threshold for this request: `None` when its client did not declare tasks, or
    /// when as many tasks run, or are kept, as may.
    pub(crate) fn threshold(&self, context: &RequestContext<RoleServer>) -> Option<Duration> {
        let declared = context
            .client_capabilities()
            .is_some_and(|c| c.supports_tasks());
        (declared && self.manager.running_task_count() < MAX_RUNNING && self.room())
            .then_some(self.after)
    }

    /// Whether fewer than [`MAX_KEPT`] tasks may still be kept.
    fn room(&self) -> bool {
        let Ok(mut made) = self.made.lock() else {
            return false;
        };
        let kept_for = Duration::from_millis(2 * TTL_MS);
        while made.front().is_some_and(|t| t.elapsed() > kept_for) {
            made.pop_front();
        }
        made.len() < MAX_KEPT
    }

    pub(crate) fn manager(&self) -> &TaskManager {
        &self.manager
    }

    /// Hands the running call `run` to a new task. `replan` runs the call again with an
    /// approval round (an answer and the state it answers), for a change that needs one;
    /// `round` is the running call's, when it can ask.
    fn adopt<F, P>(
        &self,
        run: JoinHandle<Result<CallToolResult, rmcp::ErrorData>>,
        cancel: CancelToken,
        round: Option<Arc<Round>>,
        replan: P,
    ) -> Task
    where
        P: Fn(Arc<Round>) -> F + Send + 'static,
        F: Future<Output = Result<CallToolResult, rmcp::ErrorData>> + Send + 'static,
    {
        if let Ok(mut made) = self.made.lock() {
            made.push_back(Instant::now());
        }
        let options = TaskOptions::new()
            .with_ttl_ms(TTL_MS)
            .with_poll_interval_ms(POLL_MS);
        self.manager.spawn(options, move |ctx| {
            Box::pin(async move {
                // Dropped when the task ends, is cancelled or expires: the call stops too.
                let _stop = StopOnDrop(cancel.clone());
                let mut result = finish(&ctx, &cancel, async { settled(run.await) }).await?;
                let mut round = round;
                for n in 1..=MAX_ROUNDS {
                    let Some(current) = round.take().filter(|_| needs_approval(&result)) else {
                        break;
                    };
                    let Some(next) = ask_in_task(&ctx, &current, n).await? else {
                        break;
                    };
                    result = finish(&ctx, &cancel, replan(next.clone())).await?;
                    round = Some(next);
                }
                Ok(result)
            })
        })
    }
}

impl McpServer {
    /// Hands the call of `name` with `args`, still running as `run`, to a new task; the
    /// handle to answer with. Approval inside the task plans the call again (see
    /// [`Tasks::adopt`]) with the same cancel token.
    pub(super) fn to_task(
        &self,
        run: JoinHandle<Result<CallToolResult, rmcp::ErrorData>>,
        cancel: CancelToken,
        round: Option<Arc<Round>>,
        name: String,
        args: Option<serde_json::Map<String, Value>>,
    ) -> CreateTaskResult {
        let (this, stop) = (self.clone(), cancel.clone());
        let replan = move |r: Arc<Round>| {
            let (this, name, args) = (this.clone(), name.clone(), args.clone());
            let options = CallOptions::new().cancel(stop.clone()).approver(r);
            async move {
                settled(
                    tokio::task::spawn_blocking(move || this.call(&name, args.as_ref(), &options))
                        .await,
                )
            }
        };
        CreateTaskResult::new(self.tasks.adopt(run, cancel, round, replan))
    }
}

/// Cancels the call when the task's future is dropped.
struct StopOnDrop(CancelToken);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// Waits for `call`, passing a `tasks/cancel` on to it; a cancelled call still ends with
/// its own answer (it may have finished, or begun to change files), except that one that
/// stopped for the cancellation ends the task `cancelled`.
async fn finish(
    ctx: &TaskContext,
    cancel: &CancelToken,
    call: impl Future<Output = Result<CallToolResult, rmcp::ErrorData>>,
) -> Result<CallToolResult, TaskExit> {
    tokio::pin!(call);
    let result = tokio::select! {
        r = &mut call => r,
        () = ctx.cancelled() => {
            cancel.cancel();
            call.await
        }
    }?;
    if ctx.is_cancel_requested() && stopped_by_cancel(&result) {
        return Err(TaskExit::Cancelled);
    }
    Ok(result)
}

fn stopped_by_cancel(result: &CallToolResult) -> bool {
    result.is_error == Some(true)
        && result
            .structured_content
            .as_ref()
            .and_then(|c| c["error"]["code"].as_str())
            == Some("CANCELLED")
}

/// Puts the approval form of `round` to the client through the task (round `n` of the
/// task, so that each has its own key) and returns the round that carries the answer, or
/// `None` when the user already declined (the refusal stands).
async fn ask_in_task(
    ctx: &TaskContext,
    round: &Round,
    n: usize,
) -> Result<Option<Arc<Round>>, TaskExit> {
    let Some(ask) = round.ask() else {
        return Ok(None);
    };
    let Some(request) = ask
        .input_requests
        .as_ref()
        .and_then(|r| r.get(INPUT_KEY))
        .cloned()
    else {
        return Ok(None);
    };
    let answer: Value = ctx
        .request_input(format!("{INPUT_KEY}-{n}"), request)
        .await?;
    let responses = InputResponses::from([(INPUT_KEY.to_string(), answer)]);
    Ok(Some(Arc::new(
        round.next(Some(&responses), ask.request_state.as_deref()),
    )))
}
