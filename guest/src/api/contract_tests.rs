//! WIT is the source of the contract. This test reads the WIT package and the JSON Schemas
//! the tool registry publishes (what `describe` returns and the MCP server hands to models),
//! and checks every tool, every argument and result field, its type, whether it may be
//! absent, and its doc. It names the tool, the field and what drifted.
//!
//! The rules, WIT to JSON:
//! - names: a kebab-case WIT name is the snake_case JSON name (`next-cursor`:
//!   `next_cursor`); an `error-code` case is SCREAMING_SNAKE_CASE (`NOT_FOUND`);
//! - types: `string`, `bool`, `u32`/`u64` (JSON integers of format `uint32`/`uint64`),
//!   `list<T>` (an array), records (objects), enums (their case names); a list of a record
//!   of two strings is a JSON object from the first to the second (`expected-sha256s`,
//!   error `details`); a field `result<T, tool-error>` is three JSON fields, `ok`, `result`
//!   and `error` (`read-many`);
//! - absence: `option<T>` is a JSON field that is not required and may be null; any other
//!   field is required, except a list, which JSON may leave out for empty;
//! - docs: every field is documented in the WIT, and its JSON doc is the same text with
//!   whitespace collapsed and the WIT names between backticks written as JSON spells them.
//!   A record's or enum's own doc is compared where the JSON Schema shows it (a tool's
//!   arguments and result, list items, an optional enum); enum cases' docs are compared
//!   when the JSON Schema documents its cases (a `oneOf` of constants).
//!
//! What the rules leave out, on purpose: a tool's description (the function doc is written
//! for WIT users, the description for models, with the JSON names and codes), the
//! parameter of `file-info` (WIT cannot document a parameter; its JSON field is compared
//! by name and type) and the WIT functions with no JSON tool, listed below.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use wit_parser::{Docs, Record, Resolve, Type, TypeDefKind};

use crate::tools::TOOLS;

/// WIT functions that are no JSON tool: they are the JSON layer itself.
const WIT_ONLY_FUNCTIONS: &[&str] = &[
    // Returns the JSON tool list this test reads.
    "describe", // Calls a JSON tool by name.
    "call",
];

#[test]
fn every_tool_field_type_and_doc_of_the_json_schemas_is_as_the_wit_says() {
    let resolve = wit();
    let drift = compare(&resolve);
    assert!(
        drift.is_empty(),
        "the JSON Schemas drifted from wit/ ({} places):\n{}",
        drift.len(),
        drift.join("\n")
    );
}

/// The positive control: one changed doc and one renamed field are both reported, with the
/// tool and the field named.
#[test]
fn a_changed_doc_or_field_is_named() {
    let mut resolve = wit();
    let (id, _) = resolve
        .types
        .iter()
        .find(|(_, t)| t.name.as_deref() == Some("read-file-args"))
        .expect("read-file-args is in the WIT");
    let TypeDefKind::Record(r) = &mut resolve.types[id].kind else {
        panic!("read-file-args is a record")
    };
    r.fields[1].docs.contents = Some("First line, from 0.".into());
    r.fields[2].name = "most-lines".into();
    let drift = compare(&resolve).join("\n");
    assert!(drift.contains("read_file input.start_line: doc"), "{drift}");
    assert!(drift.contains("First line, from 0."), "{drift}");
    assert!(
        drift.contains("read_file input.most_lines: in the WIT"),
        "{drift}"
    );
    assert!(
        drift.contains("read_file input.max_lines: in the JSON Schema only"),
        "{drift}"
    );
}

/// The shared table of error-code names is the WIT enum, case for case and in order (both
/// sides index it by their enum's position).
#[test]
fn the_contract_error_codes_are_the_wit_enum_in_order() {
    let resolve = wit();
    let cases: Vec<String> = resolve
        .types
        .iter()
        .find_map(|(_, t)| match (&t.kind, t.name.as_deref()) {
            (TypeDefKind::Enum(e), Some("error-code")) => Some(
                e.cases
                    .iter()
                    .map(|c| snake(&c.name).to_uppercase())
                    .collect(),
            ),
            _ => None,
        })
        .expect("error-code is in the WIT");
    assert_eq!(cases, file_tools_contract::ERROR_CODES);
}

fn wit() -> Resolve {
    let dir = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../wit"));
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("wit/ is readable")
        .map(|e| e.expect("wit/ lists").path())
        .filter(|p| p.extension().is_some_and(|x| x == "wit"))
        .collect();
    files.sort();
    let mut sources = wit_parser::SourceMap::new();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("a WIT file is readable");
        sources.push_str(&path.display().to_string(), text);
    }
    let group = match sources.parse() {
        Ok(group) => group,
        Err((_, e)) => panic!("wit/ does not parse: {e:?}"),
    };
    let mut resolve = Resolve::default();
    if let Err(e) = resolve.push_group(group) {
        panic!("wit/ does not resolve: {e:?}");
    }
    resolve
}

/// Every drift between the WIT in `resolve` and the published schemas.
fn compare(resolve: &Resolve) -> Vec<String> {
    let mut cx = Check::new(resolve);
    let Some(tools) = cx.interface("tools") else {
        return vec!["the WIT has no `tools` interface".into()];
    };
    let functions = &resolve.interfaces[tools].functions;
    for t in TOOLS {
        if !functions.contains_key(&t.name.replace('_', "-")) {
            cx.drift(t.name, "a JSON tool with no WIT function");
        }
    }
    for (name, f) in functions {
        if WIT_ONLY_FUNCTIONS.contains(&name.as_str()) {
            continue;
        }
        let Some(tool) = TOOLS.iter().find(|t| t.name == snake(name)) else {
            cx.drift(name, "a WIT function with no JSON tool");
            continue;
        };
        let at = format!("{} input", tool.name);
        let input = tool.input_schema();
        match f.params.as_slice() {
            [p] if cx.record_of(&p.ty).is_some() => cx.value(&at, &p.ty, &input, true),
            params => {
                // Bare parameters (file-info): one JSON field each, named and typed alike.
                let fields: Vec<_> = params.iter().map(|p| (p.name.clone(), p.ty)).collect();
                cx.json_type(&at, &input, "object", None);
                cx.shape(&at, &fields, &[], &input);
            }
        }
        let output = tool.output_schema();
        let (ok, err) = match f.result.as_ref().and_then(|t| cx.result_of(t)) {
            Some(pair) => pair,
            None => {
                cx.drift(
                    tool.name,
                    "the WIT function does not return result<T, tool-error>",
                );
                continue;
            }
        };
        let at = format!("{} output", tool.name);
        cx.value(&at, &ok, &output["anyOf"][0], true);
        let error = &output["anyOf"][1]["properties"]["error"];
        cx.value(&format!("{at} error"), &err, error, true);
    }
    cx.found
}

/// What the comparison knows and has found.
struct Check<'a> {
    resolve: &'a Resolve,
    /// WIT names whose JSON spelling differs, for docs that name them between backticks.
    names: BTreeMap<String, String>,
    found: Vec<String>,
}

impl<'a> Check<'a> {
    fn new(resolve: &'a Resolve) -> Self {
        let mut names = BTreeMap::new();
        for (_, i) in resolve.interfaces.iter() {
            for name in i.functions.keys() {
                names.insert(name.clone(), snake(name));
            }
        }
        for (_, t) in resolve.types.iter() {
            match &t.kind {
                TypeDefKind::Record(r) => {
                    for f in &r.fields {
                        names.insert(f.name.clone(), snake(&f.name));
                    }
                }
                TypeDefKind::Enum(e) => {
                    for c in &e.cases {
                        names.insert(c.name.clone(), snake(&c.name));
                    }
                }
                _ => {}
            }
        }
        // Error codes last: their JSON spelling is the one a doc means.
        for (_, t) in resolve.types.iter() {
            if let (Some("error-code"), TypeDefKind::Enum(e)) = (t.name.as_deref(), &t.kind) {
                for c in &e.cases {
                    names.insert(c.name.clone(), snake(&c.name).to_uppercase());
                }
            }
        }
        names.retain(|k, v| k != v);
        Check {
            resolve,
            names,
            found: Vec::new(),
        }
    }

    fn drift(&mut self, at: &str, what: &str) {
        self.found.push(format!("{at}: {what}"));
    }

    fn interface(&self, name: &str) -> Option<wit_parser::InterfaceId> {
        let (_, pkg) = self.resolve.packages.iter().next()?;
        pkg.interfaces.get(name).copied()
    }

    fn kind(&self, ty: &Type) -> Option<&'a TypeDefKind> {
        match ty {
            Type::Id(id) => match &self.resolve.types[*id].kind {
                TypeDefKind::Type(t) => self.kind(t),
                k => Some(k),
            },
            _ => None,
        }
    }

    fn record_of(&self, ty: &Type) -> Option<&'a Record> {
        match self.kind(ty)? {
            TypeDefKind::Record(r) => Some(r),
            _ => None,
        }
    }

    fn result_of(&self, ty: &Type) -> Option<(Type, Type)> {
        match self.kind(ty)? {
            TypeDefKind::Result(r) => Some((r.ok?, r.err?)),
            _ => None,
        }
    }

    /// A record of two strings, which JSON writes as an object from the first to the second.
    fn is_pair(&self, ty: &Type) -> bool {
        self.record_of(ty)
            .is_some_and(|r| r.fields.len() == 2 && r.fields.iter().all(|f| f.ty == Type::String))
    }

    /// The WIT doc as the JSON doc must read: whitespace collapsed, WIT names between
    /// backticks in their JSON spelling.
    fn json_doc(&self, docs: &Docs) -> Option<String> {
        let text = normalise(docs.contents.as_deref()?);
        let mut out = String::new();
        for (i, part) in text.split('`').enumerate() {
            if i > 0 {
                out.push('`');
            }
            if i % 2 == 0 {
                out.push_str(part);
                continue;
            }
            let mut word = String::new();
            for c in part.chars().chain(std::iter::once(' ')) {
                if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_' {
                    word.push(c);
                    continue;
                }
                out.push_str(self.names.get(&word).unwrap_or(&word));
                word.clear();
                out.push(c);
            }
            out.pop();
        }
        Some(out)
    }

    /// Compares a doc the WIT gives with the one the JSON Schema node shows.
    fn doc(&mut self, at: &str, wit: &Docs, node: &Value) {
        let json = node["description"].as_str().map(normalise);
        match (self.json_doc(wit), json) {
            (None, _) => self.drift(at, "no doc in the WIT"),
            (Some(w), None) => self.drift(at, &format!("no doc in the JSON Schema; WIT: «{w}»")),
            (Some(w), Some(j)) if w != j => self.drift(
                at,
                &format!("doc differs:\n    WIT:  «{w}»\n    JSON: «{j}»"),
            ),
            _ => {}
        }
    }

    /// Compares WIT type `ty` with JSON Schema `node`; `own` when the node's doc is the
    /// type's own (no field doc above it).
    fn value(&mut self, at: &str, ty: &Type, node: &Value, own: bool) {
        match ty {
            Type::Bool => self.json_type(at, node, "boolean", None),
            Type::U32 => self.json_type(at, node, "integer", Some("uint32")),
            Type::U64 => self.json_type(at, node, "integer", Some("uint64")),
            Type::String => self.json_type(at, node, "string", None),
            Type::Id(id) => {
                let def = &self.resolve.types[*id];
                match &def.kind {
                    TypeDefKind::Type(t) => self.value(at, t, node, own),
                    TypeDefKind::Record(r) => {
                        self.json_type(at, node, "object", None);
                        if own {
                            self.doc(&format!("{at} (record doc)"), &def.docs, node);
                        }
                        let fields: Vec<_> =
                            r.fields.iter().map(|f| (f.name.clone(), f.ty)).collect();
                        let docs: Vec<_> = r.fields.iter().map(|f| &f.docs).collect();
                        self.shape(at, &fields, &docs, node);
                    }
                    TypeDefKind::Enum(e) => {
                        if own {
                            self.doc(&format!("{at} (enum doc)"), &def.docs, node);
                        }
                        let screaming = def.name.as_deref() == Some("error-code");
                        self.cases(at, e, screaming, node);
                    }
                    TypeDefKind::List(t) if self.is_pair(t) => {
                        self.json_type(at, node, "object", None);
                        let v = &node["additionalProperties"];
                        self.json_type(&format!("{at}{{}}"), v, "string", None);
                    }
                    TypeDefKind::List(t) => {
                        self.json_type(at, node, "array", None);
                        self.value(&format!("{at}[]"), t, &node["items"], true);
                    }
                    TypeDefKind::Option(t) => match without_null(node) {
                        Some((inner, separate)) => self.value(at, t, &inner, separate),
                        None => self.drift(at, "option<…> in the WIT, not nullable in JSON"),
                    },
                    other => self.drift(at, &format!("a WIT {} has no JSON rule", other.as_str())),
                }
            }
            other => self.drift(at, &format!("a WIT {other:?} has no JSON rule")),
        }
    }

    fn json_type(&mut self, at: &str, node: &Value, ty: &str, format: Option<&str>) {
        if node["type"].as_str() != Some(ty) {
            self.drift(
                at,
                &format!("type: WIT means {ty}, JSON has {}", node["type"]),
            );
        } else if let Some(f) = format {
            if node["format"].as_str() != Some(f) {
                self.drift(
                    at,
                    &format!("format: WIT means {f}, JSON has {}", node["format"]),
                );
            }
        }
    }

    fn cases(&mut self, at: &str, e: &wit_parser::Enum, screaming: bool, node: &Value) {
        let wit: Vec<String> = e
            .cases
            .iter()
            .map(|c| {
                if screaming {
                    snake(&c.name).to_uppercase()
                } else {
                    snake(&c.name)
                }
            })
            .collect();
        if let Some(list) = node["enum"].as_array() {
            let json: Vec<&str> = list.iter().filter_map(Value::as_str).collect();
            if wit != json {
                self.drift(at, &format!("enum cases: WIT {wit:?}, JSON {json:?}"));
            }
            return;
        }
        let Some(one_of) = node["oneOf"].as_array() else {
            self.drift(at, &format!("an enum in the WIT, JSON has {node}"));
            return;
        };
        let json: Vec<&str> = one_of.iter().filter_map(|c| c["const"].as_str()).collect();
        if wit != json {
            self.drift(at, &format!("enum cases: WIT {wit:?}, JSON {json:?}"));
            return;
        }
        for ((c, name), node) in e.cases.iter().zip(&wit).zip(one_of) {
            self.doc(&format!("{at}={name}"), &c.docs, node);
        }
    }

    /// Each WIT field against the JSON properties (docs compared when given), then the JSON
    /// properties the WIT lacks.
    fn shape(&mut self, at: &str, fields: &[(String, Type)], docs: &[&Docs], node: &Value) {
        let empty = serde_json::Map::new();
        let props = node["properties"].as_object().unwrap_or(&empty);
        let required: BTreeSet<&str> = node["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut seen = BTreeSet::new();
        for (i, (name, ty)) in fields.iter().enumerate() {
            let json = snake(name);
            let here = format!("{at}.{json}");
            if let Some((ok, err)) = self.result_of(ty) {
                // `result<T, tool-error>`: `ok`, and `result` or `error` (read-many).
                for (key, ty) in [("result", ok), ("error", err)] {
                    let here = format!("{at}.{key}");
                    seen.insert(key.to_string());
                    match props.get(key).and_then(without_null) {
                        Some((inner, own)) if !required.contains(key) => {
                            self.value(&here, &ty, &inner, own);
                        }
                        _ => self.drift(&here, "must be an optional JSON field for the WIT result"),
                    }
                }
                seen.insert("ok".to_string());
                if props.get("ok").map(|p| &p["type"]) != Some(&Value::from("boolean")) {
                    self.drift(&format!("{at}.ok"), "a WIT result needs a boolean `ok`");
                }
                for key in ["ok", "result", "error"] {
                    if props.get(key).is_some_and(|p| p["description"].is_null()) {
                        self.drift(&format!("{at}.{key}"), "no doc in the JSON Schema");
                    }
                }
                continue;
            }
            let Some(p) = props.get(&json) else {
                self.drift(&here, "in the WIT, missing from the JSON Schema");
                continue;
            };
            seen.insert(json.clone());
            let option = matches!(self.kind(ty), Some(TypeDefKind::Option(_)));
            let list = matches!(self.kind(ty), Some(TypeDefKind::List(_)));
            let req = required.contains(json.as_str());
            if option && req {
                self.drift(&here, "option<…> in the WIT, required in JSON");
            } else if !option && !list && !req {
                self.drift(&here, "required in the WIT, optional in JSON");
            }
            if let Some(d) = docs.get(i) {
                self.doc(&here, d, p);
            }
            self.value(&here, ty, p, false);
        }
        for name in props.keys() {
            if !seen.contains(name) {
                self.drift(&format!("{at}.{name}"), "in the JSON Schema only");
            }
        }
    }
}

/// A nullable node without its null: the inner schema, and whether it is a node of its own
/// (an `anyOf` branch, whose doc is the type's) or the same node (whose doc is the field's).
fn without_null(node: &Value) -> Option<(Value, bool)> {
    if let Some(types) = node["type"].as_array() {
        let rest: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
        if rest.len() + 1 != types.len() || rest.len() != 1 {
            return None;
        }
        let mut inner = node.clone();
        inner["type"] = rest[0].clone();
        if let Some(list) = inner["enum"].as_array_mut() {
            list.retain(|v| !v.is_null());
        }
        return Some((inner, false));
    }
    let branches = node["anyOf"].as_array()?;
    match branches.as_slice() {
        [a, b] if b["type"] == "null" => Some((a.clone(), true)),
        [a, b] if a["type"] == "null" => Some((b.clone(), true)),
        _ => None,
    }
}

fn snake(kebab: &str) -> String {
    kebab.replace('-', "_")
}

fn normalise(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
