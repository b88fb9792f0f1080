//! The layers import only downward: `component` → `tools` → `rules` → `text` → `fs`, and
//! any of them may use the shared vocabulary at the crate root (`api`, `audit`, `error`,
//! `fault`), which itself imports nothing from the layers but two type names. Test code
//! (`mod tests` blocks and test files) may reach anywhere.

use std::path::Path;

/// The rank of a top-level module: a module may import modules of its rank or below.
/// `None` for a name this table does not know, which fails the test so that a new
/// top-level module is placed in a layer on purpose.
fn rank(top: &str) -> Option<u8> {
    Some(match top {
        "api" | "audit" | "error" | "fault" => 0,
        "fs" => 1,
        "text" => 2,
        "rules" => 3,
        "tools" => 4,
        "component" => 5,
        _ => return None,
    })
}

/// What the vocabulary may name from the layers: the contract's types mention the kind a
/// path was classified as and the type of a directory entry.
const VOCABULARY_MAY_NAME: &[&str] =
    &["crate::rules::classify::Kind", "crate::fs::port::EntryType"];

/// The module path of a source file relative to `src/`: `tools/patch/mod.rs` is
/// `["tools", "patch"]`, `rules/walk.rs` is `["rules", "walk"]`.
fn module_path(rel: &str) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .trim_end_matches(".rs")
        .split('/')
        .map(String::from)
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// The source with comments and test-only blocks removed: everything from a
/// `#[cfg(test)]`-style attribute followed by an inline `mod NAME {` on.
fn production_text(src: &str) -> String {
    let lines: Vec<&str> = src.lines().collect();
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        if t.starts_with("#[cfg(") && t.contains("test") {
            let next = lines.get(i + 1).map_or("", |l| l.trim_start());
            if next.starts_with("mod ") && next.trim_end().ends_with('{') {
                break;
            }
        }
        let code = match t.find("//") {
            Some(_) if t.starts_with("//") => "",
            _ => line,
        };
        out.push_str(code);
        out.push('\n');
    }
    out
}

fn ident_at(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// Every crate-rooted path a file names, as `crate::a::b::...` (as far as plain
/// identifiers go), with `super::` chains resolved and `crate::{a, b}` groups split.
fn imports(module: &[String], text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        let starts_word = i == 0
            || !(bytes[i - 1].is_ascii_alphanumeric()
                || bytes[i - 1] == b'_'
                || bytes[i - 1] == b'$'
                || bytes[i - 1] == b':');
        if starts_word && (rest.starts_with("crate::") || rest.starts_with("super::")) {
            // The module the path starts from, and the text after its prefix.
            let mut base: Vec<String> = module.to_vec();
            let mut tail = rest;
            if let Some(t) = tail.strip_prefix("crate::") {
                base.clear();
                tail = t;
            } else {
                while let Some(t) = tail.strip_prefix("super::") {
                    base.pop();
                    tail = t;
                }
            }
            let consumed = rest.len() - tail.len();
            if let Some(group) = tail.strip_prefix('{') {
                // Only the first name of each top-level item in the group matters.
                let body = group.split('}').next().unwrap_or("");
                for item in body.split(',') {
                    let name = ident_at(item.trim());
                    if !name.is_empty() {
                        let mut p = base.clone();
                        p.push(name.to_string());
                        found.push(format!("crate::{}", p.join("::")));
                    }
                }
            } else {
                let mut p = base.clone();
                let mut t = tail;
                loop {
                    let name = ident_at(t);
                    if name.is_empty() {
                        break;
                    }
                    p.push(name.to_string());
                    match t[name.len()..].strip_prefix("::") {
                        Some(next) => t = next,
                        None => break,
                    }
                }
                if !p.is_empty() {
                    found.push(format!("crate::{}", p.join("::")));
                }
            }
            i += consumed.max(1);
        } else {
            i += rest.chars().next().map_or(1, char::len_utf8);
        }
    }
    found
}

/// The imports of one file that point to a higher layer (or to a module no layer holds).
fn violations(rel: &str, src: &str) -> Vec<String> {
    let module = module_path(rel);
    let Some(top) = module.first() else {
        return Vec::new();
    };
    let Some(own) = rank(top) else {
        return vec![format!("{rel}: top-level module `{top}` is in no layer")];
    };
    let mut bad = Vec::new();
    for path in imports(&module, &production_text(src)) {
        let target = path.trim_start_matches("crate::");
        let target_top = ident_at(target);
        if target_top == top {
            continue;
        }
        match rank(target_top) {
            None => bad.push(format!("{rel}: `{path}` is in no layer")),
            Some(r) if own == 0 && r > 0 => {
                if !VOCABULARY_MAY_NAME.iter().any(|ok| path == *ok) {
                    bad.push(format!("{rel}: the vocabulary names `{path}` from a layer"));
                }
            }
            Some(r) if r > own => bad.push(format!(
                "{rel}: `{path}` is in layer `{target_top}`, above `{top}`"
            )),
            Some(_) => {}
        }
    }
    bad
}

fn sources(dir: &Path, rel: &str, out: &mut Vec<(String, String)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("read src")
        .map(|e| e.expect("entry").path())
        .collect();
    entries.sort();
    for p in entries {
        let name = p
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_string();
        let r = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        if p.is_dir() {
            sources(&p, &r, out);
        } else if name.ends_with(".rs") {
            out.push((r, std::fs::read_to_string(&p).expect("read source")));
        }
    }
}

/// Test files and the crate root are not production code of any layer.
fn is_production(rel: &str) -> bool {
    let file = rel.rsplit('/').next().unwrap_or(rel);
    rel != "lib.rs"
        && !rel.starts_with("tests/")
        && !file.starts_with("tests")
        && !file.ends_with("_tests.rs")
}

#[test]
fn no_layer_imports_a_higher_one() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, "", &mut files);
    let checked: Vec<_> = files.iter().filter(|(r, _)| is_production(r)).collect();
    assert!(checked.len() > 40, "only {} files found", checked.len());
    let bad: Vec<String> = checked.iter().flat_map(|(r, s)| violations(r, s)).collect();
    assert!(bad.is_empty(), "upward imports:\n{}", bad.join("\n"));
}

#[test]
fn the_check_sees_an_upward_import_in_each_form() {
    let up = [
        ("rules/walk.rs", "use crate::tools::session::Session;"),
        ("rules/walk.rs", "fn f() { crate::tools::txn::commit(); }"),
        ("fs/hash.rs", "use crate::{error, text};"),
        (
            "tools/patch/hunks.rs",
            "use super::super::super::component::x;",
        ),
        ("api.rs", "use crate::rules::policy::Policy;"),
        ("newlayer/x.rs", "use crate::fs::port::Dir;"),
        (
            "text/diff.rs",
            "\nuse crate::fs::hash::hex;\nuse crate::rules::fold::fold;\n",
        ),
    ];
    for (rel, src) in up {
        assert!(!violations(rel, src).is_empty(), "{rel}: {src}");
    }
    let fine = [
        (
            "rules/walk.rs",
            "use crate::fs::port::Dir;\nuse crate::api::Stop;",
        ),
        (
            "rules/walk.rs",
            "// see crate::tools::list\n/// [`crate::tools::search`]",
        ),
        (
            "tools/patch/hunks.rs",
            "use super::parse::Hunk;\nuse super::super::txn::commit;",
        ),
        (
            "api.rs",
            "use crate::rules::classify::Kind;\nuse crate::error::ToolError;",
        ),
        (
            "fs/hash.rs",
            "fn f() {}\n#[cfg(test)]\nmod tests {\n    use crate::tools::session::Session;\n}\n",
        ),
    ];
    for (rel, src) in fine {
        assert_eq!(violations(rel, src), Vec::<String>::new(), "{rel}: {src}");
    }
}
