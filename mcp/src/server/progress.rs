//! Progress notifications for a call whose request carries a progress token: the
//! component's reports (files scanned, matches so far) become `notifications/progress`,
//! at most one per [`MIN_INTERVAL`], sent in order by one task.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};
use tokio::sync::mpsc;

use file_tools_host::call::{Progress, ProgressUpdate};

/// The least time between two notifications of one call.
pub const MIN_INTERVAL: Duration = Duration::from_millis(100);

/// A [`Progress`] sink that forwards throttled updates to the client.
pub(crate) struct Notifier {
    tx: mpsc::UnboundedSender<ProgressUpdate>,
    last: Mutex<Option<Instant>>,
}

impl Notifier {
    /// A notifier for the request `context`, when it carries a progress token.
    pub(crate) fn for_request(context: &RequestContext<RoleServer>) -> Option<Notifier> {
        let token = context.meta.get_progress_token()?;
        Some(Notifier::start(context.peer.clone(), token))
    }

    /// A notifier for `token`, and the task (spawned on the current runtime) that sends
    /// its notifications through `peer` until the notifier is dropped.
    pub(crate) fn start(peer: Peer<RoleServer>, token: ProgressToken) -> Notifier {
        let (tx, mut rx) = mpsc::unbounded_channel::<ProgressUpdate>();
        tokio::spawn(async move {
            while let Some(u) = rx.recv().await {
                let scanned = if u.files_scanned == 1 {
                    "file"
                } else {
                    "files"
                };
                let param = ProgressNotificationParam::new(token.clone(), u.files_scanned as f64)
                    .with_message(format!(
                        "{} {scanned} scanned, {} matches so far",
                        u.files_scanned, u.matches
                    ));
                // A client that went away just misses the rest.
                if peer.notify_progress(param).await.is_err() {
                    break;
                }
            }
        });
        Notifier {
            tx,
            last: Mutex::new(None),
        }
    }
}

impl Progress for Notifier {
    fn update(&self, update: ProgressUpdate) {
        let now = Instant::now();
        let Ok(mut last) = self.last.lock() else {
            return;
        };
        if last.is_some_and(|l| now.duration_since(l) < MIN_INTERVAL) {
            return;
        }
        *last = Some(now);
        let _ = self.tx.send(update);
    }
}
