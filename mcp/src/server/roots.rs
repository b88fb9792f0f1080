//! The repository from the client's roots, for a server started without `--repo`: when the
//! client declares exactly one `file://` root, that directory is opened as the repository;
//! otherwise every request fails with a message saying why. The roots are asked once the
//! client is initialized and again whenever it says they changed.
//!
//! rmcp marks roots deprecated (SEP-2577 drops them from the 2026-07-28 revision); clients
//! of 2025-11-25 and earlier, which negotiate through `initialize`, still use them.
#![allow(deprecated)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rmcp::model::Root;
use rmcp::{Peer, RoleServer};

use super::repo::State;
use super::McpServer;
use file_tools_host::session::Session;

/// Opens a session on a directory the roots named (the CLI's flags applied).
pub type Opener = Arc<dyn Fn(&Path) -> Result<Session, String> + Send + Sync>;

/// The one `file://` root's directory.
///
/// # Errors
/// Why none can be chosen.
pub fn choose(roots: &[Root]) -> Result<PathBuf, String> {
    let files: Vec<&Root> = roots
        .iter()
        .filter(|r| r.uri.starts_with("file://"))
        .collect();
    let [root] = files.as_slice() else {
        return Err(format!(
            "no repository: the server was started without --repo and the client declares {} \
             file:// root(s) ({} in all); it needs exactly one, or --repo DIR",
            files.len(),
            roots.len()
        ));
    };
    // `file:///dir` or `file://localhost/dir`; nothing else names a local directory.
    let local = root
        .uri
        .strip_prefix("file://localhost/")
        .or_else(|| root.uri.strip_prefix("file:///"))
        .ok_or_else(|| format!("the root {} is not a local directory", root.uri))?;
    let path = super::resources::path_of(&format!("file:///{local}"))
        .map_err(|e| format!("the root {} is malformed: {}", root.uri, e.message))?;
    Ok(PathBuf::from(format!("/{path}")))
}

/// Why a server without `--repo` has no repository for a 2026-07-28 client.
const NO_ROOTS_IN_2026: &str = "no repository: the server was started without --repo, and a \
    client of the 2026-07-28 revision declares no roots (the revision dropped them); start the \
    server with --repo DIR";

impl McpServer {
    /// For a request of a 2026-07-28 client (`modern`) to a server waiting for roots: such
    /// a client never names any, so every request says so at once instead of waiting.
    pub(crate) fn roots_never_come(&self, modern: bool) {
        if modern && self.opener.is_some() {
            self.repo.give_up_waiting(NO_ROOTS_IN_2026);
        }
    }

    /// Asks the client for its roots and opens (or closes) the repository accordingly. A
    /// root that names the repository already open changes nothing.
    pub(crate) async fn refresh_roots(&self, peer: &Peer<RoleServer>) {
        let Some(opener) = self.opener.clone() else {
            return;
        };
        let listed = peer.list_roots().await;
        let chosen = match listed {
            Ok(r) => choose(&r.roots),
            Err(e) => Err(format!(
                "no repository: the server was started without --repo and the client's roots \
                 could not be read ({e})"
            )),
        };
        // The slot's lock is held for the length of a call: wait for it off the runtime's
        // thread, so that a long call does not hold up the server's other messages.
        let repo = self.repo.clone();
        let subscriptions = self.subscriptions.clone();
        let _ = tokio::task::spawn_blocking(move || {
            let state = match chosen {
                Err(why) => State::Missing(why),
                Ok(dir) => {
                    let same = std::fs::canonicalize(&dir)
                        .ok()
                        .is_some_and(|d| repo.repo().as_deref() == Some(d.as_path()));
                    if same {
                        return;
                    }
                    match opener(&dir) {
                        Ok(session) => State::Open(Box::new(session)),
                        Err(e) => {
                            State::Missing(format!("the client's root cannot be opened: {e}"))
                        }
                    }
                }
            };
            repo.set(state);
            // The subscriptions' watch follows the repository.
            if let Some(s) = subscriptions {
                s.restart(&repo);
            }
        })
        .await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(uri: &str) -> Root {
        serde_json::from_value(serde_json::json!({ "uri": uri })).expect("a root")
    }

    #[test]
    fn exactly_one_file_root_is_chosen() {
        assert_eq!(
            choose(&[root("file:///work/my%20repo")]).unwrap(),
            PathBuf::from("/work/my repo")
        );
        assert_eq!(
            choose(&[root("https://x.example/"), root("file://localhost/srv/r")]).unwrap(),
            PathBuf::from("/srv/r")
        );
        for roots in [
            vec![],
            vec![root("file:///a"), root("file:///b")],
            vec![root("https://x/")],
        ] {
            let e = choose(&roots).unwrap_err();
            assert!(e.contains("exactly one"), "{e}");
        }
        assert!(choose(&[root("file://other-host/a")]).is_err());
    }
}
