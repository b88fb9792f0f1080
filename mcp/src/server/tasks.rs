//! Long calls as tasks, for 2026-07-28 clients that declare the tasks extension
//! (`io.modelcontextprotocol/tasks`, SEP-2663) on the request: a call still running after
//! the threshold (`--task-after-ms`, [`DEFAULT_AFTER`] by default) answers with a task
//! handle instead of holding the request open, and the client polls `tasks/get` for the
//! result. A call that ends sooner answers as usual, so quick calls cost no extra round.
//! (A 2025-11-25 client asks for a task in its own form, answered from this store by the
//! `tasks_2025` module; a client of another earlier revision never gets one.)
//!
//! The call goes on exactly as it began (same session, limits and audit event): the task
//! only waits for it. `tasks/cancel` cancels it as `notifications/cancelled` would (it
//! stops unless it has begun to change files; the task then ends `cancelled`, or with what
//! the call returned). A change that needs approval asks inside the task: the task turns
//! `input_required` with the approval form, the client answers through `tasks/update`, and
//! the call is planned and audited again with that answer, exactly as a 2026-07-28 retry
//! would be (see the `input_required` module). In either form an answer more than
//! [`ANSWER_BY`] after the task began is refused, so that no change is written as the task
//! expires.
//!
//! One [`Tasks`] store serves a repository: the HTTP server's sessions share it (so its
//! bounds hold however many sessions come and go) and each sees only its own tasks. Tasks
//! live in the server process: another process's ids are unknown.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use rmcp::model::{CallToolResult, CreateTaskResult, DetailedTask, InputResponses, TaskPayload};
use rmcp::task_manager::{TaskContext, TaskExit, TaskManager, TaskOptions};
use rmcp::ErrorData;
use serde_json::{Map, Value};
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use file_tools_host::call::{CallOptions, CancelToken};

use super::approval::TaskLink;
use super::input_required::{error_code, needs_approval, Round, INPUT_KEY};
use super::{settled, McpServer};

/// The threshold when the server names none.
pub const DEFAULT_AFTER: Duration = Duration::from_secs(1);
/// Tasks running at once, per store; past this a call answers in the request, as for a
/// client without tasks (a 2025-11-25 client's request for a task is refused), so that
/// clients cannot pile up work the server holds.
const MAX_RUNNING: usize = 32;
/// Tasks made within the time a task may be kept (a finished task keeps its result for up
/// to twice [`TTL`] after its creation), per store; past this a call answers in the
/// request (or is refused, as above), so that kept results cannot fill the server's memory.
const MAX_KEPT: usize = 256;
/// A task's time to live: one still running after it fails (and stops its call).
const TTL: Duration = Duration::from_secs(10 * 60);
/// The latest answer to an approval asked inside a task, counted from the task's start:
/// a change planned after it might still be writing when the task expires.
pub(crate) const ANSWER_BY: Duration = Duration::from_secs(8 * 60);
/// How often a wait for a task's end looks again unwoken: expiry is noticed only when
/// the manager is used, and this use makes it so.
const LOOK: Duration = Duration::from_secs(1);
/// How soon a woken wait looks again: the manager records the end just after the wake.
const SOON: Duration = Duration::from_millis(5);
/// How often a client should poll.
const POLL: Duration = Duration::from_millis(250);
/// Approval rounds inside one task (a plan that keeps changing is answered as it stands).
const MAX_ROUNDS: usize = 4;

/// The tasks of one repository, as seen by one session (its owner name).
#[derive(Clone)]
pub struct Tasks {
    manager: TaskManager,
    after: Duration,
    book: Arc<Mutex<Book>>,
    owner: Arc<str>,
    /// Woken as each task's call ends (just before the manager records its end).
    end_signal: Arc<Notify>,
    /// The links of the 2025-11-25 tasks whose calls can ask their user (each call
    /// holds its own while it runs; the link names its task).
    links: Arc<Mutex<Vec<Weak<TaskLink>>>>,
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks")
            .field("after", &self.after)
            .finish_non_exhaustive()
    }
}

/// What the store's bounds count.
#[derive(Default)]
struct Book {
    /// Calls that may become tasks or are tasks still running.
    running: usize,
    /// Calls that may still become tasks (each counts as kept until it settles).
    pending: usize,
    /// Tasks made and perhaps still kept, oldest first: when, id, owner.
    made: VecDeque<(Instant, String, Arc<str>)>,
}

impl Book {
    /// Forgets the tasks no longer kept.
    fn prune(&mut self) {
        while self.made.front().is_some_and(|m| m.0.elapsed() > 2 * TTL) {
            self.made.pop_front();
        }
    }
}

/// A call's place among the store's bounds, held until the call answers in the request or
/// its task ends.
pub(crate) struct Permit {
    book: Arc<Mutex<Book>>,
    made: bool,
}

impl Drop for Permit {
    fn drop(&mut self) {
        if let Ok(mut book) = self.book.lock() {
            book.running -= 1;
            if !self.made {
                book.pending -= 1;
            }
        }
    }
}

impl Tasks {
    /// A store whose calls become tasks after `after` (zero: at once).
    pub fn new(after: Duration) -> Tasks {
        Tasks {
            manager: TaskManager::new(),
            after,
            book: Arc::default(),
            owner: Arc::from(""),
            end_signal: Arc::default(),
            links: Arc::default(),
        }
    }

    /// The same store as the session `name` sees it: its own tasks only.
    pub fn for_session(&self, name: &str) -> Tasks {
        Tasks {
            owner: Arc::from(name),
            ..self.clone()
        }
    }

    /// A place for a call that may become a task, when the bounds leave one.
    pub(crate) fn permit(&self) -> Option<Permit> {
        // Expired tasks are failed and let go on every use of the manager.
        let _ = self.manager.running_task_count();
        let mut book = self.book.lock().ok()?;
        book.prune();
        if book.running >= MAX_RUNNING || book.made.len() + book.pending >= MAX_KEPT {
            return None;
        }
        book.running += 1;
        book.pending += 1;
        Some(Permit {
            book: self.book.clone(),
            made: false,
        })
    }

    /// The task `id`, when this session made it (else the error of an unknown task, so
    /// that another session's ids tell nothing).
    fn own(&self, id: &str) -> Result<(), ErrorData> {
        let book = self
            .book
            .lock()
            .map_err(|_| ErrorData::internal_error("the task store failed", None))?;
        if book.made.iter().any(|m| m.1 == id && m.2 == self.owner) {
            Ok(())
        } else {
            Err(ErrorData::invalid_params(
                format!("unknown task: {id}"),
                None,
            ))
        }
    }

    pub(crate) fn get(&self, id: &str) -> Result<DetailedTask, ErrorData> {
        self.own(id)?;
        self.manager.get_task(id)
    }

    pub(crate) fn update(&self, id: &str, answers: InputResponses) -> Result<(), ErrorData> {
        self.own(id)?;
        self.manager.update_task(id, answers)
    }

    pub(crate) fn cancel(&self, id: &str) -> Result<(), ErrorData> {
        self.own(id)?;
        self.manager.cancel_task(id)
    }

    /// The task `id` once it has ended, or as it stands at `deadline`.
    pub(crate) async fn wait_for_end(
        &self,
        id: &str,
        deadline: Option<tokio::time::Instant>,
    ) -> Result<DetailedTask, ErrorData> {
        let mut woken = false;
        loop {
            // Listening before looking, so that an end between the two still wakes.
            let wake = self.end_signal.notified();
            tokio::pin!(wake);
            wake.as_mut().enable();
            let task = self.get(id)?;
            let now = tokio::time::Instant::now();
            if has_ended(&task) || deadline.is_some_and(|d| now >= d) {
                return Ok(task);
            }
            let mut until = now + if woken { SOON } else { LOOK };
            if let Some(d) = deadline {
                until = until.min(d);
            }
            woken = tokio::select! {
                () = wake => true,
                () = tokio::time::sleep_until(until) => false,
            };
        }
    }

    /// Ties the task `id` to the approvals of its call.
    pub(crate) fn link(&self, id: &str, link: &Arc<TaskLink>) {
        let _ = link.id.set(id.to_string());
        if let Ok(mut links) = self.links.lock() {
            links.retain(|l| l.strong_count() > 0);
            links.push(Arc::downgrade(link));
        }
    }

    /// Whether the call of the task `id` is waiting for its user's approval.
    pub(crate) fn asking(&self, id: &str) -> bool {
        self.links.lock().is_ok_and(|links| {
            links
                .iter()
                .filter_map(Weak::upgrade)
                .any(|l| l.id.get().is_some_and(|i| i == id) && l.asking())
        })
    }

    /// The ids of this session's tasks still kept, oldest first.
    pub(crate) fn own_ids(&self) -> Vec<String> {
        let Ok(mut book) = self.book.lock() else {
            return Vec::new();
        };
        book.prune();
        book.made
            .iter()
            .filter(|m| m.2 == self.owner)
            .map(|m| m.1.clone())
            .collect()
    }
}

/// The call a request runs: what it needs to run again inside a task.
pub(crate) struct Call {
    pub(crate) name: String,
    pub(crate) args: Option<Map<String, Value>>,
    pub(crate) cancel: CancelToken,
    /// The approval round of a client that can be asked.
    pub(crate) round: Option<Arc<Round>>,
}

/// How a request's call went: answered, or handed to a task.
pub(crate) enum Ran {
    Answered(Result<CallToolResult, ErrorData>),
    Task(CreateTaskResult),
}

impl McpServer {
    /// Runs `call` with `options`; with a `permit`, a call still running after the
    /// store's threshold is handed to a new task and its handle is the answer.
    pub(crate) async fn run_call(
        &self,
        call: Call,
        options: CallOptions,
        permit: Option<Permit>,
    ) -> Ran {
        let Some(permit) = permit else {
            return Ran::Answered(settled(
                self.spawn_call(call.name, call.args, options).await,
            ));
        };
        // Kept for a task, which may plan the call again.
        let mut run = self.spawn_call(call.name.clone(), call.args.clone(), options);
        let after = self.tasks.after;
        if !after.is_zero() {
            if let Ok(done) = tokio::time::timeout(after, &mut run).await {
                return Ran::Answered(settled(done));
            }
        }
        Ran::Task(self.hand_over(run, call, permit))
    }

    /// Runs `call` with `options` as a new task at once, and answers with its handle (a
    /// 2025-11-25 client asks for one on the request).
    pub(crate) fn task_at_once(
        &self,
        call: Call,
        options: CallOptions,
        permit: Permit,
    ) -> CreateTaskResult {
        let run = self.spawn_call(call.name.clone(), call.args.clone(), options);
        self.hand_over(run, call, permit)
    }

    /// Runs the call of `name` with `args` on a blocking thread (every session call
    /// blocks).
    fn spawn_call(
        &self,
        name: String,
        args: Option<Map<String, Value>>,
        options: CallOptions,
    ) -> JoinHandle<Result<CallToolResult, ErrorData>> {
        let this = self.clone();
        tokio::task::spawn_blocking(move || this.call(&name, args.as_ref(), &options))
    }

    /// Makes a task of `call`, running as `run`.
    fn hand_over(
        &self,
        run: JoinHandle<Result<CallToolResult, ErrorData>>,
        call: Call,
        mut permit: Permit,
    ) -> CreateTaskResult {
        let this = self.clone();
        let Call {
            name,
            args,
            cancel,
            round,
        } = call;
        let stop = cancel.clone();
        let replan = move |r: Arc<Round>| {
            let (this, name, args) = (this.clone(), name.clone(), args.clone());
            let options = CallOptions::new().cancel(stop.clone()).approver(r);
            async move { settled(this.spawn_call(name, args, options).await) }
        };
        if let Ok(mut book) = self.tasks.book.lock() {
            book.pending -= 1;
            permit.made = true;
        }
        let options = TaskOptions::new()
            .with_ttl_ms(TTL.as_millis() as u64)
            .with_poll_interval_ms(POLL.as_millis() as u64);
        let began = Instant::now();
        let ended = WakeOnDrop(self.tasks.end_signal.clone());
        let task = self.tasks.manager.spawn(options, move |ctx| {
            Box::pin(async move {
                // Dropped when the task ends, is cancelled or expires: the call stops
                // too, the task's place is freed, and those waiting for it look again.
                let _held = (permit, StopOnDrop(cancel.clone()), ended);
                let mut result = finish(&ctx, &cancel, async { settled(run.await) }).await?;
                let mut round = round;
                for n in 1..=MAX_ROUNDS {
                    let Some(current) = round.take().filter(|_| needs_approval(&result)) else {
                        break;
                    };
                    let Some(next) = ask_in_task(&ctx, &current, n, began).await? else {
                        break;
                    };
                    result = finish(&ctx, &cancel, replan(next.clone())).await?;
                    round = Some(next);
                }
                Ok(result)
            })
        });
        if let Ok(mut book) = self.tasks.book.lock() {
            let owner = self.tasks.owner.clone();
            book.made.push_back((began, task.task_id.clone(), owner));
        }
        CreateTaskResult::new(task)
    }
}

/// Whether `task` has ended (completed, failed or cancelled).
pub(crate) fn has_ended(task: &DetailedTask) -> bool {
    matches!(
        task.payload,
        TaskPayload::Completed { .. } | TaskPayload::Failed { .. } | TaskPayload::Cancelled
    )
}

/// Cancels the call when the task's future is dropped.
struct StopOnDrop(CancelToken);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// Wakes those waiting for tasks when the task's future is dropped.
struct WakeOnDrop(Arc<Notify>);

impl Drop for WakeOnDrop {
    fn drop(&mut self) {
        self.0.notify_waiters();
    }
}

/// Waits for `call`, passing a `tasks/cancel` on to it; a cancelled call still ends with
/// its own answer (it may have finished, or begun to change files), except that one that
/// stopped for the cancellation ends the task `cancelled`.
async fn finish(
    ctx: &TaskContext,
    cancel: &CancelToken,
    call: impl Future<Output = Result<CallToolResult, ErrorData>>,
) -> Result<CallToolResult, TaskExit> {
    tokio::pin!(call);
    let result = tokio::select! {
        r = &mut call => r,
        () = ctx.cancelled() => {
            cancel.cancel();
            call.await
        }
    }?;
    // Stopped for the cancel, or stopped before writing to ask for approval, which a
    // cancelled task no longer asks.
    if ctx.is_cancel_requested()
        && matches!(error_code(&result), Some("CANCELLED" | "APPROVAL_REQUIRED"))
    {
        return Err(TaskExit::Cancelled);
    }
    Ok(result)
}

/// Puts the approval form of `round` to the client through the task (round `n` of the
/// task, so that each has its own key) and returns the round that carries the answer, or
/// `None` when the user already declined or answered too late (the refusal stands).
async fn ask_in_task(
    ctx: &TaskContext,
    round: &Round,
    n: usize,
    began: Instant,
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
    let wait = ANSWER_BY.saturating_sub(began.elapsed());
    let asked = ctx.request_input(format!("{INPUT_KEY}-{n}"), request);
    // A cancel that came before the question was put would leave it waiting for ever:
    // the manager withdraws only the questions pending when the cancel arrives.
    let answer = tokio::select! {
        biased;
        () = ctx.cancelled() => return Err(TaskExit::Cancelled),
        answer = tokio::time::timeout(wait, asked) => answer,
    };
    let Ok(answer) = answer else {
        return Ok(None);
    };
    let responses = InputResponses::from([(INPUT_KEY.to_string(), answer?)]);
    Ok(Some(Arc::new(
        round.next(Some(&responses), ask.request_state.as_deref()),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn made(tasks: &Tasks, id: &str) {
        let mut book = tasks.book.lock().expect("the book");
        book.made
            .push_back((Instant::now(), id.to_string(), tasks.owner.clone()));
    }

    #[test]
    fn places_hold_the_running_and_the_kept_bounds() {
        let tasks = Tasks::new(Duration::ZERO);
        let held: Vec<Permit> = (0..MAX_RUNNING + 5)
            .filter_map(|_| tasks.permit())
            .collect();
        assert_eq!(held.len(), MAX_RUNNING);
        drop(held);
        // Places are given back: the running bound is free again.
        for i in 0..MAX_KEPT - 1 {
            made(&tasks, &i.to_string());
        }
        let last = tasks.permit();
        assert!(last.is_some());
        // A call that may still become a task counts as kept.
        assert!(tasks.permit().is_none());
        drop(last);
        assert!(tasks.permit().is_some());
    }

    #[test]
    fn a_session_sees_its_own_tasks_and_another_sessions_as_unknown() {
        let store = Tasks::new(DEFAULT_AFTER);
        let (a, b) = (store.for_session("a"), store.for_session("b"));
        made(&a, "t1");
        assert!(a.own("t1").is_ok());
        let other = b.own("t1").expect_err("b did not make t1");
        let unknown = b.own("t2").expect_err("nobody made t2");
        assert_eq!(
            other.message.replace("t1", "ID"),
            unknown.message.replace("t2", "ID")
        );
        // The two views share the bounds.
        let held: Vec<Permit> = (0..MAX_RUNNING).filter_map(|_| a.permit()).collect();
        assert_eq!(held.len(), MAX_RUNNING);
        assert!(b.permit().is_none());
    }
}
