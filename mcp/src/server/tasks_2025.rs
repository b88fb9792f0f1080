//! Tasks for clients of the 2025-11-25 revision: a `tools/call` that carries `task` answers
//! at once with a task, and `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel`
//! answer in that revision's shapes. The transport renames these requests (see
//! [`crate::wire`]), so they arrive here as custom requests.
//!
//! The tasks are those of the [`Tasks`](super::tasks::Tasks) store, with its bounds, its
//! time to live and its rule that a session sees only its own: the call goes on exactly as
//! a plain call would (same session, limits and audit event), and the task only waits for
//! it. As that revision asks, a tool result marked `isError` ends the task `failed`; its
//! result, error code and all, is still what `tasks/result` answers.
//!
//! A change that needs approval asks the user as for any call of this revision, by an
//! elicitation request, which names the task in its `_meta`; the task shows
//! `input_required` until the user answers.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CustomRequest, CustomResult, DetailedTask, ErrorCode, Task, TaskPayload};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::{json, Map, Value};

use file_tools_host::call::{CallOptions, CancelToken};

use super::approval::{TaskLink, RELATED_TASK};
use super::tasks::{self, has_ended, ANSWER_BY};
use super::{approval, progress, McpServer};
use crate::wire::{PREFIX, REVISION};

/// Tasks per page of `tasks/list` (each is looked up whole, result and all).
const PAGE: usize = 16;
/// How long `tasks/cancel` waits for the call to stop before it answers.
const SETTLE: Duration = Duration::from_secs(2);

impl McpServer {
    /// Answers a request the transport renamed for a 2025-11-25 client.
    pub(crate) async fn answer_2025(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let not_found =
            || ErrorData::new(ErrorCode::METHOD_NOT_FOUND, request.method.clone(), None);
        // The requests the transport renames for a 2025-11-25 client alone.
        let revision = context.protocol_version();
        let method = match request.method.strip_prefix(PREFIX) {
            Some(m) if revision.is_some_and(|v| v.as_str() == REVISION) => m,
            _ => return Err(not_found()),
        };
        let params = match request.params {
            Some(Value::Object(map)) => map,
            None => Map::new(),
            Some(_) => return Err(ErrorData::invalid_params("params must be an object", None)),
        };
        let answer = match method {
            "tools/call" => self.start_2025(&params, &context).await?,
            "tasks/get" => self.show(&self.tasks.get(task_id(&params)?)?),
            "tasks/result" => self.result_2025(task_id(&params)?, &context).await?,
            "tasks/list" => self.list_2025(&params)?,
            "tasks/cancel" => self.cancel_2025(task_id(&params)?).await?,
            _ => return Err(not_found()),
        };
        Ok(CustomResult::new(answer))
    }

    /// A page of the session's tasks, oldest first. The cursor is where the page begins
    /// among them (a task that expires meanwhile moves the later ones up by one).
    fn list_2025(&self, params: &Map<String, Value>) -> Result<Value, ErrorData> {
        let from = match params.get("cursor") {
            None | Some(Value::Null) => 0,
            Some(c) => c
                .as_str()
                .and_then(|c| c.parse::<usize>().ok())
                .ok_or_else(|| ErrorData::invalid_params("unknown cursor", None))?,
        };
        let ids = self.tasks.own_ids();
        let page: Vec<Value> = ids
            .iter()
            .skip(from)
            .take(PAGE)
            .filter_map(|id| self.tasks.get(id).ok())
            .map(|t| self.show(&t))
            .collect();
        let mut answer = json!({ "tasks": page });
        if ids.len() > from.saturating_add(PAGE) {
            answer["nextCursor"] = json!((from + PAGE).to_string());
        }
        Ok(answer)
    }

    /// Makes a task of the call `params` names and answers with it.
    async fn start_2025(
        &self,
        params: &Map<String, Value>,
        context: &RequestContext<RoleServer>,
    ) -> Result<Value, ErrorData> {
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| ErrorData::invalid_params("tools/call needs a tool `name`", None))?;
        if !self.tools.iter().any(|t| t.name == name) {
            // Refused (and audited) as a plain call would be, before any task is made: on
            // a blocking thread, since the audit waits for the session.
            let name = name.to_string();
            let refused = self
                .blocking(move |s| s.call(&name, None, &CallOptions::new()))
                .await;
            return Err(refused
                .err()
                .unwrap_or_else(|| ErrorData::invalid_params("the tool is not offered", None)));
        }
        let args = match params.get("arguments") {
            None | Some(Value::Null) => None,
            Some(Value::Object(a)) => Some(a.clone()),
            Some(_) => {
                return Err(ErrorData::invalid_params(
                    "`arguments` must be an object",
                    None,
                ))
            }
        };
        let permit = self.tasks.permit().ok_or_else(|| {
            ErrorData::new(
                ErrorCode::INTERNAL_ERROR,
                "the server holds as many tasks as it keeps; call without a task, or later",
                None,
            )
        })?;
        let cancel = CancelToken::new();
        let mut options = CallOptions::new().cancel(cancel.clone());
        // A client that can be asked gets the task's link: its approvals name the task,
        // which shows `input_required` meanwhile.
        let mut link = None;
        if let Some(elicitor) = approval::Elicitor::for_request(context, &cancel) {
            // An answer after ANSWER_BY is refused, as in the tasks extension's form: a
            // change planned later might still be writing as the task expires.
            let by = std::time::Instant::now() + ANSWER_BY;
            let made = Arc::new(TaskLink::default());
            options = options.approver(Arc::new(elicitor.in_task(made.clone(), by)));
            link = Some(made);
        }
        if let Some(notifier) = progress::Notifier::for_request(context) {
            options = options.progress(Arc::new(notifier));
        }
        let call = tasks::Call {
            name: name.to_string(),
            args,
            cancel,
            round: None,
        };
        let made = self.task_at_once(call, options, permit);
        if let Some(link) = &link {
            self.tasks.link(&made.task.task_id, link);
        }
        Ok(json!({ "task": show_task(&made.task, None, false) }))
    }

    /// The task's result once it has ended, as the call would have answered.
    async fn result_2025(
        &self,
        id: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<Value, ErrorData> {
        let task = tokio::select! {
            () = context.ct.cancelled() => {
                return Err(ErrorData::internal_error("the request was cancelled", None));
            }
            task = self.tasks.wait_for_end(id, None) => task?,
        };
        match task.payload {
            TaskPayload::Completed { mut result } => {
                // The revision has no `resultType`.
                if result.get("resultType") == Some(&json!("complete")) {
                    result.remove("resultType");
                }
                let meta = result
                    .entry("_meta")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Some(meta) = meta.as_object_mut() {
                    meta.insert(RELATED_TASK.into(), json!({ "taskId": id }));
                }
                Ok(Value::Object(result))
            }
            TaskPayload::Failed { error } => Err(serde_json::from_value(Value::Object(error))
                .unwrap_or_else(|_| ErrorData::internal_error("the task failed", None))),
            TaskPayload::Cancelled => Err(ErrorData::invalid_params(
                format!("task {id} was cancelled: it has no result"),
                None,
            )),
            // Not ended: `wait_for_end` waits for an end.
            _ => Err(ErrorData::internal_error("the task has not ended", None)),
        }
    }

    /// Asks the task to stop and answers with its state once it has (or after
    /// [`SETTLE`]): a call that has begun to change files finishes, and its task ends
    /// with what it returned.
    async fn cancel_2025(&self, id: &str) -> Result<Value, ErrorData> {
        let task = self.tasks.get(id)?;
        if has_ended(&task) {
            return Err(ErrorData::invalid_params(
                format!("task {id} has already ended; it cannot be cancelled"),
                None,
            ));
        }
        self.tasks.cancel(id)?;
        let settled = self
            .tasks
            .wait_for_end(id, Some(tokio::time::Instant::now() + SETTLE))
            .await?;
        Ok(self.show(&settled))
    }
}

fn task_id(params: &Map<String, Value>) -> Result<&str, ErrorData> {
    params
        .get("taskId")
        .and_then(Value::as_str)
        .ok_or_else(|| ErrorData::invalid_params("the request needs a `taskId`", None))
}

impl McpServer {
    /// A task as the 2025-11-25 revision shows it.
    fn show(&self, task: &DetailedTask) -> Value {
        let asking = self.tasks.asking(&task.task.task_id);
        show_task(&task.task, Some(&task.payload), asking)
    }
}

/// `task` in the revision's shape: `failed` for a tool result marked `isError`,
/// `input_required` while its call is `asking` its user.
fn show_task(task: &Task, payload: Option<&TaskPayload>, asking: bool) -> Value {
    let is_error = |r: &Map<String, Value>| r.get("isError") == Some(&Value::Bool(true));
    let status = match payload {
        Some(TaskPayload::Completed { result }) if is_error(result) => json!("failed"),
        Some(TaskPayload::Working) | None if asking => json!("input_required"),
        _ => serde_json::to_value(task.status).unwrap_or(Value::Null),
    };
    let mut shown = json!({
        "taskId": task.task_id,
        "status": status,
        "createdAt": task.created_at,
        "lastUpdatedAt": task.last_updated_at,
        "ttl": task.ttl_ms,
    });
    if let Some(poll) = task.poll_interval_ms {
        shown["pollInterval"] = json!(poll);
    }
    if let Some(message) = &task.status_message {
        shown["statusMessage"] = json!(message);
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::TaskStatus;

    fn task(status: TaskStatus) -> Task {
        Task::new("t1", status, "2026-11-28T00:00:00Z", "2026-11-28T00:00:01Z")
            .with_ttl_ms(600_000)
            .with_poll_interval_ms(250)
    }

    #[test]
    fn a_task_is_shown_in_the_revisions_shape() {
        let shown = show_task(&task(TaskStatus::Working), None, false);
        assert_eq!(
            shown,
            json!({"taskId": "t1", "status": "working", "createdAt": "2026-11-28T00:00:00Z",
                   "lastUpdatedAt": "2026-11-28T00:00:01Z", "ttl": 600_000, "pollInterval": 250})
        );
    }

    #[test]
    fn a_tool_result_marked_is_error_ends_the_task_failed() {
        let mut result = Map::new();
        result.insert("isError".into(), json!(true));
        let failed = TaskPayload::Completed {
            result: result.clone(),
        };
        let shown = show_task(&task(TaskStatus::Completed), Some(&failed), false);
        assert_eq!(shown["status"], "failed");
        result.insert("isError".into(), json!(false));
        let done = TaskPayload::Completed { result };
        let shown = show_task(&task(TaskStatus::Completed), Some(&done), true);
        assert_eq!(shown["status"], "completed");
    }
}
