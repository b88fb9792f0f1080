//! The 2025-11-25 form of tasks, translated where messages cross the transport.
//!
//! rmcp speaks only the 2026-07-28 tasks extension. A 2025-11-25 client asks for a task
//! with `params.task` on `tools/call` (which rmcp drops), and then calls `tasks/get`,
//! `tasks/result`, `tasks/list` and `tasks/cancel`, whose answers have that revision's
//! shapes. It also learns that tasks are offered from the server's `capabilities.tasks` and
//! from each tool's `execution.taskSupport`, fields rmcp's types do not carry.
//!
//! So, for a client that negotiated 2025-11-25 only:
//! - its task requests are renamed under [`PREFIX`] on the way in, untouched otherwise, so
//!   that they reach the handler as custom requests with every field
//!   (`server::tasks_2025` answers them);
//! - the answers to its `initialize` and `tools/list` get the two fields on the way out.
//!
//! Every other message passes unchanged; the stdio filters ([`lines`]) look at a line's
//! bytes before parsing it.

use serde_json::{json, Map, Value};

pub(crate) mod lines;

/// The revision whose form of tasks this module translates.
pub const REVISION: &str = "2025-11-25";

/// The methods of the translated requests: the client's method after this prefix.
pub const PREFIX: &str = "file-tools/2025-11-25/";

/// The task methods of the revision (besides a `tools/call` that carries `task`).
const TASK_METHODS: [&str; 4] = ["tasks/get", "tasks/result", "tasks/list", "tasks/cancel"];

/// What the answer to a request needs on the way out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Patch {
    /// The `initialize` of a 2025-11-25 client: the server's task capabilities.
    Initialize,
    /// A `tools/list` of such a client: each tool's task support.
    ToolsList,
}

/// What [`inbound`] did to a message.
#[derive(Debug, Default, PartialEq, Eq)]
struct Inbound {
    /// The method was renamed.
    renamed: bool,
    /// The request's id and what its answer will need.
    awaited: Option<(Value, Patch)>,
}

/// Translates one message from a client on its way in. `speaks_2025` says whether the client
/// negotiated 2025-11-25 (an `initialize` that asks for it says so itself).
fn inbound(message: &mut Value, speaks_2025: bool) -> Inbound {
    let mut done = Inbound::default();
    let Some(object) = message.as_object_mut() else {
        return done;
    };
    let Some(method) = object.get("method").and_then(Value::as_str) else {
        return done;
    };
    // An answer is awaited only for a request rmcp answers with its own id: JSON-RPC 2.0,
    // the id a string or an integer it takes (an id it refuses gets a null one).
    let id = object
        .get("id")
        .filter(|id| id.is_string() || id.is_i64())
        .filter(|_| object.get("jsonrpc").and_then(Value::as_str) == Some("2.0"))
        .cloned();
    if method == "initialize" {
        let asked = object
            .get("params")
            .and_then(|p| p.get("protocolVersion"))
            .and_then(Value::as_str);
        done.awaited = id
            .filter(|_| asked == Some(REVISION))
            .map(|id| (id, Patch::Initialize));
        return done;
    }
    if !speaks_2025 {
        return done;
    }
    if method == "tools/list" {
        done.awaited = id.map(|id| (id, Patch::ToolsList));
        return done;
    }
    let asks_task = method == "tools/call"
        && object
            .get("params")
            .and_then(|p| p.get("task"))
            .is_some_and(Value::is_object);
    if asks_task || TASK_METHODS.contains(&method) {
        let renamed = format!("{PREFIX}{method}");
        object.insert("method".into(), Value::String(renamed));
        done.renamed = true;
    }
    done
}

/// Whether a line of a client may need [`inbound`]: the cheap test that spares parsing
/// every other message. A line it lets through needlessly only costs a parse. (Inside a
/// JSON string a quote is escaped, so a call whose content says `"task"` is not parsed.)
fn may_translate(line: &[u8], speaks_2025: bool) -> bool {
    let has = |needle: &[u8]| memchr::memmem::find(line, needle).is_some();
    if has(b"\"initialize\"") {
        return true;
    }
    speaks_2025
        && (has(b"\"tasks/")
            || has(b"\"tools/list\"")
            || (has(b"\"tools/call\"") && has(b"\"task\"")))
}

/// One client message as the server takes it.
#[derive(Debug, Default)]
pub struct Translated {
    /// The message renamed, when it was; else its bytes go as they came.
    pub renamed: Option<String>,
    /// The request's id and what its answer will need.
    pub awaited: Option<(Value, Patch)>,
    /// A renamed `tasks/result`: it only waits for a task to end.
    pub waits: bool,
}

/// Translates the bytes of one client message (see [`inbound`]). A renaming that would
/// take the message past `limit` bytes is not made: past the transport's bound it would
/// be dropped unanswered, and as it came it is an ordinary request.
pub fn translate(bytes: &[u8], speaks_2025: bool, limit: usize) -> Translated {
    let parsed = may_translate(bytes, speaks_2025)
        .then(|| serde_json::from_slice::<Value>(bytes).ok())
        .flatten();
    let Some(mut message) = parsed else {
        return Translated::default();
    };
    let done = inbound(&mut message, speaks_2025);
    let mut translated = Translated {
        awaited: done.awaited,
        ..Translated::default()
    };
    if done.renamed {
        let text = message.to_string();
        if text.len() <= limit {
            translated.waits = message.get("method").and_then(Value::as_str)
                == Some(format!("{PREFIX}tasks/result").as_str());
            translated.renamed = Some(text);
        }
    }
    translated
}

/// Adds to the answer `message` what `patch` says; an error answer is left as it is.
pub fn outbound(message: &mut Value, patch: Patch) {
    let Some(result) = message.get_mut("result").and_then(Value::as_object_mut) else {
        return;
    };
    match patch {
        Patch::Initialize => {
            if result.get("protocolVersion").and_then(Value::as_str) != Some(REVISION) {
                return;
            }
            if let Some(caps) = result
                .get_mut("capabilities")
                .and_then(Value::as_object_mut)
            {
                caps.insert(
                    "tasks".into(),
                    json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
                );
            }
        }
        Patch::ToolsList => {
            let tools = result.get_mut("tools").and_then(Value::as_array_mut);
            for tool in tools.into_iter().flatten().filter_map(Value::as_object_mut) {
                let mut execution = Map::new();
                execution.insert("taskSupport".into(), Value::String("optional".into()));
                tool.insert("execution".into(), Value::Object(execution));
            }
        }
    }
}

/// The id of an answer, when `message` is one.
pub fn answer_id(message: &Value) -> Option<&Value> {
    let object = message.as_object()?;
    if object.contains_key("method") {
        return None;
    }
    object.get("id")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(id: u64, method: &str, params: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    }

    #[test]
    fn only_a_2025_11_25_clients_task_requests_are_renamed() {
        let call = request(1, "tools/call", json!({"name": "x", "task": {"ttl": 5}}));
        for (speaks_2025, expected) in [
            (true, "file-tools/2025-11-25/tools/call"),
            (false, "tools/call"),
        ] {
            let mut m = call.clone();
            let done = inbound(&mut m, speaks_2025);
            assert_eq!((done.renamed, done.awaited), (speaks_2025, None));
            assert_eq!(m["method"], expected);
            assert_eq!(m["params"], call["params"], "params pass whole");
        }
        // A call without a task object is a plain call.
        for params in [json!({"name": "x"}), json!({"name": "x", "task": 1})] {
            let mut m = request(2, "tools/call", params);
            assert_eq!(inbound(&mut m, true), Inbound::default());
            assert_eq!(m["method"], "tools/call");
        }
        for method in TASK_METHODS {
            let mut m = request(3, method, json!({"taskId": "t"}));
            inbound(&mut m, true);
            assert_eq!(m["method"], format!("{PREFIX}{method}"));
            let mut m = request(3, method, json!({"taskId": "t"}));
            inbound(&mut m, false);
            assert_eq!(m["method"], method);
        }
    }

    #[test]
    fn the_answers_that_need_fields_are_those_of_a_2025_11_25_client() {
        let awaited = |mut m: Value, speaks_2025| inbound(&mut m, speaks_2025).awaited;
        let init = |v: &str| request(7, "initialize", json!({"protocolVersion": v}));
        assert_eq!(
            awaited(init(REVISION), false),
            Some((json!(7), Patch::Initialize))
        );
        assert_eq!(awaited(init("2025-06-18"), false), None);
        assert_eq!(awaited(init("2026-07-28"), true), None);
        let list = request(8, "tools/list", json!({}));
        assert_eq!(
            awaited(list.clone(), true),
            Some((json!(8), Patch::ToolsList))
        );
        assert_eq!(awaited(list.clone(), false), None);
        // An id JSON-RPC does not allow is not awaited: no answer would come.
        for odd in [
            json!({"jsonrpc": "2.0", "id": {"x": 1}, "method": "tools/list"}),
            json!({"jsonrpc": "2.0", "id": u64::MAX, "method": "tools/list"}),
            json!({"jsonrpc": "1.0", "id": 8, "method": "tools/list"}),
        ] {
            assert_eq!(awaited(odd, true), None);
        }
        // Notifications pass.
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(inbound(&mut note.clone(), true), Inbound::default());
    }

    #[test]
    fn the_cheap_test_lets_through_every_line_that_needs_translating() {
        let lines = [
            (
                request(1, "initialize", json!({"protocolVersion": REVISION})),
                false,
            ),
            (request(1, "tools/list", json!({})), true),
            (
                request(1, "tools/call", json!({"name": "x", "task": {}})),
                true,
            ),
            (request(1, "tasks/get", json!({"taskId": "t"})), true),
        ];
        for (m, speaks_2025) in lines {
            let text = m.to_string();
            assert!(may_translate(text.as_bytes(), speaks_2025), "{text}");
        }
        let plain = request(1, "resources/list", json!({})).to_string();
        assert!(!may_translate(plain.as_bytes(), true));
        let call = request(1, "tools/call", json!({"name": "x"})).to_string();
        assert!(!may_translate(call.as_bytes(), false));
        // A plain call is not parsed, whatever its content says.
        let content = json!({"name": "write_file", "arguments": {"content": "{\"task\": {}}"}});
        let call = request(1, "tools/call", content).to_string();
        assert!(!may_translate(call.as_bytes(), true), "{call}");
    }

    #[test]
    fn answers_get_the_revisions_fields() {
        let mut init = json!({"id": 1, "result": {"protocolVersion": REVISION, "capabilities": {"tools": {}}}});
        outbound(&mut init, Patch::Initialize);
        assert_eq!(
            init["result"]["capabilities"]["tasks"]["requests"]["tools"]["call"],
            json!({})
        );
        assert_eq!(init["result"]["capabilities"]["tools"], json!({}));
        // A server that answered another revision offers no 2025-11-25 tasks.
        let mut other =
            json!({"id": 1, "result": {"protocolVersion": "2025-06-18", "capabilities": {}}});
        outbound(&mut other, Patch::Initialize);
        assert!(other["result"]["capabilities"].get("tasks").is_none());
        let mut list = json!({"id": 2, "result": {"tools": [{"name": "a"}, {"name": "b"}]}});
        outbound(&mut list, Patch::ToolsList);
        for tool in list["result"]["tools"].as_array().unwrap() {
            assert_eq!(tool["execution"]["taskSupport"], "optional");
        }
        let mut error = json!({"id": 2, "error": {"code": -1, "message": "no"}});
        let before = error.clone();
        outbound(&mut error, Patch::ToolsList);
        assert_eq!(error, before);
        assert_eq!(answer_id(&list), Some(&json!(2)));
        assert_eq!(answer_id(&json!({"id": 3, "method": "ping"})), None);
    }
}
