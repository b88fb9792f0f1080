//! The MCP server over Streamable HTTP, stateless: several clients at once, one URL path per
//! repository from a fixed list, and nothing kept in memory between requests that another
//! server process would need (session baselines, the audit chain and the change lock are
//! per repository on disk), so several processes behind a load balancer serve one fleet.
//! The one exception is a task (see [`crate::server::tasks`]): it lives in the process
//! that made it, so a client that uses tasks must poll the same process.
//!
//! Every request is checked before it reaches a repository: the bearer token when one is
//! configured, then (inside the MCP transport) the `Host` header against the allowed hosts
//! and any `Origin` against the allowed origins, so that a web page cannot drive a server on
//! a loopback address through DNS rebinding. The server's own origin (`http://` and the
//! accepted `Host` the request named, on the port the server listens on) is accepted too. `/metrics` serves the call metrics of every
//! repository in the Prometheus text format, behind the same token. A request names its
//! session (its baseline for `diff_workspace` and `revert`) in a header (`sessions.rs`).

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;

use crate::metrics::Metrics;

mod connections;
mod sessions;
mod tasks_2025;
mod timed_io;
pub use sessions::{valid_name, OpenError, Opener, Sessions, SESSION_HEADER};

type Body = http_body_util::combinators::BoxBody<Bytes, Infallible>;

/// How the HTTP server is reached and who may use it.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// The address and port the server listens on.
    pub bind: SocketAddr,
    /// Requests must carry `Authorization: Bearer TOKEN` when set.
    pub token: Option<String>,
    /// `Host` values accepted (host or host:port); loopback names when empty.
    pub allowed_hosts: Vec<String>,
    /// `Origin` values accepted (scheme://host:port, `:*` for any port); a request with an
    /// `Origin` header is refused unless it is listed.
    pub allowed_origins: Vec<String>,
}

/// The repositories served: URL path (`/mcp` or `/mcp/NAME`) to its sessions.
#[derive(Debug, Default)]
pub struct Repositories(BTreeMap<String, Sessions>);

impl Repositories {
    /// Serves `sessions` at `/mcp/NAME`, or at `/mcp` when `name` is empty.
    ///
    /// # Errors
    /// A name that is not a plain URL path segment, or one given twice.
    pub fn add(&mut self, name: &str, sessions: Sessions) -> Result<(), String> {
        let plain = name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
        if !plain || name.starts_with('.') {
            return Err(format!(
                "repository name `{name}`: use letters, digits, `-`, `_` and `.` (not first)"
            ));
        }
        let path = if name.is_empty() {
            "/mcp".to_string()
        } else {
            format!("/mcp/{name}")
        };
        if self.0.insert(path, sessions).is_some() {
            return Err(format!("repository name `{name}` is given twice"));
        }
        Ok(())
    }

    /// The URL paths served.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }
}

/// Whether `bind` can only be reached from this machine.
pub fn is_loopback(bind: &SocketAddr) -> bool {
    bind.ip().is_loopback()
}

/// Refuses what must not start: no repository, or a non-loopback address without a token.
///
/// # Errors
/// What is wrong, as a sentence.
pub fn check(options: &HttpOptions, repos: &Repositories) -> Result<(), String> {
    if repos.0.is_empty() {
        return Err("nothing to serve: give --repo DIR or --serve NAME=DIR".into());
    }
    if !is_loopback(&options.bind) && options.token.is_none() {
        return Err(format!(
            "{} is reachable from other machines: give --http-token-file FILE (a bearer token) \
             or bind a loopback address",
            options.bind
        ));
    }
    if options.token.as_deref().is_some_and(|t| t.len() < 16) {
        return Err("the bearer token is shorter than 16 characters".into());
    }
    Ok(())
}

/// Host names accepted when none are configured.
const LOOPBACK_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];
/// Time a client has to send a request's headers (and, between requests, to start the
/// next one: an idle connection is closed after it).
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Time a client has to send a request's body once its headers are in.
const BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// The largest request body read (the MCP transport's own limit).
const MAX_BODY: usize = 4 << 20;

/// What every request is routed with.
struct Router {
    repos: BTreeMap<String, Sessions>,
    token: Option<String>,
    allowed_hosts: Vec<String>,
    /// The port the server listens on (its own origin's port).
    port: u16,
    metrics: Option<Arc<Metrics>>,
    /// Requests handled at once (tool calls among them); more wait for a slot, so that
    /// many clients cannot run more instances than the machine has room for.
    working: tokio::sync::Semaphore,
    /// Requests that only wait for a task to end ([`MAX_WAITING`]).
    waiting: tokio::sync::Semaphore,
}

impl Router {
    async fn route(&self, req: Request<Incoming>) -> Response<Body> {
        let path = req.uri().path().trim_end_matches('/').to_string();
        if let Some(refused) = self.refusal(&req, &path) {
            return refused;
        }
        if path == "/metrics" {
            return self.metrics(req.method());
        }
        let Some(sessions) = self.repos.get(&path) else {
            return text(
                StatusCode::NOT_FOUND,
                "no repository is served at this path\n",
            );
        };
        let (mut parts, body) = req.into_parts();
        // The transport refuses every Origin it was not told of; the server's own is taken
        // here, and the request goes on as one without an Origin.
        if own_origin(&parts.headers, self.port) {
            parts.headers.remove(hyper::header::ORIGIN);
        }
        let body = match read_body(body).await {
            Ok(body) => body,
            Err(refused) => return refused,
        };
        // A small body is translated first: a 2025-11-25 `tasks/result` only waits for a
        // task, so it waits in a place of its own rather than one of the working ones.
        let early = tasks_2025::small(&body)
            .then(|| tasks_2025::request(&parts.headers, body.clone(), MAX_BODY));
        let places = if early.as_ref().is_some_and(|t| t.waits) {
            &self.waiting
        } else {
            &self.working
        };
        let Ok(_slot) = places.acquire().await else {
            return text(StatusCode::SERVICE_UNAVAILABLE, "the server is stopping\n");
        };
        let sent = early.unwrap_or_else(|| tasks_2025::request(&parts.headers, body, MAX_BODY));
        let (body, patch) = (sent.body, sent.patch);
        let req = Request::from_parts(parts, Full::new(body));
        let named = req
            .headers()
            .get(SESSION_HEADER)
            .map(|v| v.to_str().unwrap_or(""));
        match sessions.service(named).await {
            Ok(service) => tasks_2025::answer(service.handle(req).await, patch).await,
            Err(e) => text(e.status(), &format!("{e}\n")),
        }
    }

    /// The answer to a request that may not go further: a Host (or absolute-form target)
    /// not served, a missing or wrong token, a web page's request for a path other than
    /// the MCP ones. The transport checks Host and Origin again on the MCP paths.
    fn refusal(&self, req: &Request<Incoming>, path: &str) -> Option<Response<Body>> {
        let mut hosts = req.headers().get_all(hyper::header::HOST).iter();
        let host = match (hosts.next(), hosts.next()) {
            (Some(one), None) => one.to_str().ok(),
            _ => None,
        };
        let target = req.uri().authority().map(|a| a.as_str());
        if !host_allowed(host, &self.allowed_hosts)
            || target.is_some_and(|t| !host_allowed(Some(t), &self.allowed_hosts))
        {
            return Some(text(StatusCode::FORBIDDEN, "this Host is not served\n"));
        }
        if let Some(token) = &self.token {
            if !bearer_matches(req, token) {
                let mut r = text(StatusCode::UNAUTHORIZED, "a bearer token is required\n");
                r.headers_mut().insert(
                    hyper::header::WWW_AUTHENTICATE,
                    hyper::header::HeaderValue::from_static("Bearer"),
                );
                return Some(r);
            }
        }
        if !self.repos.contains_key(path) && req.headers().contains_key(hyper::header::ORIGIN) {
            return Some(text(
                StatusCode::FORBIDDEN,
                "requests from web pages are served on the MCP paths only\n",
            ));
        }
        None
    }

    /// `GET /metrics`.
    fn metrics(&self, method: &hyper::Method) -> Response<Body> {
        match &self.metrics {
            Some(m) if method == hyper::Method::GET => {
                let mut r = text(StatusCode::OK, &m.encode());
                r.headers_mut().insert(
                    hyper::header::CONTENT_TYPE,
                    hyper::header::HeaderValue::from_static(
                        "application/openmetrics-text; version=1.0.0; charset=utf-8",
                    ),
                );
                r
            }
            Some(_) => text(StatusCode::METHOD_NOT_ALLOWED, "GET /metrics\n"),
            None => text(StatusCode::NOT_FOUND, "no metrics are kept\n"),
        }
    }
}

/// The whole body, read within [`BODY_TIMEOUT`] and [`MAX_BODY`] before the request reaches
/// a session, so that a client sending it slowly holds no session and no slot.
async fn read_body(body: Incoming) -> Result<Bytes, Response<Body>> {
    let collected = tokio::time::timeout(
        BODY_TIMEOUT,
        http_body_util::Limited::new(body, MAX_BODY).collect(),
    )
    .await;
    match collected {
        Ok(Ok(body)) => Ok(body.to_bytes()),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => Err(text(
            StatusCode::PAYLOAD_TOO_LARGE,
            "the request body is larger than 4 MiB\n",
        )),
        Ok(Err(_)) => Err(text(
            StatusCode::BAD_REQUEST,
            "the request body broke off\n",
        )),
        Err(_) => Err(text(
            StatusCode::REQUEST_TIMEOUT,
            "the request body took longer than 30 s to arrive\n",
        )),
    }
}

/// Whether the request's `Host` (name, or name and port) is one of `allowed`, or a
/// loopback name when `allowed` is empty. A `Host` that is not a plain authority (user
/// info, a port that is not a number, anything after it) is refused.
fn host_allowed(host: Option<&str>, allowed: &[String]) -> bool {
    let Some((name, port)) = host.and_then(authority) else {
        return false;
    };
    let defaults = LOOPBACK_NAMES.map(String::from);
    let list = if allowed.is_empty() {
        &defaults[..]
    } else {
        allowed
    };
    list.iter().any(|a| {
        // A listed IPv6 address may come without brackets.
        let listed = authority(a).or_else(|| authority(&format!("[{a}]")));
        let (a_name, a_port) = listed.unwrap_or_default();
        a_name == name && (a_port.is_none() || a_port == port)
    })
}

/// Whether the request's one `Origin` is the server's own: `http://` and the very
/// authority of its one `Host` (already accepted by [`Router::refusal`]), whose port (80
/// when none is given) is the one the server listens on. Anything else (another scheme,
/// host or port, a path, `null`, several Origins) is not.
fn own_origin(headers: &hyper::HeaderMap, port: u16) -> bool {
    let one = |name| {
        let mut all = headers.get_all(name).iter();
        match (all.next(), all.next()) {
            (Some(v), None) => v.to_str().ok(),
            _ => None,
        }
    };
    let (Some(origin), Some(host)) = (one(hyper::header::ORIGIN), one(hyper::header::HOST)) else {
        return false;
    };
    let (Some(origin), Some(host)) = (
        origin.strip_prefix("http://").and_then(authority),
        authority(host),
    ) else {
        return false;
    };
    let effective = |(name, p): (String, Option<u16>)| (name, p.unwrap_or(80));
    let (origin, host) = (effective(origin), effective(host));
    origin == host && host.1 == port
}

/// The host name (lower case, an IPv6 address without brackets) and port of `text`.
fn authority(text: &str) -> Option<(String, Option<u16>)> {
    let parsed: hyper::http::uri::Authority = text.parse().ok()?;
    if parsed.as_str().contains('@') || parsed.host().is_empty() {
        return None;
    }
    // After the host comes nothing, or `:` and a port number.
    let rest = parsed.as_str().get(parsed.host().len()..)?;
    let port = parsed.port_u16();
    if !rest.is_empty() && (!rest.starts_with(':') || port.is_none()) {
        return None;
    }
    let name = parsed.host().trim_start_matches('[').trim_end_matches(']');
    Some((name.to_ascii_lowercase(), port))
}

/// Whether the request's `Authorization` header carries `token` (scheme `Bearer` in any
/// case). The digests of both are compared in constant time, so neither the token's bytes
/// nor its length show in the time taken.
fn bearer_matches(req: &Request<Incoming>, token: &str) -> bool {
    use sha2::Digest as _;
    let Some(given) = req
        .headers()
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, t)| t.trim())
    else {
        return false;
    };
    let (a, b) = (sha2::Sha256::digest(given), sha2::Sha256::digest(token));
    a.iter().zip(b.iter()).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

/// Requests waiting for a task to end at once (each answers with the task's result, so
/// this bounds the memory their answers take besides the working places).
const MAX_WAITING: usize = 16;

/// Requests handled at once: two per core, at least four.
fn max_working() -> usize {
    std::thread::available_parallelism().map_or(4, |n| (2 * n.get()).max(4))
}

fn text(status: StatusCode, body: &str) -> Response<Body> {
    let mut r = Response::new(Full::new(Bytes::from(body.to_string())).boxed());
    *r.status_mut() = status;
    r
}

/// Serves `repos` over HTTP until the process is stopped; prints the address and the paths
/// on stderr once listening (`bind` may name port 0).
///
/// # Errors
/// A refused configuration ([`check`]) or a failure to listen, as text.
pub fn serve_http(
    options: HttpOptions,
    repos: Repositories,
    metrics: Option<Arc<Metrics>>,
) -> Result<(), String> {
    check(&options, &repos)?;
    let mut config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true);
    if !options.allowed_hosts.is_empty() {
        config = config.with_allowed_hosts(options.allowed_hosts.clone());
    }
    // An Origin header (a browser) is refused unless listed, also with an empty list.
    config = config
        .with_allowed_origins(options.allowed_origins.clone())
        .enforce_origin_validation();
    let repos = repos
        .0
        .into_iter()
        .map(|(path, sessions)| (path, sessions.configured(&config)))
        .collect::<BTreeMap<_, _>>();
    let slots = Arc::new(tokio::sync::Semaphore::new(connections::MAX_CONNECTIONS));
    // Two workers: a request that must block before it answers (a subscriptions/listen
    // stream's read checks) leaves the other to serve every other connection.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(options.bind)
            .await
            .map_err(|e| format!("cannot listen on {}: {e}", options.bind))?;
        let addr = listener
            .local_addr()
            .map_err(|e| format!("cannot read the bound address: {e}"))?;
        let router = Arc::new(Router {
            repos,
            token: options.token,
            allowed_hosts: options.allowed_hosts,
            port: addr.port(),
            metrics,
            working: tokio::sync::Semaphore::new(max_working()),
            waiting: tokio::sync::Semaphore::new(MAX_WAITING),
        });
        let paths: Vec<&str> = router.repos.keys().map(String::as_str).collect();
        eprintln!(
            "file-tools: serving MCP on http://{addr} at {}",
            paths.join(", ")
        );
        loop {
            // A slot per connection, taken before accepting: past the cap, clients wait in
            // the listen queue instead of costing memory here.
            let Ok(slot) = slots.clone().acquire_owned().await else {
                return Ok(());
            };
            let (stream, _) = match listener.accept().await {
                Ok(s) => s,
                // A failed accept (too many open files, a reset) loses that connection only;
                // the pause keeps a lasting cause from spinning the loop.
                Err(_) => {
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            };
            let router = router.clone();
            tokio::spawn(async move {
                let _slot = slot;
                connections::serve(stream, router).await;
            });
        }
    })
}

#[cfg(test)]
mod tests {
    use super::{host_allowed, own_origin};

    fn headers(pairs: &[(&'static str, &str)]) -> hyper::HeaderMap {
        let mut h = hyper::HeaderMap::new();
        for (name, value) in pairs {
            h.append(*name, value.parse().unwrap());
        }
        h
    }

    #[test]
    fn only_the_servers_own_origin_is_its_own() {
        let own = |host: &str, origin: &str| {
            own_origin(&headers(&[("host", host), ("origin", origin)]), 8123)
        };
        // Positive controls: the Host the request named, on the listening port.
        assert!(own("127.0.0.1:8123", "http://127.0.0.1:8123"));
        assert!(own("localhost:8123", "http://LOCALHOST:8123"));
        assert!(own("[::1]:8123", "http://[::1]:8123"));
        for (host, origin) in [
            ("127.0.0.1:8123", "http://evil.example"),
            ("127.0.0.1:8123", "http://evil.example:8123"),
            ("127.0.0.1:8123", "http://127.0.0.1.evil.com:8123"),
            ("127.0.0.1:8123", "http://127.0.0.1:8124"),
            ("127.0.0.1:8123", "http://127.0.0.1"),
            ("127.0.0.1:8123", "https://127.0.0.1:8123"),
            ("127.0.0.1:8123", "HTTP://127.0.0.1:8123"),
            ("127.0.0.1:8123", "null"),
            ("127.0.0.1:8123", "http://127.0.0.1:8123/"),
            ("127.0.0.1:8123", "http://user@127.0.0.1:8123"),
            ("127.0.0.1:8123", "http://localhost:8123"),
            ("127.0.0.1:8123", ""),
            // The Host names another port than the one listened on.
            ("127.0.0.1:9000", "http://127.0.0.1:9000"),
            ("127.0.0.1", "http://127.0.0.1"),
        ] {
            assert!(!own(host, origin), "{host} {origin}");
        }
        // Two Origins, or none, or no Host: not the server's own.
        let two = headers(&[
            ("host", "127.0.0.1:8123"),
            ("origin", "http://127.0.0.1:8123"),
            ("origin", "http://evil.example"),
        ]);
        assert!(!own_origin(&two, 8123));
        assert!(!own_origin(&headers(&[("host", "127.0.0.1:8123")]), 8123));
        assert!(!own_origin(
            &headers(&[("origin", "http://127.0.0.1:8123")]),
            8123
        ));
        // On port 80, a Host and Origin without a port are the server's own.
        assert!(own_origin(
            &headers(&[("host", "localhost"), ("origin", "http://localhost")]),
            80
        ));
    }

    #[test]
    fn hosts_are_matched_by_name_or_by_name_and_port() {
        let none: Vec<String> = Vec::new();
        for ok in [
            "127.0.0.1:8080",
            "localhost",
            "LOCALHOST:1",
            "[::1]:9",
            "[::1]",
        ] {
            assert!(host_allowed(Some(ok), &none), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:8080",
            "127.0.0.2:80",
            "localhost.evil:1",
            "",
        ] {
            assert!(!host_allowed(Some(bad), &none), "{bad}");
        }
        assert!(!host_allowed(None, &none));
        for bad in [
            "localhost:80x",
            "localhost:99999",
            "user@localhost",
            "localhost/x",
            "localhost:8080:1",
        ] {
            assert!(!host_allowed(Some(bad), &none), "{bad}");
        }
        let listed = vec!["app.internal".to_string(), "api.internal:8443".to_string()];
        assert!(host_allowed(Some("app.internal:1234"), &listed));
        assert!(host_allowed(Some("api.internal:8443"), &listed));
        assert!(!host_allowed(Some("api.internal:8444"), &listed));
        // A configured list replaces the loopback names.
        assert!(!host_allowed(Some("localhost:8080"), &listed));
    }
}
