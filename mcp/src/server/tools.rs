//! The tool list as MCP sees it, and tool results shaped for MCP.
//!
//! Names, titles, descriptions, input and output schemas and annotations all come from the
//! component's own `describe`, so the server never disagrees with the component about what
//! a tool takes or returns. A failed call is a normal tool result marked `isError` whose
//! structured content is `{"error": {code, message, ...}}`: the component's output schema
//! of every tool admits exactly that beside the tool's own result.

use rmcp::model::{CallToolResult, ContentBlock, Tool};
use serde_json::{json, Value};

use file_tools_host::error::HostError;

/// The tools `describe` lists, as MCP tools.
///
/// # Errors
/// `HostError::Policy` when the description is not a list of usable tools.
pub(crate) fn from_describe(described: Value) -> Result<Vec<Tool>, HostError> {
    let Value::Array(list) = described else {
        return Err(HostError::Policy(format!(
            "describe returned {described} instead of a list"
        )));
    };
    list.into_iter()
        .map(|mut t| {
            // `describe` speaks snake_case JSON like every tool; MCP wants camelCase.
            if let Some(o) = t.as_object_mut() {
                for (from, to) in [
                    ("input_schema", "inputSchema"),
                    ("output_schema", "outputSchema"),
                ] {
                    if let Some(schema) = o.remove(from) {
                        o.insert(to.into(), schema);
                    }
                }
            }
            serde_json::from_value::<Tool>(t)
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| HostError::Policy(format!("unusable tool description: {e}")))
}

/// A successful call: the summary for the model first, the whole JSON after it, and the
/// JSON as structured content.
pub(crate) fn ok_result(result: Value) -> CallToolResult {
    let mut content = Vec::new();
    if let Some(s) = result.get("summary").and_then(Value::as_str) {
        content.push(ContentBlock::text(s.to_owned()));
    }
    content.push(ContentBlock::text(result.to_string()));
    let mut r = CallToolResult::success(content);
    r.structured_content = Some(result);
    r
}

/// A failed call: `CODE: message` as text, `{"error": error}` as structured content.
pub(crate) fn error_result(error: Value) -> CallToolResult {
    let code = error
        .get("code")
        .and_then(Value::as_str)
        .unwrap_or("INTERNAL");
    let message = error.get("message").and_then(Value::as_str).unwrap_or("");
    let text = format!("{code}: {message}");
    let mut r = CallToolResult::error(vec![ContentBlock::text(text)]);
    r.structured_content = Some(json!({ "error": error }));
    r
}
