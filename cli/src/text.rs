//! What `--format text` prints: the shapes people know from other tools. Search hits as
//! `path:line:text` (context lines `path-line-text`, groups apart by `--`, as grep and rg
//! print them), diffs as unified diffs, listings one path a line, errors as one line with
//! the code. Anything a result says beyond its data (its summary, when a cap cut it short)
//! is a note for stderr, so that stdout stays the data alone.

use std::fmt::Write as _;

use serde_json::Value;

/// A result as text: `out` for stdout, `note` for stderr.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Text {
    pub out: String,
    pub note: Option<String>,
}

fn s(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

fn list(v: &Value) -> &[Value] {
    v.as_array().map(Vec::as_slice).unwrap_or(&[])
}

/// `name  first sentence of the description`, for `file-tools tools`.
pub fn tool_line(t: &Value) -> String {
    let desc = s(&t["description"]);
    let first = desc.split_inclusive(". ").next().unwrap_or(desc).trim_end();
    format!("{:<16}{first}", s(&t["name"]))
}

/// A tool's description and arguments, for `file-tools call TOOL --help`.
pub fn tool_help(t: &Value) -> String {
    let schema = &t["input_schema"];
    let required: Vec<&str> = list(&schema["required"]).iter().map(s).collect();
    let mut out = format!(
        "file-tools call {} 'JSON-ARGS'\n\n{}\n\nArguments (one JSON object):\n",
        s(&t["name"]),
        s(&t["description"])
    );
    if let Some(props) = schema["properties"].as_object() {
        for (name, p) in props {
            let kind = type_name(p, schema);
            let req = if required.contains(&name.as_str()) {
                ", required"
            } else {
                ""
            };
            let _ = writeln!(out, "  {name} ({kind}{req})");
            let desc = s(&p["description"]);
            if !desc.is_empty() {
                let _ = writeln!(out, "      {desc}");
            }
        }
    }
    let _ = writeln!(
        out,
        "\nThe whole JSON Schema: file-tools schema (the entry named {}).",
        s(&t["name"])
    );
    out
}

/// A schema node's type in a few words (`string`, `array of string`, `object`, an enum's
/// values, or the name of a referenced definition).
fn type_name(p: &Value, root: &Value) -> String {
    if let Some(r) = p["$ref"].as_str() {
        let name = r.rsplit('/').next().unwrap_or(r);
        let def = &root["$defs"][name];
        return match def["enum"].as_array() {
            Some(vals) => one_of(vals),
            None => name.to_string(),
        };
    }
    if let Some(any) = p["anyOf"].as_array().or_else(|| p["oneOf"].as_array()) {
        let parts: Vec<String> = any
            .iter()
            .filter(|v| v["type"] != "null")
            .map(|v| type_name(v, root))
            .collect();
        return parts.join(" or ");
    }
    if let Some(vals) = p["enum"].as_array() {
        return one_of(vals);
    }
    match &p["type"] {
        Value::String(t) if t == "array" => format!("array of {}", type_name(&p["items"], root)),
        Value::String(t) => t.clone(),
        Value::Array(ts) => ts
            .iter()
            .map(s)
            .filter(|t| *t != "null")
            .collect::<Vec<_>>()
            .join(" or "),
        _ => "any".to_string(),
    }
}

fn one_of(vals: &[Value]) -> String {
    let names: Vec<String> = vals.iter().map(|v| format!("\"{}\"", s(v))).collect();
    format!("one of {}", names.join(", "))
}

/// An error as one line: `CODE: message`.
pub fn error(e: &Value) -> String {
    format!("{}: {}", s(&e["code"]), s(&e["message"]))
}

/// The note for a result that a cap cut short (its summary), else none.
fn cut_note(r: &Value) -> Option<String> {
    (r["truncated"] == true || r["diff_truncated"] == true).then(|| s(&r["summary"]).to_string())
}

/// Ends `out` with a newline unless it is empty.
fn line_end(mut out: String) -> String {
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// What a tool's result looks like as text.
pub fn result(tool: &str, r: &Value) -> Text {
    let summary = || Some(s(&r["summary"]).to_string()).filter(|t| !t.is_empty());
    match tool {
        "search_text" => Text {
            out: search(r),
            note: cut_note(r),
        },
        "read_file" => Text {
            out: line_end(s(&r["content"]).to_string()),
            note: cut_note(r),
        },
        "read_many" => {
            let mut out = String::new();
            for f in list(&r["files"]) {
                let _ = writeln!(out, "==> {} <==", s(&f["path"]));
                match &f["result"] {
                    Value::Null => {
                        let _ = writeln!(out, "{}", error(&f["error"]));
                    }
                    page => out.push_str(&line_end(s(&page["content"]).to_string())),
                }
            }
            Text { out, note: None }
        }
        // The file as base64 alone, for `base64 -d`; what it is goes to stderr.
        "read_media" => Text {
            out: line_end(s(&r["data_base64"]).to_string()),
            note: summary(),
        },
        "list_dir" => Text {
            out: list(&r["entries"])
                .iter()
                .map(|e| {
                    let slash = if e["type"] == "dir" { "/" } else { "" };
                    format!("{}{slash}\n", s(&e["path"]))
                })
                .collect(),
            note: cut_note(r),
        },
        "find_files" => Text {
            out: list(&r["paths"])
                .iter()
                .map(|p| format!("{}\n", s(p)))
                .collect(),
            note: cut_note(r),
        },
        "changes_since" => {
            let mut out: String = list(&r["changes"])
                .iter()
                .map(|c| {
                    let mark = match s(&c["change"]) {
                        "created" => "A",
                        "deleted" => "D",
                        _ => "M",
                    };
                    format!("{mark} {}\n", s(&c["path"]))
                })
                .collect();
            let _ = writeln!(out, "token: {}", s(&r["token"]));
            Text {
                out,
                note: summary(),
            }
        }
        "diff_workspace" => Text {
            out: line_end(s(&r["diff"]).to_string()),
            note: summary(),
        },
        _ if r.get("diff").is_some() => Text {
            out: line_end(s(&r["diff"]).to_string()),
            note: summary(),
        },
        _ => match r.as_object() {
            Some(obj) if !obj.contains_key("summary") => Text {
                out: line_end(serde_json::to_string_pretty(r).unwrap_or_default()),
                note: None,
            },
            Some(obj) => {
                let mut out = String::new();
                for (k, v) in obj {
                    if k != "summary" && !v.is_null() {
                        let shown = match v {
                            Value::String(t) => t.clone(),
                            other => other.to_string(),
                        };
                        let _ = writeln!(out, "{k}: {shown}");
                    }
                }
                Text {
                    out,
                    note: summary(),
                }
            }
            None => Text {
                out: line_end(r.to_string()),
                note: None,
            },
        },
    }
}

/// Search hits as grep and rg print them.
fn search(r: &Value) -> String {
    let mut out = String::new();
    let matches = list(&r["matches"]);
    if matches.is_empty() {
        // `files` output: path:count, as `rg --count` prints it; `count`: the totals.
        let files = list(&r["files"]);
        if files.is_empty() {
            let _ = writeln!(out, "{}", s(&r["summary"]));
        }
        for f in files {
            let _ = writeln!(out, "{}:{}", s(&f["path"]), f["count"]);
        }
        return out;
    }
    let context = matches
        .iter()
        .any(|m| !list(&m["before"]).is_empty() || !list(&m["after"]).is_empty());
    // The last line printed: adjacent groups join, others are set apart by `--`.
    let mut last: Option<(String, u64)> = None;
    for m in matches {
        let path = s(&m["path"]);
        let line = m["line"].as_u64().unwrap_or(0);
        let before = list(&m["before"]);
        let first = line.saturating_sub(before.len() as u64);
        let mut from = first;
        match &last {
            // Contiguous with what was printed: go on from there, never past the hit.
            Some((p, l)) if p == path && l + 1 >= first => from = (l + 1).min(line),
            Some(_) if context => out.push_str("--\n"),
            _ => {}
        }
        for (i, text) in before.iter().enumerate() {
            let n = first + i as u64;
            if n >= from {
                let _ = writeln!(out, "{path}-{n}-{}", s(text));
            }
        }
        let _ = writeln!(out, "{path}:{line}:{}", s(&m["text"]));
        let after = list(&m["after"]);
        for (i, text) in after.iter().enumerate() {
            let _ = writeln!(out, "{path}-{}-{}", line + 1 + i as u64, s(text));
        }
        last = Some((path.to_string(), line + after.len() as u64));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn media_prints_its_base64_alone_and_says_what_it_is_on_stderr() {
        let r = json!({
            "path": "a.png", "mime_type": "image/png", "size": 3, "sha256": "00",
            "data_base64": "AAEC", "summary": "a.png: PNG image (image/png), 3 bytes"
        });
        let t = result("read_media", &r);
        assert_eq!(t.out, "AAEC\n");
        assert_eq!(
            t.note.as_deref(),
            Some("a.png: PNG image (image/png), 3 bytes")
        );
    }

    #[test]
    fn search_hits_print_like_grep_with_context_groups() {
        let r = json!({
            "matches": [
                {"path": "a.rs", "line": 3, "column": 1, "text": "hit one", "before": ["two"], "after": ["four"]},
                {"path": "a.rs", "line": 9, "column": 1, "text": "hit two", "before": ["eight"], "after": []},
                {"path": "b.rs", "line": 1, "column": 1, "text": "hit three", "before": [], "after": []}
            ],
            "files": [], "truncated": false, "summary": "3 matching lines"
        });
        let t = result("search_text", &r);
        assert_eq!(
            t.out,
            "a.rs-2-two\na.rs:3:hit one\na.rs-4-four\n--\na.rs-8-eight\na.rs:9:hit two\n--\nb.rs:1:hit three\n"
        );
        assert_eq!(t.note, None);
    }

    #[test]
    fn plain_hits_have_no_separators_and_counts_print_as_path_count() {
        let r = json!({
            "matches": [
                {"path": "a.rs", "line": 3, "column": 1, "text": "x", "before": [], "after": []},
                {"path": "b.rs", "line": 7, "column": 2, "text": "y", "before": [], "after": []}
            ],
            "truncated": true, "summary": "2 matching lines; stopped at max_matches = 2"
        });
        let t = result("search_text", &r);
        assert_eq!(t.out, "a.rs:3:x\nb.rs:7:y\n");
        assert_eq!(
            t.note.as_deref(),
            Some("2 matching lines; stopped at max_matches = 2")
        );
        let r = json!({"matches": [], "files": [{"path": "a.rs", "count": 4}], "summary": ""});
        assert_eq!(result("search_text", &r).out, "a.rs:4\n");
    }

    #[test]
    fn errors_are_one_line_with_the_code() {
        let e = json!({"code": "NOT_FOUND", "message": "'x' does not exist", "path": "x"});
        assert_eq!(error(&e), "NOT_FOUND: 'x' does not exist");
    }

    #[test]
    fn mutations_print_their_diff_and_listings_their_paths() {
        let r =
            json!({"diff": "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", "summary": "1 file changed"});
        let t = result("edit_file", &r);
        assert!(t.out.starts_with("--- a/x\n") && t.out.ends_with("+b\n"));
        assert_eq!(t.note.as_deref(), Some("1 file changed"));
        let r = json!({"entries": [{"path": "src", "type": "dir"}, {"path": "a.rs", "type": "file"}], "truncated": false});
        assert_eq!(result("list_dir", &r).out, "src/\na.rs\n");
    }

    #[test]
    fn tool_help_lists_arguments_with_types_and_requirement() {
        let t = json!({
            "name": "read_file",
            "description": "Reads a file.",
            "input_schema": {
                "type": "object",
                "required": ["path"],
                "properties": {
                    "path": {"type": "string", "description": "File to read."},
                    "max_lines": {"type": ["integer", "null"], "description": "Most lines."}
                }
            }
        });
        let h = tool_help(&t);
        assert!(
            h.contains("  path (string, required)\n      File to read.\n"),
            "{h}"
        );
        assert!(h.contains("  max_lines (integer)\n"), "{h}");
        assert_eq!(tool_line(&t), format!("{:<16}Reads a file.", "read_file"));
    }
}
