//! How the HTTP server serves one connection. A connection whose request was refused (any
//! 4xx or 5xx answer) is closed after the answer, so cheap refused requests cannot keep a
//! connection slot for ever, and a client that stops reading its responses loses the
//! connection (`timed_io`). Headers must arrive within `HEADER_TIMEOUT`, which also closes
//! an idle connection.

use std::convert::Infallible;
use std::sync::Arc;

use hyper::header::{HeaderValue, CONNECTION};

use super::timed_io::{TimedIo, WRITE_STALL};
use super::{Router, HEADER_TIMEOUT};

/// Connections served at once; more wait to be accepted.
pub(super) const MAX_CONNECTIONS: usize = 256;

/// Serves the requests of one connection until it ends.
pub(super) async fn serve(stream: tokio::net::TcpStream, router: Arc<Router>) {
    let service = hyper::service::service_fn(move |req| {
        let router = router.clone();
        async move {
            let mut answer = router.route(req).await;
            if refused(answer.status()) {
                answer
                    .headers_mut()
                    .insert(CONNECTION, HeaderValue::from_static("close"));
            }
            Ok::<_, Infallible>(answer)
        }
    });
    let io = hyper_util::rt::TokioIo::new(TimedIo::new(stream, WRITE_STALL));
    // A client that goes away mid-request ends its own connection only.
    let _ = hyper::server::conn::http1::Builder::new()
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .serve_connection(io, service)
        .await;
}

/// Whether an answer refuses its request (then the connection ends with it).
fn refused(status: hyper::StatusCode) -> bool {
    status.is_client_error() || status.is_server_error()
}
