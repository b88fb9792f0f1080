//! The repository's files as MCP resources: one template, `file:///{path}`, with `path`
//! relative to the repository root. Listing, reading and completing all go through the
//! component's own tools (`find_files`, `read_file`, `list_dir`), so the read policy,
//! ignore rules and path guard apply exactly as they do to the model's calls, and each is
//! audited as that tool: nothing the policy hides is listed, completed or served, and a
//! refusal says no more than the tool would.

use rmcp::model::{CompleteResult, ListResourceTemplatesResult, ListResourcesResult};
use rmcp::model::{ReadResourceResult, ResourceContents, ResultType};
use rmcp::ErrorData;
use serde_json::{json, Value};

use super::McpServer;
use file_tools_host::error::code_name;

/// The URI template of every file.
pub const TEMPLATE: &str = "file:///{path}";
/// Resources per page of `resources/list`.
const PAGE: u32 = 200;
/// Entries of one directory a completion looks at.
const COMPLETION_SCAN: u32 = 1000;

/// Bytes that stay as they are in a URI's path; every other byte is percent-encoded.
fn plain(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~/".contains(&b)
}

/// The URI of the repository path `path`.
pub fn uri_of(path: &str) -> String {
    let mut uri = String::from("file:///");
    for &b in path.as_bytes() {
        if plain(b) {
            uri.push(char::from(b));
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri
}

/// The repository path a `file:///` URI names.
///
/// # Errors
/// Invalid params for another scheme, a host part, a query or fragment, or bad escapes.
pub fn path_of(uri: &str) -> Result<String, ErrorData> {
    let bad = |why: &str| ErrorData::invalid_params(format!("{why}; expected {TEMPLATE}"), None);
    let rest = uri
        .strip_prefix("file:///")
        .ok_or_else(|| bad("not a file:/// URI"))?;
    if rest.contains(['?', '#']) {
        return Err(bad("a file URI here has no query or fragment"));
    }
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| bad("a malformed %-escape"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| bad("the path is not UTF-8"))
}

/// The tool error of a resource request, as a protocol error: the component's own code and
/// message (which never tell more than the tool would).
fn refused(e: &file_tools_host::ToolError) -> ErrorData {
    let message = format!("{}: {}", code_name(e.code), e.message);
    match code_name(e.code) {
        "NOT_FOUND" | "POLICY_DENIED" | "PATH_REJECTED" | "NOT_A_FILE" => {
            ErrorData::resource_not_found(message, None)
        }
        _ => ErrorData::internal_error(message, None),
    }
}

fn decode<T: serde::de::DeserializeOwned>(v: Value) -> Result<T, ErrorData> {
    serde_json::from_value(v).map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

impl McpServer {
    pub(super) fn tool(&self, name: &str, args: Value) -> Result<Value, ErrorData> {
        self.tool_answer(name, args)?.map_err(|e| refused(&e))
    }

    /// The tool's own answer, its refusal included; a protocol error when no repository
    /// is open.
    fn tool_answer(
        &self,
        name: &str,
        args: Value,
    ) -> Result<Result<Value, file_tools_host::ToolError>, ErrorData> {
        self.repo
            .with(|s| s.call(name, &args.to_string()))
            .map_err(|why| ErrorData::invalid_request(why, None))
    }

    /// The one template.
    pub fn resource_templates(&self) -> Result<ListResourceTemplatesResult, ErrorData> {
        let mut r: ListResourceTemplatesResult = decode(json!({ "resourceTemplates": [{
            "uriTemplate": TEMPLATE,
            "name": "file",
            "title": "A file of the repository",
            "description": "A file of the repository, by its path from the root: text as \
                read_file reads it (the read policy applies; long files are cut), an image or a \
                PDF as read_media reads it",
        }]}))?;
        r.result_type = Some(ResultType::COMPLETE);
        Ok(r)
    }

    /// One page of the files `find_files` lists (hidden and ignored files left out).
    ///
    /// # Errors
    /// The tool's refusal, or a stale cursor, as a protocol error.
    pub fn resources(&self, cursor: Option<String>) -> Result<ListResourcesResult, ErrorData> {
        let found = self.tool(
            "find_files",
            json!({ "patterns": ["*"], "max_results": PAGE, "cursor": cursor }),
        )?;
        let resources: Vec<Value> = found["paths"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(|p| json!({ "uri": uri_of(p), "name": p }))
            .collect();
        let mut page = json!({ "resources": resources });
        if let Some(next) = found["next_cursor"].as_str() {
            page["nextCursor"] = json!(next);
        }
        let mut r: ListResourcesResult = decode(page)?;
        r.result_type = Some(ResultType::COMPLETE);
        Ok(r)
    }

    /// A file: its text through `read_file`; an image or a PDF, which `read_file` refuses
    /// as binary, through `read_media` (base64 with its MIME type, the same guard, policy
    /// and audit). Any other binary file keeps `read_file`'s refusal.
    ///
    /// # Errors
    /// Invalid params for a malformed URI; resource-not-found when the tool refuses.
    pub fn read_resource_at(&self, uri: &str) -> Result<ReadResourceResult, ErrorData> {
        let path = path_of(uri)?;
        let contents = match self.tool_answer("read_file", json!({ "path": path }))? {
            Ok(read) => ResourceContents::TextResourceContents {
                uri: uri.to_string(),
                mime_type: Some("text/plain".into()),
                text: read["content"].as_str().unwrap_or_default().to_string(),
                meta: None,
            },
            Err(e) if code_name(e.code) == "UNSUPPORTED_BINARY" => {
                let media = self
                    .tool_answer("read_media", json!({ "path": path }))?
                    .map_err(|_| refused(&e))?;
                let field = |name: &str| media[name].as_str().map(str::to_string);
                match (field(super::tools::MEDIA_DATA), field("mime_type")) {
                    (Some(data), Some(mime)) => {
                        ResourceContents::blob(data, uri.to_string()).with_mime_type(mime)
                    }
                    _ => return Err(refused(&e)),
                }
            }
            Err(e) => return Err(refused(&e)),
        };
        Ok(ReadResourceResult::new(vec![contents]))
    }

    /// Paths that start with `value`, from a `list_dir` of the directory it names:
    /// directories end in `/`. Nothing for a directory the tool refuses.
    pub fn complete_path(&self, value: &str) -> Result<CompleteResult, ErrorData> {
        let dir = value.rfind('/').map(|i| &value[..i]);
        let listed = self.tool(
            "list_dir",
            json!({ "path": dir, "max_entries": COMPLETION_SCAN }),
        );
        let mut values: Vec<String> = match listed {
            Ok(l) => l["entries"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|e| {
                    let path = e["path"].as_str()?;
                    let dir = e["type"] == "dir";
                    Some(if dir {
                        format!("{path}/")
                    } else {
                        path.to_string()
                    })
                })
                .filter(|p| p.starts_with(value))
                .collect(),
            Err(_) => Vec::new(),
        };
        let total = values.len();
        values.truncate(100);
        let mut r: CompleteResult = decode(json!({ "completion": {
            "values": values,
            "total": total,
            "hasMore": total > 100,
        }}))?;
        r.result_type = Some(ResultType::COMPLETE);
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_and_paths_round_trip() {
        for p in ["src/lib.rs", "a b/c%d.txt", "ünï/çode", "x?y#z"] {
            assert_eq!(path_of(&uri_of(p)).unwrap(), p);
        }
        assert_eq!(uri_of("a b"), "file:///a%20b");
    }

    #[test]
    fn foreign_or_malformed_uris_are_refused() {
        for uri in [
            "http://x/a",
            "file://host/a",
            "file:/a",
            "file:///a?q",
            "file:///a%2",
            "file:///%ff",
        ] {
            assert!(path_of(uri).is_err(), "{uri}");
        }
    }
}
