//! Subscriptions to file resources and the `notifications/resources/updated` they bring.
//! Clients before 2026-07-28 use `resources/subscribe` and `resources/unsubscribe`, on a
//! transport that keeps its connection open (stdio); a 2026-07-28 client opens a
//! `subscriptions/listen` stream naming its URIs, and cancels the request to end it, over
//! stdio or the stateless HTTP server (whose notifications can only go on a request's own
//! response, so it refuses `resources/subscribe`: [`Subscriptions::listen_only`]). Each
//! stream hears only of its own URIs, its notifications stamped with its id.
//!
//! A subscription is accepted only for a URI that `resources/read` would serve: the check
//! is a `read_file` of its first line, so a file the read policy blocks, a reserved path
//! and a missing file are refused exactly as reading refuses them (a blocked name answers
//! the same whether or not it exists: subscribing is no existence oracle), and each
//! subscription is audited as that read. A listen stream's acknowledgment honours every
//! well-formed `file:///` URI it names, whatever the file (so it tells nothing either);
//! notifications then come only for the URIs that passed the same read check.
//!
//! The first subscription starts one [`file_tools_host::watch()`] on the repository, in the server's
//! own session; the last unsubscription (or the end of the server) stops it. Each delivery
//! of the watch is `changes_since` through the read policy, debounced: the client hears of
//! a subscribed file that was created, modified or deleted, once per burst of writes, and
//! never of a path that `changes_since` does not show. Raw file-system events name no file
//! to anyone.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{ResourceUpdatedNotificationParam, SubscriptionFilter};
use rmcp::service::SubscriptionContext;
use rmcp::{ErrorData, Peer, RoleServer};
use serde_json::json;
use tokio::sync::mpsc;

use super::repo::RepoSlot;
use super::resources::path_of;
use super::McpServer;
use file_tools_host::bindings::agent::file_tools::types::ToolError;
use file_tools_host::bindings::exports::agent::file_tools::tools::{
    ChangesSinceArgs, ChangesSinceResult,
};
use file_tools_host::watch::{watch, Watch, WatchEvent, WatchOptions};

/// The subscribed URIs, each with the repository path it names.
type Subscribed = BTreeMap<String, String>;

/// Who hears of a subscribed file: the connection's `resources/subscribe` list
/// ([`LEGACY`]) or one `subscriptions/listen` stream.
type Owner = u64;
const LEGACY: Owner = 0;

/// The URIs one owner subscribed to, and where their notifications go.
struct Subscriber {
    uris: Subscribed,
    notify: mpsc::UnboundedSender<String>,
}

/// The subscriptions of one connection and the watch that serves them.
#[derive(Default)]
pub(crate) struct Subscriptions {
    /// Shared with the watch's callback, which takes it only briefly and never `watch`.
    subscribers: Arc<Mutex<BTreeMap<Owner, Subscriber>>>,
    /// The watch while there is a subscription. Held while subscriptions are added or
    /// removed, so that the watch starts and stops with them.
    watch: Mutex<Option<Watch>>,
    /// The last listen stream's owner number.
    listens: AtomicU64,
    /// Listen streams subscribed to, by their granted URIs, and not yet served: each
    /// owner with the channel of its notifications.
    pending: Mutex<BTreeMap<Vec<String>, Vec<Pending>>>,
    /// Only listen streams: the transport cannot send a notification outside a request's
    /// own response, so `resources/subscribe` is not offered.
    listen_only: bool,
}

/// A listen stream subscribed to and not yet served.
type Pending = (Owner, mpsc::UnboundedReceiver<String>);

impl std::fmt::Debug for Subscriptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscriptions").finish_non_exhaustive()
    }
}

fn poisoned() -> ErrorData {
    ErrorData::internal_error(
        "an earlier subscription request panicked inside the host; restart the server",
        None,
    )
}

/// The watch's scope: hidden files included (a dotfile the read policy allows can be
/// subscribed to), ignore rules honoured as in `changes_since` by default.
fn options() -> WatchOptions {
    let mut o = WatchOptions::default();
    o.scope.include_hidden = Some(true);
    o
}

/// The subscribed URIs that name a path of `changes`.
fn to_notify(subscribed: &Subscribed, changes: &ChangesSinceResult) -> Vec<String> {
    let changed: BTreeSet<&str> = changes.changes.iter().map(|c| c.path.as_str()).collect();
    subscribed
        .iter()
        .filter(|(_, path)| changed.contains(path.as_str()))
        .map(|(uri, _)| uri.clone())
        .collect()
}

/// Sends each owner the URIs `pick` chooses among its own.
fn deliver_to(
    subscribers: &Mutex<BTreeMap<Owner, Subscriber>>,
    pick: impl Fn(&Subscribed) -> Vec<String>,
) {
    let Ok(subscribers) = subscribers.lock() else {
        return;
    };
    for s in subscribers.values() {
        for uri in pick(&s.uris) {
            let _ = s.notify.send(uri);
        }
    }
}

impl Subscriptions {
    /// Subscriptions of a transport that offers listen streams only.
    pub(crate) fn listen_only() -> Subscriptions {
        Subscriptions {
            listen_only: true,
            ..Subscriptions::default()
        }
    }

    /// Starts a watch on `repo` whose deliveries go, as URIs, to the subscribers.
    fn start(&self, repo: &Arc<RepoSlot>) -> Result<Watch, ErrorData> {
        let subscribers = Arc::clone(&self.subscribers);
        let deliver = move |event: WatchEvent| match event {
            WatchEvent::Changes(changes) => deliver_to(&subscribers, |s| to_notify(s, &changes)),
            // Changes may have been missed: every subscribed file may have changed.
            WatchEvent::Restarted(why) => {
                eprintln!("file-tools: the watch for resource subscriptions restarted: {why:?}");
                deliver_to(&subscribers, |s| s.keys().cloned().collect());
            }
            other => eprintln!("file-tools: the watch for resource subscriptions: {other:?}"),
        };
        watch(Arc::clone(repo), options(), deliver).map_err(|e| {
            ErrorData::internal_error(format!("cannot watch the repository: {e}"), None)
        })
    }

    /// A number for a new listen stream.
    fn new_owner(&self) -> Owner {
        self.listens.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Adds `uri` (naming `path`) for `owner`, starting the watch when it is the first;
    /// `notify` makes the owner's channel when it has none yet.
    fn add(
        &self,
        owner: Owner,
        uri: String,
        path: String,
        repo: &Arc<RepoSlot>,
        notify: impl FnOnce() -> mpsc::UnboundedSender<String>,
    ) -> Result<(), ErrorData> {
        let mut watch = self.watch.lock().map_err(|_| poisoned())?;
        if watch.is_none() {
            *watch = Some(self.start(repo)?);
        }
        self.subscribers
            .lock()
            .map_err(|_| poisoned())?
            .entry(owner)
            .or_insert_with(|| Subscriber {
                uris: Subscribed::new(),
                notify: notify(),
            })
            .uris
            .insert(uri, path);
        Ok(())
    }

    /// Removes `uri` of `owner` (every URI of it when `None`), stopping the watch when
    /// nothing remains subscribed.
    fn remove(&self, owner: Owner, uri: Option<&str>) -> Result<(), ErrorData> {
        let mut watch = self.watch.lock().map_err(|_| poisoned())?;
        let mut subscribers = self.subscribers.lock().map_err(|_| poisoned())?;
        if let Some(s) = subscribers.get_mut(&owner) {
            if let Some(uri) = uri {
                s.uris.remove(uri);
            }
            if uri.is_none() || s.uris.is_empty() {
                // Its channel closes: the task sending its notifications ends.
                subscribers.remove(&owner);
            }
        }
        let stopped = if subscribers.is_empty() {
            watch.take()
        } else {
            None
        };
        drop(subscribers);
        drop(watch);
        // Dropping the watch waits for its thread, which may be waiting for the session.
        drop(stopped);
        Ok(())
    }

    /// Moves the watch to the repository `repo` holds now (the client's roots changed),
    /// keeping the subscriptions; without a repository the watch stops.
    pub(crate) fn restart(&self, repo: &Arc<RepoSlot>) {
        let Ok(mut watch) = self.watch.lock() else {
            return;
        };
        let Some(old) = watch.take() else {
            return;
        };
        drop(old);
        match self.start(repo) {
            Ok(w) => *watch = Some(w),
            Err(e) => eprintln!(
                "file-tools: resource subscriptions no longer notify: {}",
                e.message
            ),
        }
    }

    /// Stops the watch and forgets every subscription (the server ends).
    pub(crate) fn close(&self) {
        if let Ok(mut p) = self.pending.lock() {
            p.clear();
        }
        let stopped = self.watch.lock().ok().and_then(|mut w| w.take());
        if let Ok(mut s) = self.subscribers.lock() {
            s.clear();
        }
        drop(stopped);
    }
}

/// Sends each URI that comes as a `notifications/resources/updated`, in order, until the
/// watch stops or the client goes away.
async fn send_all(peer: Peer<RoleServer>, mut rx: mpsc::UnboundedReceiver<String>) {
    while let Some(uri) = rx.recv().await {
        if peer
            .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
            .await
            .is_err()
        {
            break;
        }
    }
}

/// URIs one listen stream is granted (each costs a read check when the stream opens); the
/// first ones named are kept.
const MAX_LISTEN_URIS: usize = 256;

/// Ends a listen stream's subscriptions however its future ends (a cancelled request's
/// future may simply be dropped).
struct Unlisten(Arc<Subscriptions>, Owner);

impl Drop for Unlisten {
    fn drop(&mut self) {
        let _ = self.0.remove(self.1, None);
    }
}

impl McpServer {
    /// The read check of a subscription to `uri`: the repository path it names, as the
    /// tool spells it, when `read_file` serves it; the tool's refusal otherwise.
    fn subscribable(&self, uri: &str) -> Result<String, ErrorData> {
        let path = path_of(uri)?;
        let read = self.tool("read_file", json!({ "path": path, "max_lines": 1 }))?;
        // The tool's own spelling of the path is the one `changes_since` reports.
        Ok(read["path"].as_str().map_or(path, str::to_string))
    }

    /// The subscriptions `resources/subscribe` adds to, on a transport that offers them.
    fn legacy_subscriptions(&self) -> Result<Arc<Subscriptions>, ErrorData> {
        match &self.subscriptions {
            None => Err(not_offered()),
            Some(subs) if subs.listen_only => Err(listen_instead()),
            Some(subs) => Ok(Arc::clone(subs)),
        }
    }

    /// Subscribes the client to a file: refused as `resources/read` would refuse it.
    ///
    /// # Errors
    /// Method-not-found on a transport without subscriptions; invalid params for a
    /// malformed URI; resource-not-found when the file cannot be read (blocked, reserved
    /// or missing alike); internal when the watch cannot start.
    pub(crate) async fn subscribe_to(
        &self,
        uri: String,
        peer: Peer<RoleServer>,
    ) -> Result<(), ErrorData> {
        let subs = self.legacy_subscriptions()?;
        let runtime = tokio::runtime::Handle::current();
        self.blocking(move |s| {
            let path = s.subscribable(&uri)?;
            subs.add(LEGACY, uri, path, &s.repo, || {
                let (tx, rx) = mpsc::unbounded_channel();
                runtime.spawn(send_all(peer, rx));
                tx
            })
        })
        .await
    }

    /// Ends the client's subscription to `uri` (nothing to end is no error).
    ///
    /// # Errors
    /// Method-not-found on a transport without subscriptions; invalid params for a
    /// malformed URI.
    pub(crate) async fn unsubscribe_from(&self, uri: String) -> Result<(), ErrorData> {
        let subs = self.legacy_subscriptions()?;
        path_of(&uri)?;
        self.blocking(move |_| subs.remove(LEGACY, Some(&uri)))
            .await
    }

    /// What a `subscriptions/listen` request is granted: its first [`MAX_LISTEN_URIS`]
    /// distinct well-formed `file:///` URIs (each as often as named), whatever the files
    /// (nothing else is offered); `None` on a transport without subscriptions, where the
    /// method is not offered.
    ///
    /// The stream's subscriptions are made here, before rmcp acknowledges it, so that a
    /// change the client makes once acknowledged is heard of: each granted URI that passes
    /// the read check is watched. They wait, by their granted URIs, for [`Self::listen_on`]
    /// (streams granted the same URIs are alike). When the watch cannot start, nothing is
    /// granted.
    pub(crate) fn listen_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let subs = self.subscriptions.clone()?;
        let named = requested.resource_subscriptions.iter().flatten();
        // The first distinct well-formed URIs; then every URI named that is one of them, in
        // the order named and as often: rmcp acknowledges the requested URIs found among
        // those granted (a repeat past the first ones included), and [`Self::listen_on`]
        // finds the stream by exactly that list.
        let mut distinct: Vec<&String> = Vec::new();
        let mut seen: BTreeSet<&String> = BTreeSet::new();
        for uri in named.clone() {
            if distinct.len() == MAX_LISTEN_URIS {
                break;
            }
            if !seen.contains(uri) && path_of(uri).is_ok() {
                seen.insert(uri);
                distinct.push(uri);
            }
        }
        let uris: Vec<String> = named.filter(|uri| seen.contains(uri)).cloned().collect();
        let owner = subs.new_owner();
        let (tx, rx) = mpsc::unbounded_channel();
        let register = || -> Result<(), ErrorData> {
            for &uri in &distinct {
                // A URI reading refuses is never heard of; the others still are.
                if let Ok(path) = self.subscribable(uri) {
                    subs.add(owner, uri.clone(), path, &self.repo, || tx.clone())?;
                }
            }
            Ok(())
        };
        // The checks block: on a runtime with other workers (the stdio and HTTP servers'),
        // they serve the connections meanwhile; on a runtime of one thread (an embedder's)
        // they run on a thread of their own, since the session's calls may not run inside
        // the runtime.
        let multi = tokio::runtime::Handle::try_current()
            .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
        let registered = if multi {
            tokio::task::block_in_place(register)
        } else {
            std::thread::scope(|scope| {
                scope.spawn(register).join().unwrap_or_else(|_| {
                    Err(ErrorData::internal_error(
                        "the read checks of a subscriptions/listen stream failed",
                        None,
                    ))
                })
            })
        };
        let mut granted = SubscriptionFilter::new();
        if let Err(e) = registered {
            eprintln!(
                "file-tools: a subscriptions/listen stream gets nothing: {}",
                e.message
            );
            let _ = subs.remove(owner, None);
            return Some(granted);
        }
        if let Ok(mut pending) = subs.pending.lock() {
            pending.entry(uris.clone()).or_default().push((owner, rx));
        }
        granted.resource_subscriptions = (!uris.is_empty()).then_some(uris);
        Some(granted)
    }

    /// Serves one acknowledged `subscriptions/listen` stream until the client cancels it:
    /// the changes of the files [`Self::listen_filter`] subscribed it to are sent on it.
    ///
    /// # Errors
    /// None so far; the stream ends when the client cancels it.
    pub(crate) async fn listen_on(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let granted = context
            .accepted()
            .resource_subscriptions
            .clone()
            .unwrap_or_default();
        let taken = self.subscriptions.as_ref().and_then(|subs| {
            let mut pending = subs.pending.lock().ok()?;
            let waiting = pending.get_mut(&granted)?;
            let taken = waiting.pop();
            if waiting.is_empty() {
                pending.remove(&granted);
            }
            Some((Arc::clone(subs), taken?))
        });
        let Some((subs, (owner, mut rx))) = taken else {
            context.cancelled().await;
            return Ok(());
        };
        let _unlisten = Unlisten(subs, owner);
        let sink = context.sink().clone();
        let forward = tokio::spawn(async move {
            while let Some(uri) = rx.recv().await {
                if sink.notify_resource_updated(uri).await.is_err() {
                    break;
                }
            }
        });
        context.cancelled().await;
        forward.abort();
        Ok(())
    }
}

fn listen_instead() -> ErrorData {
    ErrorData::new(
        rmcp::model::ErrorCode::METHOD_NOT_FOUND,
        "over stateless HTTP the server sends notifications only on a request's own response: \
         a client of the 2026-07-28 revision subscribes with subscriptions/listen",
        None,
    )
}

fn not_offered() -> ErrorData {
    ErrorData::new(
        rmcp::model::ErrorCode::METHOD_NOT_FOUND,
        "this transport cannot send notifications, so it offers no resource subscriptions",
        None,
    )
}

/// A watch ([`file_tools_host::watch()`]) can run in the server's own session, as the watch of its
/// subscriptions does (through the repository slot, so that it holds no server alive).
impl file_tools_host::watch::WatchedSession for McpServer {
    fn repo_dir(&self) -> Option<std::path::PathBuf> {
        self.repo.repo()
    }

    fn changes_since(&self, args: &ChangesSinceArgs) -> Result<ChangesSinceResult, ToolError> {
        file_tools_host::watch::WatchedSession::changes_since(&*self.repo, args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use file_tools_host::bindings::exports::agent::file_tools::tools::{Change, ChangeKind};

    fn changes(paths: &[&str]) -> ChangesSinceResult {
        ChangesSinceResult {
            changes: paths
                .iter()
                .map(|p| Change {
                    path: (*p).to_string(),
                    change: ChangeKind::Modified,
                    size: None,
                    sha256: None,
                })
                .collect(),
            token: String::new(),
            created: 0,
            modified: paths.len() as u32,
            deleted: 0,
            rehashed: 0,
            truncated: false,
            stopped_by: None,
            next_cursor: None,
            summary: String::new(),
        }
    }

    #[test]
    fn only_subscribed_uris_of_changed_paths_are_notified() {
        let subscribed: Subscribed = [
            ("file:///a%20b.txt", "a b.txt"),
            ("file:///a b.txt", "a b.txt"),
            ("file:///src/lib.rs", "src/lib.rs"),
        ]
        .into_iter()
        .map(|(u, p)| (u.to_string(), p.to_string()))
        .collect();
        let got = to_notify(&subscribed, &changes(&["a b.txt", "README.md"]));
        assert_eq!(got, vec!["file:///a b.txt", "file:///a%20b.txt"]);
        assert!(to_notify(&subscribed, &changes(&["src/lib.rs.bak"])).is_empty());
    }
}
