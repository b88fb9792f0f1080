//! The translation of the 2025-11-25 form of tasks ([`crate::wire`]) on one HTTP request:
//! the request body on its way in, and the answer's JSON body on its way out when the
//! request was an `initialize` or a `tools/list` of such a client.

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::header::{HeaderMap, CONTENT_LENGTH, CONTENT_TYPE};
use hyper::Response;
use serde_json::Value;

use super::Body;
use crate::wire::{outbound, translate, Patch, REVISION};

/// The header in which a client names the revision it negotiated.
const VERSION_HEADER: &str = "mcp-protocol-version";

/// The largest body translated before its request takes a place: a `tasks/result`
/// request, which waits in a place of its own, is small.
const MAX_WAITING_BODY: usize = 4096;

/// A request body as the server takes it.
pub(super) struct Translated {
    pub(super) body: Bytes,
    /// What the answer needs.
    pub(super) patch: Option<Patch>,
    /// A 2025-11-25 `tasks/result`: it only waits for a task to end.
    pub(super) waits: bool,
}

/// Whether `body` is small enough to be translated before its request takes a place.
pub(super) fn small(body: &[u8]) -> bool {
    body.len() <= MAX_WAITING_BODY
}

/// `body` translated for the client whose request carries `headers`, staying within
/// `limit` bytes.
pub(super) fn request(headers: &HeaderMap, body: Bytes, limit: usize) -> Translated {
    let speaks_2025 = headers
        .get(VERSION_HEADER)
        .is_some_and(|v| v.as_bytes() == REVISION.as_bytes());
    let done = translate(&body, speaks_2025, limit);
    Translated {
        body: done.renamed.map_or(body, Bytes::from),
        patch: done.awaited.map(|(_, p)| p),
        waits: done.waits,
    }
}

/// The answer with `patch` applied, when it is a JSON body; any other answer as it came.
pub(super) async fn answer(response: Response<Body>, patch: Option<Patch>) -> Response<Body> {
    let Some(patch) = patch else {
        return response;
    };
    let is_json = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !is_json {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    // The body is the server's own, already complete: it cannot fail.
    let Ok(collected) = body.collect().await;
    let bytes = collected.to_bytes();
    let bytes = match serde_json::from_slice::<Value>(&bytes) {
        Ok(mut message) => {
            outbound(&mut message, patch);
            Bytes::from(message.to_string())
        }
        Err(_) => bytes,
    };
    parts.headers.remove(CONTENT_LENGTH);
    Response::from_parts(parts, Full::new(bytes).boxed())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn headers(version: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(VERSION_HEADER, version.parse().expect("a header value"));
        h
    }

    #[test]
    fn only_a_2025_11_25_clients_requests_are_translated() {
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/list"}).to_string();
        let sent = request(&headers(REVISION), Bytes::from(call.clone()), usize::MAX);
        let body: Value = serde_json::from_slice(&sent.body).expect("json");
        assert_eq!(body["method"], "file-tools/2025-11-25/tasks/list");
        assert!(!sent.waits);
        for other in ["2025-06-18", "2026-07-28"] {
            let sent = request(&headers(other), Bytes::from(call.clone()), usize::MAX);
            assert_eq!(sent.body, call.as_bytes());
            assert_eq!(sent.patch, None);
        }
        let wait =
            json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/result", "params": {"taskId": "t"}});
        let bytes = || Bytes::from(wait.to_string());
        assert!(request(&headers(REVISION), bytes(), usize::MAX).waits);
        assert!(!request(&headers("2026-07-28"), bytes(), usize::MAX).waits);
        // An escaped or listed method is not renamed, so it does not wait either.
        let escaped = Bytes::from(r#"{"jsonrpc":"2.0","id":3,"method":"tasks\/result"}"#);
        assert!(!request(&headers(REVISION), escaped, usize::MAX).waits);
        let listed = Bytes::from(r#"["tasks/result"]"#);
        assert!(!request(&headers(REVISION), listed, usize::MAX).waits);
        // A body the renaming would take past the limit goes as it came.
        let sent = request(&headers(REVISION), bytes(), wait.to_string().len() + 5);
        assert_eq!(sent.body, bytes());
        assert!(!sent.waits);
    }

    #[test]
    fn the_answer_to_a_tools_list_is_patched_when_it_is_json() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime");
        let list = json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "a"}]}});
        let make = |kind: &'static str| {
            Response::builder()
                .header(CONTENT_TYPE, kind)
                .body(Full::new(Bytes::from(list.to_string())).boxed())
                .expect("a response")
        };
        rt.block_on(async {
            let patched = answer(make("application/json"), Some(Patch::ToolsList)).await;
            let body = patched
                .into_body()
                .collect()
                .await
                .expect("body")
                .to_bytes();
            let v: Value = serde_json::from_slice(&body).expect("json");
            assert_eq!(
                v["result"]["tools"][0]["execution"]["taskSupport"],
                "optional"
            );
            let kept = answer(make("text/event-stream"), Some(Patch::ToolsList)).await;
            let body = kept.into_body().collect().await.expect("body").to_bytes();
            assert_eq!(body, list.to_string().as_bytes());
        });
    }
}
