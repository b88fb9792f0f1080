//! The sessions of one repository served over HTTP. A request names its session in the
//! `File-Tools-Session` header (the server's `--session` when it names none), and each
//! session has its own baseline, so one client's `revert` never undoes another's changes.
//!
//! A session's baseline lives in its state directory on disk, not in the server: at most
//! `MAX_OPEN` sessions per repository are held open, the least recently used is closed when
//! another is needed, and reopening it (in this process or another) finds its baseline again.

use std::sync::Arc;

use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use crate::server::McpServer;

/// The header that names a request's session.
pub const SESSION_HEADER: &str = "file-tools-session";
/// Sessions held open per repository.
const MAX_OPEN: usize = 16;

pub(super) type Service = StreamableHttpService<McpServer, NeverSessionManager>;

/// Opens the server of a named session (its baseline in that session's state directory).
pub type Opener = Box<dyn Fn(&str) -> Result<McpServer, OpenError> + Send + Sync>;

/// Why an [`Opener`] could not open a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpenError {
    /// The repository keeps as many sessions as it may: the client should reuse a name.
    TooMany,
    /// Anything else, for the server's log only (it may name host paths).
    Failed(String),
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenError::TooMany => f.write_str("the repository keeps as many sessions as it may"),
            OpenError::Failed(why) => f.write_str(why),
        }
    }
}

/// One repository's sessions.
pub struct Sessions {
    opener: Arc<Opener>,
    default: String,
    first: Option<McpServer>,
    config: StreamableHttpServerConfig,
    /// Open sessions, least recently used first.
    open: tokio::sync::Mutex<Vec<(String, Service)>>,
}

impl std::fmt::Debug for Sessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sessions")
            .field("default", &self.default)
            .finish_non_exhaustive()
    }
}

impl Sessions {
    /// A repository whose default session, `default`, is `first` (opened by the caller, so
    /// that a repository that cannot be served stops the server at start); `opener` opens
    /// the others when a request names them.
    pub fn new(default: &str, first: McpServer, opener: Opener) -> Self {
        Sessions {
            opener: Arc::new(opener),
            default: default.to_string(),
            first: Some(first),
            config: StreamableHttpServerConfig::default(),
            open: tokio::sync::Mutex::new(Vec::new()),
        }
    }

    /// Serves every session with the transport settings `config`.
    pub(super) fn configured(mut self, config: &StreamableHttpServerConfig) -> Self {
        self.config = config.clone();
        if let Some(first) = self.first.take() {
            let service = service(first, &self.config);
            self.open.get_mut().push((self.default.clone(), service));
        }
        self
    }

    /// The service of the session `name` (the default one when `None`), opened if needed.
    ///
    /// # Errors
    /// A name that is not 1 to 64 letters, digits, `-` or `_`, or a session that cannot be
    /// opened (why is written to stderr: it may name host paths the client must not see).
    pub(super) async fn service(&self, name: Option<&str>) -> Result<Service, SessionError> {
        let name = name.unwrap_or(&self.default);
        if !valid_name(name) {
            return Err(SessionError::BadName);
        }
        let mut open = self.open.lock().await;
        if let Some(i) = open.iter().position(|(n, _)| n == name) {
            let entry = open.remove(i);
            let found = entry.1.clone();
            open.push(entry);
            return Ok(found);
        }
        let (opener, owned) = (self.opener.clone(), name.to_string());
        let opened = tokio::task::spawn_blocking(move || opener(&owned))
            .await
            .unwrap_or_else(|e| Err(OpenError::Failed(format!("the opening thread failed: {e}"))));
        let server = opened.map_err(|e| {
            eprintln!("file-tools: cannot open session `{name}`: {e}");
            match e {
                OpenError::TooMany => SessionError::TooMany,
                OpenError::Failed(_) => SessionError::CannotOpen,
            }
        })?;
        let made = service(server, &self.config);
        if open.len() >= MAX_OPEN {
            open.remove(0);
        }
        open.push((name.to_string(), made.clone()));
        Ok(made)
    }
}

/// Why a request's session could not be had.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SessionError {
    BadName,
    TooMany,
    CannotOpen,
}

impl SessionError {
    pub(super) fn status(self) -> hyper::StatusCode {
        match self {
            SessionError::BadName => hyper::StatusCode::BAD_REQUEST,
            SessionError::TooMany => hyper::StatusCode::SERVICE_UNAVAILABLE,
            SessionError::CannotOpen => hyper::StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl std::fmt::Display for SessionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SessionError::BadName => write!(
                f,
                "the {SESSION_HEADER} header names a session with 1 to 64 letters, digits, '-' or '_'"
            ),
            SessionError::TooMany => f.write_str(
                "this repository keeps as many sessions as it may; name one already in use",
            ),
            SessionError::CannotOpen => {
                f.write_str("the session cannot be opened; the server's log says why")
            }
        }
    }
}

fn service(server: McpServer, config: &StreamableHttpServerConfig) -> Service {
    // A listen stream's notifications go on its own response; nothing else can reach a
    // client of a stateless server.
    let server = server.with_listen_streams();
    StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(NeverSessionManager::default()),
        config.clone(),
    )
}

/// The names `--session` takes: 1 to 64 letters, digits, `-` or `_`.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}
