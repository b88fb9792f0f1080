//! The translation of the 2025-11-25 form of tasks ([`crate::wire`]) on one HTTP request:
//! the request body on its way in, and the answer's JSON body on its way out when the
//! request was an `initialize` or a `tools/list` of such a client.

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::header::{HeaderMap, CONTENT_LENGTH, CONTENT_TYPE};
use hyper::Response;
use serde_json::Value;

use super::Body;
use crate::wire::{inbound, may_translate, outbound, Patch, REVISION};

/// The header in which a client names the revision it negotiated.
const VERSION_HEADER: &str = "mcp-protocol-version";

/// The largest body [`waits`] looks at: a `tasks/result` request is small.
const MAX_WAITING_BODY: usize = 4096;

fn older(headers: &HeaderMap) -> bool {
    headers
        .get(VERSION_HEADER)
        .is_some_and(|v| v.as_bytes() == REVISION.as_bytes())
}

/// Whether the request only waits for a task to end (a 2025-11-25 `tasks/result`): it
/// costs nothing meanwhile, so it takes none of the places of requests being worked on.
/// Judged on the method alone, without building the body's tree.
pub(super) fn waits(headers: &HeaderMap, body: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Head {
        method: Option<String>,
    }
    older(headers)
        && body.len() <= MAX_WAITING_BODY
        && serde_json::from_slice::<Head>(body)
            .is_ok_and(|h| h.method.as_deref() == Some("tasks/result"))
}

/// `body` translated for the client whose request carries `headers`, and what its answer
/// will need.
pub(super) fn request(headers: &HeaderMap, body: Bytes) -> (Bytes, Option<Patch>) {
    let older = older(headers);
    let parsed = may_translate(&body, older)
        .then(|| serde_json::from_slice::<Value>(&body).ok())
        .flatten();
    let Some(mut message) = parsed else {
        return (body, None);
    };
    let done = inbound(&mut message, older);
    let patch = done.awaited.map(|(_, p)| p);
    if !done.renamed {
        return (body, patch);
    }
    (Bytes::from(message.to_string()), patch)
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
        let (sent, _) = request(&headers(REVISION), Bytes::from(call.clone()));
        let body: Value = serde_json::from_slice(&sent).expect("json");
        assert_eq!(body["method"], "file-tools/2025-11-25/tasks/list");
        assert!(!waits(&headers(REVISION), call.as_bytes()));
        for other in ["2025-06-18", "2026-07-28"] {
            let (sent, patch) = request(&headers(other), Bytes::from(call.clone()));
            assert_eq!(sent, call.as_bytes());
            assert_eq!(patch, None);
        }
        let wait =
            json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/result", "params": {"taskId": "t"}});
        assert!(waits(&headers(REVISION), wait.to_string().as_bytes()));
        assert!(!waits(&headers("2026-07-28"), wait.to_string().as_bytes()));
        // A large body takes its place like any other.
        let padded = json!({"method": "tasks/result", "params": {"taskId": "t".repeat(5000)}});
        assert!(!waits(&headers(REVISION), padded.to_string().as_bytes()));
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
