//! The tool list as MCP sees it, and tool results shaped for MCP.
//!
//! Names, titles, descriptions, input and output schemas and annotations all come from the
//! component's own `describe`, so the server never disagrees with the component about what
//! a tool takes or returns. A failed call is a normal tool result marked `isError` whose
//! structured content is `{"error": {code, message, ...}}`: the component's output schema
//! of every tool admits exactly that beside the tool's own result.

use base64::Engine as _;
use rmcp::model::{CallToolResult, ContentBlock, Icon, Resource, ResourceContents, Tool};
use serde_json::{json, Value};

use super::resources::uri_of;
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

/// A successful call of `tool`: the summary for the model first, the whole JSON after it
/// (`text`, the component's answer as it came), and the JSON as structured content
/// (`result`, that text parsed).
///
/// `read_media` puts the file itself between them, so that a client shows it: an image as
/// image content (`type: image`, its base64 `data` and `mimeType`), a PDF as an embedded
/// resource (`blob` and `mimeType`, at the file's `file:///` URI). Its JSON text then leaves
/// out `data_base64`, which that block carries: the model is not handed the base64 as text.
/// A `search_text` result puts its resource links there (see [`file_links`]): the JSON is
/// always the last block.
pub(crate) fn ok_result(tool: &str, result: Value, text: String) -> CallToolResult {
    let mut content = Vec::new();
    if let Some(s) = result.get("summary").and_then(Value::as_str) {
        content.push(ContentBlock::text(s.to_owned()));
    }
    content.extend(file_links(tool, &result));
    match media_block(tool, &result) {
        Some(block) => {
            content.push(block);
            let mut shown = result.as_object().cloned().unwrap_or_default();
            shown.remove(MEDIA_DATA);
            content.push(ContentBlock::text(Value::Object(shown).to_string()));
        }
        None => content.push(ContentBlock::text(text)),
    }
    let mut r = CallToolResult::success(content);
    r.structured_content = Some(result);
    r
}

/// The field of a `read_media` result that holds the file.
pub(super) const MEDIA_DATA: &str = "data_base64";

/// The file a `read_media` result holds, as MCP content; `None` for any other result.
fn media_block(tool: &str, result: &Value) -> Option<ContentBlock> {
    if tool != "read_media" {
        return None;
    }
    let field = |name: &str| result.get(name).and_then(Value::as_str);
    let (data, mime, path) = (field(MEDIA_DATA)?, field("mime_type")?, field("path")?);
    Some(if mime.starts_with("image/") {
        ContentBlock::image(data, mime)
    } else {
        ContentBlock::resource(ResourceContents::blob(data, uri_of(path)).with_mime_type(mime))
    })
}

/// The files a `search_text` result found matches in, as resource links to their
/// `file:///` URIs; nothing for any other result. The search read each of them, so reading
/// the link serves it under the same policy. `find_files` results get none: they also name
/// files reading refuses (secrets and binary files are listed by name), and telling those
/// apart would take an audited call per path.
fn file_links(tool: &str, result: &Value) -> Vec<ContentBlock> {
    if tool != "search_text" {
        return Vec::new();
    }
    let named = |list: &str| -> Vec<String> {
        result[list]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f["path"].as_str().map(str::to_string))
            .collect()
    };
    let mut paths = named("files");
    if paths.is_empty() {
        paths = named("matches");
    }
    paths.dedup();
    paths
        .into_iter()
        .map(|p| ContentBlock::resource_link(Resource::new(uri_of(&p), p)))
        .collect()
}

/// The server's icon (the one the MCP bundle carries), as a `data:` URI.
pub(crate) fn icon() -> Icon {
    const PNG: &[u8] = include_bytes!("../../../packages/mcpb/icon.png");
    let data = base64::engine::general_purpose::STANDARD.encode(PNG);
    Icon::new(format!("data:image/png;base64,{data}"))
        .with_mime_type("image/png")
        .with_sizes(vec!["512x512".into()])
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

#[cfg(test)]
mod tests {
    use super::*;

    /// [`ok_result`] of an answer whose text is `result` printed.
    fn answer(tool: &str, result: Value) -> CallToolResult {
        let text = result.to_string();
        ok_result(tool, result, text)
    }

    fn media(mime: &str) -> Value {
        json!({
            "path": "docs/a b.pdf", "mime_type": mime, "size": 3, "sha256": "00",
            "data_base64": "AAEC", "summary": "docs/a b.pdf: 3 bytes",
        })
    }

    #[test]
    fn an_image_is_image_content_and_a_pdf_an_embedded_resource() {
        let r = serde_json::to_value(answer("read_media", media("image/png"))).unwrap();
        let c = &r["content"];
        assert_eq!(c[0]["text"], "docs/a b.pdf: 3 bytes");
        assert_eq!(
            c[1],
            json!({"type": "image", "data": "AAEC", "mimeType": "image/png"})
        );
        let text: Value = serde_json::from_str(c[2]["text"].as_str().unwrap()).unwrap();
        assert_eq!(text.get(MEDIA_DATA), None);
        assert_eq!(text["sha256"], "00");
        assert_eq!(r["structuredContent"], media("image/png"));

        let r = serde_json::to_value(answer("read_media", media("application/pdf"))).unwrap();
        assert_eq!(
            r["content"][1],
            json!({"type": "resource", "resource": {
                "uri": "file:///docs/a%20b.pdf", "mimeType": "application/pdf", "blob": "AAEC",
            }})
        );
    }

    /// Other tools' results, even one shaped like a media result, stay JSON text.
    #[test]
    fn other_results_carry_their_whole_json_as_text() {
        let r = serde_json::to_value(answer("file_info", media("image/png"))).unwrap();
        let c = r["content"].as_array().unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(
            serde_json::from_str::<Value>(c[1]["text"].as_str().unwrap()).unwrap(),
            media("image/png")
        );
    }

    fn found_json() -> Value {
        json!({
            "matches": [{"path": "a b.rs"}, {"path": "a b.rs"}, {"path": "src/c.rs"}],
            "files": [], "summary": "3 matching lines",
        })
    }

    #[test]
    fn search_results_link_the_files_they_found_and_find_files_results_do_not() {
        let r = serde_json::to_value(answer("search_text", found_json())).unwrap();
        let links: Vec<&Value> = r["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["type"] == "resource_link")
            .collect();
        assert_eq!(
            links,
            [
                &json!({"type": "resource_link", "uri": "file:///a%20b.rs", "name": "a b.rs"}),
                &json!({"type": "resource_link", "uri": "file:///src/c.rs", "name": "src/c.rs"}),
            ]
        );
        let listed = json!({"paths": [".env", "src/c.rs"], "summary": "2 files"});
        let r = serde_json::to_value(answer("find_files", listed)).unwrap();
        assert!(r["content"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["type"] == "text"));
        // The JSON stays the last block.
        let r = serde_json::to_value(answer("search_text", found_json())).unwrap();
        let last = r["content"].as_array().unwrap().last().unwrap();
        assert_eq!(last["type"], "text");
    }
}
