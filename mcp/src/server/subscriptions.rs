//! Subscriptions to file resources (`resources/subscribe`, `resources/unsubscribe`) and the
//! `notifications/resources/updated` they bring, for a transport that keeps its connection
//! open (stdio; the stateless HTTP server has no way to send them and does not offer them).
//!
//! A subscription is accepted only for a URI that `resources/read` would serve: the check
//! is a `read_file` of its first line, so a file the read policy blocks, a reserved path
//! and a missing file are refused exactly as reading refuses them (a blocked name answers
//! the same whether or not it exists: subscribing is no existence oracle), and each
//! subscription is audited as that read.
//!
//! The first subscription starts one [`file_tools_host::watch()`] on the repository, in the server's
//! own session; the last unsubscription (or the end of the server) stops it. Each delivery
//! of the watch is `changes_since` through the read policy, debounced: the client hears of
//! a subscribed file that was created, modified or deleted, once per burst of writes, and
//! never of a path that `changes_since` does not show. Raw file-system events name no file
//! to anyone.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use rmcp::model::ResourceUpdatedNotificationParam;
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

/// The subscriptions of one connection and the watch that serves them.
#[derive(Default)]
pub(crate) struct Subscriptions {
    /// Shared with the watch's callback, which takes it only briefly and never `running`.
    subscribed: Arc<Mutex<Subscribed>>,
    /// The watch while there is a subscription. Held while subscriptions are added or
    /// removed, so that the watch starts and stops with them.
    running: Mutex<Option<Running>>,
}

impl std::fmt::Debug for Subscriptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscriptions").finish_non_exhaustive()
    }
}

struct Running {
    watch: Watch,
    /// The queue of URIs to notify, emptied in order by one task.
    notify: mpsc::UnboundedSender<String>,
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

impl Subscriptions {
    /// Starts a watch on `repo` whose deliveries go, as URIs, to `notify`.
    fn start(
        &self,
        repo: &Arc<RepoSlot>,
        notify: mpsc::UnboundedSender<String>,
    ) -> Result<Running, ErrorData> {
        let subscribed = Arc::clone(&self.subscribed);
        let tx = notify.clone();
        let deliver = move |event: WatchEvent| match event {
            WatchEvent::Changes(changes) => {
                let uris = match subscribed.lock() {
                    Ok(s) => to_notify(&s, &changes),
                    Err(_) => return,
                };
                for uri in uris {
                    let _ = tx.send(uri);
                }
            }
            // Changes may have been missed: every subscribed file may have changed.
            WatchEvent::Restarted(why) => {
                eprintln!("file-tools: the watch for resource subscriptions restarted: {why:?}");
                let uris: Vec<String> = match subscribed.lock() {
                    Ok(s) => s.keys().cloned().collect(),
                    Err(_) => return,
                };
                for uri in uris {
                    let _ = tx.send(uri);
                }
            }
            other => eprintln!("file-tools: the watch for resource subscriptions: {other:?}"),
        };
        let watch = watch(Arc::clone(repo), options(), deliver).map_err(|e| {
            ErrorData::internal_error(format!("cannot watch the repository: {e}"), None)
        })?;
        Ok(Running { watch, notify })
    }

    /// Adds `uri` (naming `path`), starting the watch when it is the first; `peer` and
    /// `runtime` send the notifications.
    fn add(
        &self,
        uri: String,
        path: String,
        repo: &Arc<RepoSlot>,
        peer: Peer<RoleServer>,
        runtime: &tokio::runtime::Handle,
    ) -> Result<(), ErrorData> {
        let mut running = self.running.lock().map_err(|_| poisoned())?;
        if running.is_none() {
            let (tx, rx) = mpsc::unbounded_channel();
            *running = Some(self.start(repo, tx)?);
            runtime.spawn(send_all(peer, rx));
        }
        self.subscribed
            .lock()
            .map_err(|_| poisoned())?
            .insert(uri, path);
        Ok(())
    }

    /// Removes `uri`, stopping the watch when it was the last.
    fn remove(&self, uri: &str) -> Result<(), ErrorData> {
        let mut running = self.running.lock().map_err(|_| poisoned())?;
        let mut subscribed = self.subscribed.lock().map_err(|_| poisoned())?;
        subscribed.remove(uri);
        let stopped = if subscribed.is_empty() {
            running.take()
        } else {
            None
        };
        drop(subscribed);
        drop(running);
        // Dropping the watch waits for its thread, which may be waiting for the session.
        drop(stopped);
        Ok(())
    }

    /// Moves the watch to the repository `repo` holds now (the client's roots changed),
    /// keeping the subscriptions; without a repository the watch stops.
    pub(crate) fn restart(&self, repo: &Arc<RepoSlot>) {
        let Ok(mut running) = self.running.lock() else {
            return;
        };
        let Some(old) = running.take() else {
            return;
        };
        let Running { watch, notify } = old;
        drop(watch);
        match self.start(repo, notify) {
            Ok(r) => *running = Some(r),
            Err(e) => eprintln!(
                "file-tools: resource subscriptions no longer notify: {}",
                e.message
            ),
        }
    }

    /// Stops the watch and forgets every subscription (the server ends).
    pub(crate) fn close(&self) {
        let stopped = self.running.lock().ok().and_then(|mut r| r.take());
        if let Ok(mut s) = self.subscribed.lock() {
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

impl McpServer {
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
        let Some(subs) = self.subscriptions.clone() else {
            return Err(not_offered());
        };
        let runtime = tokio::runtime::Handle::current();
        self.blocking(move |s| {
            let path = path_of(&uri)?;
            let read = s.tool("read_file", json!({ "path": path, "max_lines": 1 }))?;
            // The tool's own spelling of the path is the one `changes_since` reports.
            let path = read["path"].as_str().map_or(path, str::to_string);
            subs.add(uri, path, &s.repo, peer, &runtime)
        })
        .await
    }

    /// Ends the client's subscription to `uri` (nothing to end is no error).
    ///
    /// # Errors
    /// Method-not-found on a transport without subscriptions; invalid params for a
    /// malformed URI.
    pub(crate) async fn unsubscribe_from(&self, uri: String) -> Result<(), ErrorData> {
        let Some(subs) = self.subscriptions.clone() else {
            return Err(not_offered());
        };
        path_of(&uri)?;
        self.blocking(move |_| subs.remove(&uri)).await
    }
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
