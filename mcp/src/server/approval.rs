//! Approval over MCP: a change the policy marks as needing approval is put to the user with
//! an elicitation (form mode) when the client declared that it can ask. The prompt shows
//! what the component planned: its reasons, files and diff, which the component has already
//! passed through the read policy (a change to a file the model may not read shows no
//! content, exactly as the tool's own result would); the diff is cut at [`MAX_PROMPT_DIFF`].
//! Its text comes with hidden characters spelled out by the component, and a prompt whose
//! plan held any opens with a warning saying so.
//! The answer is "approve" only when the user accepts with the box ticked; declining,
//! cancelling, a client error or a cancelled call all refuse, and nothing is written.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, OnceLock};
use std::time::{Duration, Instant};

use rmcp::model::{
    ElicitRequestParams, ElicitationAction, ElicitationSchema, JsonObject, MetaObject,
    RequestMetaObject,
};
use rmcp::service::{ElicitationMode, RequestContext};
use rmcp::{Peer, RoleServer};

use file_tools_host::approval::{ApprovalRequest, Approver};
use file_tools_host::call::CancelToken;

/// The most bytes of the planned diff a prompt shows.
pub const MAX_PROMPT_DIFF: usize = 16 * 1024;

/// The property of the form that carries the answer.
const FIELD: &str = "approve";

/// Asks the MCP client's user, by elicitation.
pub(crate) struct Elicitor {
    peer: Peer<RoleServer>,
    runtime: tokio::runtime::Handle,
    cancel: CancelToken,
    task: Option<Arc<TaskLink>>,
    /// No answer is taken after this.
    answer_by: Option<Instant>,
}

/// The 2025-11-25 task a call runs in, as its approvals see it: the task's id once it is
/// made (each elicitation names it in `_meta`, as that revision asks) and whether one is
/// waiting for the user (the task then shows `input_required`).
#[derive(Debug, Default)]
pub(crate) struct TaskLink {
    pub(crate) id: OnceLock<String>,
    asking: AtomicBool,
}

impl TaskLink {
    pub(crate) fn asking(&self) -> bool {
        self.asking.load(Ordering::Acquire)
    }
}

/// The metadata key that ties a message to its task (2025-11-25).
pub(crate) const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// How long an approval inside a task waits for the task's id: the call starts just
/// before its task is made, so the id comes a moment after the call, and long before a
/// plan of the call needs approval.
const ID_WAIT: Duration = Duration::from_secs(1);

impl Elicitor {
    /// An approver that asks through `peer`, on `runtime`, and gives up when `cancel` is
    /// cancelled.
    pub(crate) fn new(
        peer: Peer<RoleServer>,
        runtime: tokio::runtime::Handle,
        cancel: CancelToken,
    ) -> Self {
        Elicitor {
            peer,
            runtime,
            cancel,
            task: None,
            answer_by: None,
        }
    }

    /// An approver for a call of the request `context`, when its client can be asked
    /// (it declared form elicitation).
    pub(crate) fn for_request(
        context: &RequestContext<RoleServer>,
        cancel: &CancelToken,
    ) -> Option<Self> {
        let modes = context.peer.supported_elicitation_modes();
        modes.contains(&ElicitationMode::Form).then(|| {
            Elicitor::new(
                context.peer.clone(),
                tokio::runtime::Handle::current(),
                cancel.clone(),
            )
        })
    }

    /// The same approver for a call that runs in the 2025-11-25 task `link` names, taking
    /// no answer after `answer_by`.
    pub(crate) fn in_task(mut self, link: Arc<TaskLink>, answer_by: Instant) -> Self {
        self.task = Some(link);
        self.answer_by = Some(answer_by);
        self
    }
}

/// The link's `asking`, set for as long as this lives.
struct Asking<'a>(Option<&'a TaskLink>);

impl<'a> Asking<'a> {
    fn start(link: Option<&'a TaskLink>) -> Self {
        if let Some(link) = link {
            link.asking.store(true, Ordering::Release);
        }
        Asking(link)
    }
}

impl Drop for Asking<'_> {
    fn drop(&mut self) {
        if let Some(link) = self.0 {
            link.asking.store(false, Ordering::Release);
        }
    }
}

/// The form that asks the user about `request`: the [`prompt`] and one required box.
pub(crate) fn form(request: &ApprovalRequest) -> Option<ElicitRequestParams> {
    let schema = ElicitationSchema::builder()
        .required_bool_with(FIELD, |b| {
            b.title("Approve this change")
                .description("Tick to let file-tools write the change shown above")
        })
        .build()
        .ok()?;
    Some(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: prompt(request),
        requested_schema: schema,
    })
}

/// Whether an elicitation's answer approves: accepted, with the box ticked.
pub(crate) fn approves(action: &ElicitationAction, content: Option<&serde_json::Value>) -> bool {
    *action == ElicitationAction::Accept
        && content
            .and_then(|c| c.get(FIELD))
            .and_then(serde_json::Value::as_bool)
            == Some(true)
}

impl Approver for Elicitor {
    fn approve(&self, request: &ApprovalRequest) -> bool {
        let Some(mut params) = form(request) else {
            return false;
        };
        let link = self.task.as_deref();
        if let Some(id) = link.and_then(task_id) {
            let ElicitRequestParams::FormElicitationParams { meta, .. } = &mut params else {
                return false;
            };
            let mut related = JsonObject::new();
            related.insert(RELATED_TASK.into(), serde_json::json!({ "taskId": id }));
            *meta = Some(RequestMetaObject(MetaObject(related)));
        }
        let _asking = Asking::start(link);
        let late = || self.answer_by.is_some_and(|by| Instant::now() >= by);
        let (tx, rx) = mpsc::channel();
        let peer = self.peer.clone();
        self.runtime.spawn(async move {
            let _ = tx.send(peer.create_elicitation(params).await);
        });
        // Waits for the user, giving up when the call is cancelled (the task's answer then
        // goes nowhere) or, inside a task, at the task's answer time.
        loop {
            match rx.recv_timeout(Duration::from_millis(20)) {
                Ok(Ok(_)) if late() => return false,
                Ok(Ok(answer)) => return approves(&answer.action, answer.content.as_ref()),
                Ok(Err(_)) | Err(mpsc::RecvTimeoutError::Disconnected) => return false,
                Err(mpsc::RecvTimeoutError::Timeout) if self.cancel.is_cancelled() || late() => {
                    return false
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
        }
    }
}

/// The link's task id, waiting a moment for it to be set.
fn task_id(link: &TaskLink) -> Option<&str> {
    let since = Instant::now();
    loop {
        if let Some(id) = link.id.get() {
            return Some(id);
        }
        if since.elapsed() > ID_WAIT {
            return None;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// The question put to the user: the tool, why approval is needed, every file, and the
/// diff as the component gave it (already filtered by the read policy), cut to size.
pub(crate) fn prompt(request: &ApprovalRequest) -> String {
    let mut text = file_tools_host::approval::notice(request)
        .map(|n| format!("{n}\n"))
        .unwrap_or_default();
    text += &format!(
        "file-tools asks to approve a change by {} (+{} -{}).\nWhy: {}\nFiles:\n",
        request.tool,
        request.insertions,
        request.deletions,
        request.reasons.join("; ")
    );
    for f in &request.files {
        text.push_str(&format!("  {} {}\n", f.action, f.path));
    }
    if !request.diff.is_empty() {
        let mut end = request.diff.len().min(MAX_PROMPT_DIFF);
        while !request.diff.is_char_boundary(end) {
            end -= 1;
        }
        text.push('\n');
        text.push_str(&request.diff[..end]);
        if end < request.diff.len() {
            text.push_str(&format!(
                "\n[diff cut: {} more bytes]",
                request.diff.len() - end
            ));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(diff: String) -> ApprovalRequest {
        ApprovalRequest {
            tool: "apply_patch".into(),
            reasons: vec!["changes the build file Cargo.toml".into()],
            files: Vec::new(),
            insertions: 1,
            deletions: 0,
            diff,
            escaped: 0,
        }
    }

    #[test]
    fn a_plan_with_hidden_characters_opens_with_a_warning() {
        let mut r = request("+⟨U+202E⟩x\n".into());
        assert!(!prompt(&r).contains("Warning"), "a plain count shows none");
        r.escaped = 2;
        let shown = prompt(&r);
        assert!(
            shown.starts_with("Warning: this change contains 2 invisible or control characters"),
            "{shown}"
        );
    }

    #[test]
    fn the_prompt_shows_the_reasons_and_cuts_a_long_diff_on_a_char_boundary() {
        let short = prompt(&request("+one line\n".into()));
        assert!(short.contains("apply_patch") && short.contains("Cargo.toml"));
        assert!(short.ends_with("+one line\n"), "{short}");
        let long = "+é".repeat(MAX_PROMPT_DIFF);
        let cut = prompt(&request(long.clone()));
        assert!(cut.len() < MAX_PROMPT_DIFF + 400, "{}", cut.len());
        assert!(cut.contains("[diff cut:"), "{cut}");
        assert!(!prompt(&request(String::new())).contains("[diff cut"));
    }
}
