//! The tool registry: every tool's name, description for a model, argument schema,
//! annotations and JSON handler, in one table. Both the JSON dispatch (`call`) and
//! `describe` read it, and every call runs through [`run_call`], which emits exactly one
//! audit event whatever the outcome.

use std::sync::atomic::Ordering;
use std::time::Instant;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

use super::{changes, edit, list, media, mutate, patch, read, search, workspace};
use crate::api::{
    AppendFileArgs, ApplyPatchArgs, ChangesSinceArgs, DeleteFileArgs, DiffWorkspaceArgs,
    EditFileArgs, FileInfoArgs, FindFilesArgs, ListDirArgs, MoveFileArgs, ReadFileArgs,
    ReadManyArgs, ReadMediaArgs, RevertArgs, SearchTextArgs, WriteFileArgs,
};
use crate::audit::{AuditEvent, CallLog};
use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::rules::policy::Policy;
use crate::tools::session::Session;

/// One tool as offered to a model.
#[derive(Debug)]
pub struct ToolSpec {
    /// snake_case name.
    pub name: &'static str,
    /// A short human-readable name, for a client's display.
    pub title: &'static str,
    /// When to use it, what it returns, what its errors mean.
    pub description: &'static str,
    /// True for tools that change files (left out of read-only sessions).
    pub mutates: bool,
    /// True when a call may delete or overwrite content.
    pub destructive: bool,
    /// True when repeating a call with the same arguments has no further effect.
    pub idempotent: bool,
    schema: fn() -> Value,
    output: fn() -> Value,
    /// Parses the arguments, runs the tool and writes its result as JSON text (straight
    /// from the result's type: no `Value` tree is built on the way).
    run: fn(&Session, &mut CallLog, &str) -> ToolResult<String>,
}

impl ToolSpec {
    /// The JSON Schema of the tool's arguments.
    pub fn input_schema(&self) -> Value {
        (self.schema)()
    }

    /// The JSON Schema of what a call returns as JSON: the tool's result, or
    /// `{"error": {...}}` when it fails (the shape an MCP server gives a failed call).
    pub fn output_schema(&self) -> Value {
        (self.output)()
    }

    /// The entry `describe` gives for this tool.
    pub fn describe(&self) -> Value {
        json!({
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "input_schema": self.input_schema(),
            "output_schema": self.output_schema(),
            "annotations": {
                "title": self.title,
                "readOnlyHint": !self.mutates,
                "destructiveHint": self.destructive,
                "idempotentHint": self.idempotent,
                // Every tool acts on the one repository and nothing beyond it.
                "openWorldHint": false,
            },
        })
    }
}

/// Parses JSON arguments into `A`, with messages that tell the agent which field is wrong.
///
/// # Errors
/// `INVALID_INPUT`.
pub fn parse_args<A: DeserializeOwned>(tool: &str, json: &str) -> ToolResult<A> {
    let text = if json.trim().is_empty() { "{}" } else { json };
    serde_json::from_str(text).map_err(|e| {
        ToolError::invalid(format!(
            "arguments of {tool} are malformed: {e}; see the tool's input schema"
        ))
    })
}

fn schema_of<A: JsonSchema>() -> Value {
    let mut settings = schemars::generate::SchemaSettings::draft2020_12();
    settings.inline_subschemas = true;
    let schema = settings.into_generator().into_root_schema_for::<A>();
    let mut v = schema.to_value();
    if let Some(obj) = v.as_object_mut() {
        obj.remove("$schema");
        obj.remove("title");
    }
    v
}

/// A failed call as JSON: the error object under `error`.
#[derive(JsonSchema)]
#[allow(dead_code)] // only its schema is used
struct ErrorResult {
    error: ToolError,
}

/// The output schema of a tool whose handler is `_f`: its result type or [`ErrorResult`].
/// The root is an object, as MCP requires of an output schema.
fn output_schema_of<A, R: JsonSchema>(
    _f: fn(&Session, &mut CallLog, &A) -> ToolResult<R>,
) -> Value {
    json!({
        "type": "object",
        "anyOf": [schema_of::<R>(), schema_of::<ErrorResult>()],
    })
}

fn to_text<R: Serialize>(r: R) -> ToolResult<String> {
    serde_json::to_string(&r)
        .map_err(|e| ToolError::new(ErrorCode::Internal, format!("result not serialisable: {e}")))
}

macro_rules! tool {
    ($name:literal, $title:literal, $args:ty, $f:path, mutates: $m:expr, destructive: $d:expr, idempotent: $i:expr, $desc:expr) => {
        ToolSpec {
            name: $name,
            title: $title,
            description: $desc,
            mutates: $m,
            destructive: $d,
            idempotent: $i,
            schema: schema_of::<$args>,
            output: || output_schema_of($f),
            run: |s, log, json| {
                let args: $args = parse_args($name, json)?;
                to_text($f(s, log, &args)?)
            },
        }
    };
}

/// Every tool, in the order `describe` lists them.
pub static TOOLS: &[ToolSpec] = &[
    tool!("list_dir", "List a directory", ListDirArgs, list::list_dir, mutates: false, destructive: false, idempotent: true,
        "List a directory of the repository (paths relative to its root). Use it to see what a \
         directory holds before reading. Returns entries with path, type, kind (source, config, \
         doc, secret, generated, ...), size and modification time, sorted; max_depth > 1 walks \
         deeper. Ignored, hidden and generated entries are skipped by default and counted in \
         `skipped`. Errors: PATH_REJECTED (absolute or escaping path), NOT_FOUND, NOT_A_FILE (the \
         path is a file), POLICY_DENIED."),
    tool!("find_files", "Find files by glob", FindFilesArgs, list::find_files, mutates: false, destructive: false, idempotent: true,
        "Find files by glob, honouring .gitignore. A glob without '/' matches file names at any \
         depth (\"*.rs\"); one with '/' matches the path from the root (\"src/**/test_*.py\"). \
         Returns sorted paths. Use it to locate files by name; use search_text to find content. \
         Errors: INVALID_INPUT (bad glob), PATH_REJECTED, NOT_FOUND."),
    tool!("read_file", "Read a file", ReadFileArgs, read::read_file, mutates: false, destructive: false, idempotent: true,
        "Read a text file, whole or a range of lines (start_line, max_lines). Returns the content, \
         the line range returned, total lines, the sha256 of the whole file (pass it as \
         expected_sha256 when you change the file), line-ending style, text encoding (files in \
         UTF-16, Latin-1 and other encodings are decoded; changes keep the encoding) and whether \
         the output was truncated (then continue from the start_line the summary gives). Errors: NOT_FOUND, \
         POLICY_DENIED (secrets such as .env and keys are never readable; .git is off limits), \
         UNSUPPORTED_BINARY (an image or a PDF: use read_media), FILE_TOO_LARGE (read it by \
         range instead), PATH_REJECTED."),
    tool!("read_many", "Read several files", ReadManyArgs, read::read_many, mutates: false, destructive: false, idempotent: true,
        "Read several text files in one call. Each file gets its own result or its own error \
         (same codes as read_file), so one missing file does not fail the rest. Errors for the \
         whole call: INVALID_INPUT (no paths), LIMIT_EXCEEDED (too many paths; split the call)."),
    tool!("read_media", "Read an image or PDF", ReadMediaArgs, media::read_media, mutates: false, destructive: false, idempotent: true,
        "Read an image (PNG, JPEG, GIF, WebP) or a PDF whole, to look at it: returns its MIME \
         type, size, sha256 and the file as base64 (data_base64). The type comes from the file's \
         content, not its name: a PNG named .dat is read as image/png, text named .png is \
         refused. SVG is text: read it with read_file. A PDF comes back as the file itself; its \
         text is not extracted. Secrets, blocked paths and files holding keys are refused as \
         read_file refuses them. Errors: NOT_FOUND, POLICY_DENIED, FILE_TOO_LARGE (over the \
         policy's max_media_bytes, 5 MiB by default; nothing is returned), UNSUPPORTED_MEDIA \
         (not one of these types), NOT_A_FILE, PATH_REJECTED."),
    tool!("search_text", "Search file contents", SearchTextArgs, search::search_text, mutates: false, destructive: false, idempotent: true,
        "Search file contents for a literal string (default) or a regular expression \
         (regex: true), honouring .gitignore. Returns matching lines with path, line number, \
         column and optional context lines; a line over 500 bytes comes back as a window \
         around the match, marked [\u{2026}N bytes cut] / [N bytes cut\u{2026}] (cut_before, \
         cut_after; the match at match_start in text). Output \"files\" or \"count\" returns less. Narrow it \
         with path, include and exclude globs. Binary, secret and oversized files are skipped and \
         counted. Errors: INVALID_INPUT (empty query, malformed or too complex regex, bad glob), \
         PATH_REJECTED, NOT_FOUND."),
    tool!("file_info", "Describe a path", FileInfoArgs, list::file_info, mutates: false, destructive: false, idempotent: true,
        "Describe one path without reading it into the conversation: type, size, modification \
         time, kind, sha256 (for readable files), symlink target, and whether the session policy \
         lets you read and change it (with the reason when not). Works on secrets too (metadata \
         only). Errors: NOT_FOUND, PATH_REJECTED, POLICY_DENIED (.git)."),
    tool!("changes_since", "See what changed", ChangesSinceArgs, changes::changes_since, mutates: false, destructive: false, idempotent: false,
        "See which files were created, modified or deleted since an earlier call, without \
         re-reading the tree. Call it without a token to get one for the tree as it is; later, \
         pass that token to get the changes since (paths sorted, each with its size and, for \
         readable files, the sha256 read_file reports, usable as expected_sha256) and a new \
         token. The same files as find_files are seen (ignore rules, hidden files, policy); a \
         rename is a deletion plus a creation. Errors: INVALID_INPUT (reason token: altered, \
         forged or another repository's; token_expired: its snapshot is no longer kept; cursor), \
         LIMIT_EXCEEDED (tree larger than one walk may visit: give a path), PATH_REJECTED, \
         NOT_FOUND."),
    tool!("write_file", "Write a file", WriteFileArgs, mutate::write_file, mutates: true, destructive: true, idempotent: true,
        "Create a file or replace its whole content, atomically (missing parent directories are \
         created). To change part of an existing file prefer edit_file or apply_patch. When \
         replacing, pass expected_sha256 from your last read_file so a file changed since is not \
         overwritten. A CRLF file keeps CRLF, and a file keeps its BOM and encoding; a new file \
         takes the line endings and encoding .gitattributes and .editorconfig declare. Returns the new sha256 and a \
         diff. Errors: ALREADY_EXISTS (mode create), NOT_FOUND (mode replace), WRITE_CONFLICT \
         (file changed since you read it: re-read and retry with the current sha256), \
         POLICY_DENIED (secrets, .git, generated, vendored, lock files, read-only session), \
         PATH_REJECTED, LIMIT_EXCEEDED (too large), ENCODING_ERROR (a character the file's \
         encoding cannot hold)."),
    tool!("edit_file", "Edit a file", EditFileArgs, edit::edit_file, mutates: true, destructive: true, idempotent: false,
        "Change a file by exact text replacement. Each edit's old_text must appear exactly once \
         (include enough surrounding lines) unless replace_all is set; edits apply in order, all \
         or none. Write line breaks as \\n even in CRLF files; the file's line endings, BOM, \
         encoding and final newline are kept. dry_run returns the diff without writing. With match \
         (\"trailing_whitespace\", \"whitespace\" or \"punctuation\") an old_text not found \
         exactly may match whole lines uniquely at that level; new_text then takes the file's \
         indentation (tabs stay tabs) and the edit is listed in relaxed_hunks. Errors: \
         EDIT_NO_MATCH (names the closest lines, says when only whitespace or line endings \
         differ, which match level would find it, and shows the first differing line and \
         column with invisible characters spelled out: re-read and copy exactly), EDIT_AMBIGUOUS (lists every matching line), WRITE_CONFLICT, \
         POLICY_DENIED, NOT_FOUND, ENCODING_ERROR (a character the file's encoding cannot hold, \
         or bytes not valid in it), UNSUPPORTED_BINARY."),
    tool!("apply_patch", "Apply a patch", ApplyPatchArgs, patch::apply_patch, mutates: true, destructive: true, idempotent: false,
        "Apply a unified diff (one or many files; git headers for new, deleted and renamed files; \
         a/ b/ prefixes) or a \"*** Begin Patch\" envelope (Add/Update/Delete File, Move to). \
         All or nothing: if any hunk of any file does not match, nothing changes. Context must \
         match exactly unless you set match (\"trailing_whitespace\", \"whitespace\" or \
         \"punctuation\"; relaxed hunks are listed in relaxed_hunks); a hunk found away from \
         its stated line is applied and reported. To add or move onto an existing file, give \
         its sha256 in expected_sha256s. dry_run checks without writing. Errors: \
         PATCH_PARSE_ERROR (names the line), PATCH_CONFLICT (names file and hunk, shows \
         expected and found lines and the first differing column, invisible characters \
         spelled out: re-read and regenerate), PATCH_BUDGET_EXCEEDED (split the patch), \
         ENCODING_ERROR (a character a file's encoding cannot hold), UNSUPPORTED_BINARY, \
         POLICY_DENIED, PATH_REJECTED."),
    tool!("append_file", "Append to a file", AppendFileArgs, mutate::append_file, mutates: true, destructive: false, idempotent: false,
        "Append text to the end of a file (created when missing). The file ends up either as \
         before or fully appended, never half. Errors: WRITE_CONFLICT, POLICY_DENIED, \
         PATH_REJECTED, ENCODING_ERROR, UNSUPPORTED_BINARY, LIMIT_EXCEEDED."),
    tool!("delete_file", "Delete a file", DeleteFileArgs, mutate::delete_file, mutates: true, destructive: true, idempotent: false,
        "Delete one file (never a directory or symlink). Pass expected_sha256 to be sure you \
         delete what you read. Errors: NOT_FOUND, NOT_A_FILE, WRITE_CONFLICT, POLICY_DENIED, \
         PATH_REJECTED."),
    tool!("move_file", "Move a file", MoveFileArgs, mutate::move_file, mutates: true, destructive: true, idempotent: false,
        "Move or rename a file. An existing destination is never overwritten unless you pass \
         its current sha256 as destination_sha256. Errors: ALREADY_EXISTS, NOT_FOUND, \
         WRITE_CONFLICT, POLICY_DENIED (also when the session does not allow moves), \
         PATH_REJECTED."),
    tool!("diff_workspace", "Diff the session's changes", DiffWorkspaceArgs, workspace::diff_workspace, mutates: false, destructive: false, idempotent: true,
        "Show everything this session changed through the tools (created, modified, deleted and \
         moved files) as a unified diff with per-file statistics and the diff's sha256. Use it \
         to review your work before finishing. Secret content is never shown. Errors: \
         PATH_REJECTED (bad filter path)."),
    tool!("revert", "Revert files", RevertArgs, workspace::revert, mutates: true, destructive: true, idempotent: false,
        "Restore files to how they were when the session began (a file the session created is \
         deleted). Pass each file's current sha256 in expected_sha256s to be sure. All or \
         nothing. Errors: INVALID_INPUT (a path the session did not change), WRITE_CONFLICT, \
         POLICY_DENIED, PATH_REJECTED."),
];

/// Looks a tool up by name.
pub fn find(name: &str) -> Option<&'static ToolSpec> {
    TOOLS.iter().find(|t| t.name == name)
}

/// The tools a session offers: mutation tools are left out when it is read-only.
pub fn offered(policy: &Policy) -> impl Iterator<Item = &'static ToolSpec> {
    let read_only = policy.config.read_only;
    let moves = policy.config.allow_move;
    TOOLS
        .iter()
        .filter(move |t| !(read_only && t.mutates) && (moves || t.name != "move_file"))
}

/// `describe` as a JSON array.
pub fn describe(policy: &Policy) -> String {
    Value::Array(offered(policy).map(ToolSpec::describe).collect()).to_string()
}

/// Calls a tool by name with JSON arguments; its result as JSON text.
///
/// # Errors
/// `INVALID_INPUT` for an unknown tool or malformed arguments, then the tool's own errors.
pub fn call_json(
    session: &Session,
    log: &mut CallLog,
    tool: &str,
    args: &str,
) -> ToolResult<String> {
    let spec = find(tool).ok_or_else(|| {
        let names: Vec<&str> = TOOLS.iter().map(|t| t.name).collect();
        ToolError::invalid(format!(
            "unknown tool '{}'; the tools are: {}",
            shown_name(tool),
            names.join(", ")
        ))
    })?;
    (spec.run)(session, log, args)
}

/// [`call_json`] with the result parsed, for tests that look into it.
#[cfg(test)]
pub(crate) fn call_value(
    session: &Session,
    log: &mut CallLog,
    tool: &str,
    args: &str,
) -> ToolResult<Value> {
    let text = call_json(session, log, tool, args)?;
    serde_json::from_str(&text)
        .map_err(|e| ToolError::new(ErrorCode::Internal, format!("result not JSON: {e}")))
}

fn shown_name(tool: &str) -> String {
    if tool.len() <= 64 && !tool.chars().any(char::is_control) {
        return tool.to_string();
    }
    tool.chars().take(64).filter(|c| !c.is_control()).collect()
}

/// Runs one call against `session` (or its setup error), emitting exactly one audit event
/// through the session's services (or `fallback`'s, when there is no session).
///
/// # Errors
/// Whatever the session setup or the call returns.
pub fn run_call<T>(
    session: &ToolResult<Session>,
    fallback: &dyn crate::rules::services::Services,
    tool: &str,
    f: impl FnOnce(&Session, &mut CallLog) -> ToolResult<T>,
) -> ToolResult<T> {
    let started = Instant::now();
    crate::fault::call_starts(tool);
    let mut log = CallLog {
        tool: shown_name(tool),
        ..CallLog::default()
    };
    let result = match session {
        Ok(s) => {
            // Nothing a previous call saw of the tree is taken for granted.
            s.policy.forget_lookups();
            // What a killed call left is settled before this call looks at anything.
            crate::tools::journal::recover(s, find(tool).is_some_and(|t| t.mutates));
            f(s, &mut log)
        }
        Err(e) => Err(e.clone()),
    };
    let err = result.as_ref().err();
    let (services, sequence) = match session {
        Ok(s) => (s.fs.services(), s.calls.fetch_add(1, Ordering::Relaxed) + 1),
        Err(_) => (fallback, 0),
    };
    let event = AuditEvent {
        sequence,
        tool: std::mem::take(&mut log.tool),
        ok: err.is_none(),
        error_code: err.map(|e| e.code),
        error_message: err.map(|e| e.message.clone()),
        paths_read: log.paths_read,
        paths_written: log.paths_written,
        files: log.files,
        bytes_read: log.bytes_read,
        bytes_written: log.bytes_written,
        insertions: log.insertions,
        deletions: log.deletions,
        duration_us: started.elapsed().as_micros() as u64,
        diff: log.diff,
        notes: log.notes,
    };
    services.emit(event);
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::fsx::Fs;
    use crate::rules::policy::Policy;

    fn session(root: &std::path::Path, policy: &str) -> Session {
        Session::new(Fs::open(root).unwrap(), Policy::from_json(policy).unwrap())
    }

    #[test]
    fn every_tool_has_an_object_schema_and_a_description() {
        for t in TOOLS {
            let s = t.input_schema();
            assert_eq!(s["type"], "object", "{}", t.name);
            assert!(t.description.len() > 80, "{}", t.name);
            assert!(t.name.chars().all(|c| c.is_ascii_lowercase() || c == '_'));
        }
        let read = find("read_file").unwrap().input_schema();
        assert_eq!(read["required"], json!(["path"]));
        assert!(read["properties"]["start_line"]["description"]
            .as_str()
            .unwrap()
            .contains("from 1"));
        let patch = find("apply_patch").unwrap().input_schema().to_string();
        for level in ["exact", "trailing_whitespace", "whitespace", "punctuation"] {
            assert!(patch.contains(level), "{level}: {patch}");
        }
        assert!(patch.contains("\"match\""), "{patch}");
    }

    #[test]
    fn every_tool_has_a_title_and_an_output_schema_of_its_result_or_an_error() {
        for t in TOOLS {
            let d = t.describe();
            assert!(!t.title.is_empty(), "{}", t.name);
            assert_eq!(d["title"], t.title);
            assert_eq!(d["annotations"]["openWorldHint"], false, "{}", t.name);
            let out = t.output_schema();
            assert_eq!(out["type"], "object", "{}", t.name);
            let branches = out["anyOf"].as_array().expect("two branches");
            assert_eq!(branches.len(), 2, "{}", t.name);
            assert!(
                branches[0]["properties"]["summary"].is_object(),
                "{}",
                t.name
            );
            assert_eq!(branches[1]["required"], json!(["error"]), "{}", t.name);
            let codes = &branches[1]["properties"]["error"]["properties"]["code"]["enum"];
            assert!(codes
                .as_array()
                .is_some_and(|c| c.contains(&json!("NOT_FOUND"))));
        }
        // A real result has every required field of the published schema, and no other.
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("a.txt"), "hello\n").unwrap();
        let s = session(tmp.path(), "");
        let mut log = CallLog::default();
        let v = call_value(&s, &mut log, "read_file", r#"{"path":"a.txt"}"#).unwrap();
        let out = find("read_file").unwrap().output_schema();
        let schema = &out["anyOf"][0];
        let props = schema["properties"].as_object().unwrap();
        let fields = v.as_object().unwrap();
        assert!(fields.keys().all(|k| props.contains_key(k)), "{v}");
        for r in schema["required"].as_array().unwrap() {
            assert!(fields.contains_key(r.as_str().unwrap()), "{r}");
        }
    }

    #[test]
    fn json_dispatch_reports_unknown_tools_and_bad_arguments() {
        let tmp = tempfile::tempdir().unwrap();
        let s = session(tmp.path(), "");
        let mut log = CallLog::default();
        let e = call_value(&s, &mut log, "rm_rf", "{}").unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidInput);
        assert!(e.message.contains("read_file"));
        let e = call_value(&s, &mut log, "read_file", r#"{"paht":"a"}"#).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidInput);
        assert!(e.message.contains("paht"), "{}", e.message);
        let e = call_value(&s, &mut log, "read_file", "[1,").unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidInput);
    }

    #[test]
    fn json_dispatch_runs_a_tool() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("a.txt"), "hello\n").unwrap();
        let s = session(tmp.path(), "");
        let mut log = CallLog::default();
        let v = call_value(&s, &mut log, "read_file", r#"{"path":"a.txt"}"#).unwrap();
        assert_eq!(v["content"], "hello\n");
        assert_eq!(v["line_ending"], "lf");
        assert_eq!(log.paths_read, ["a.txt"]);
    }

    #[test]
    fn describe_offers_mutations_only_to_writable_sessions() {
        let tmp = tempfile::tempdir().unwrap();
        let names = |policy: &str| -> Vec<String> {
            let v: Value =
                serde_json::from_str(&describe(&session(tmp.path(), policy).policy)).unwrap();
            v.as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_string())
                .collect()
        };
        let rw = names("");
        for n in [
            "write_file",
            "edit_file",
            "apply_patch",
            "append_file",
            "delete_file",
            "diff_workspace",
            "revert",
        ] {
            assert!(rw.contains(&n.to_string()), "{n}");
        }
        assert!(!rw.contains(&"move_file".to_string()));
        assert!(names(r#"{"allow_move":true}"#).contains(&"move_file".to_string()));
        let write = find("write_file").unwrap().describe();
        assert_eq!(write["annotations"]["readOnlyHint"], false);
        assert_eq!(write["annotations"]["destructiveHint"], true);
    }

    #[test]
    fn describe_lists_every_read_tool() {
        let tmp = tempfile::tempdir().unwrap();
        let v: Value = serde_json::from_str(&describe(
            &session(tmp.path(), r#"{"read_only":true}"#).policy,
        ))
        .unwrap();
        let names: Vec<&str> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "list_dir",
                "find_files",
                "read_file",
                "read_many",
                "read_media",
                "search_text",
                "file_info",
                "changes_since",
                "diff_workspace"
            ]
        );
        assert_eq!(v[0]["annotations"]["readOnlyHint"], true);
    }
}
