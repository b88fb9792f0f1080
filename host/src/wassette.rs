//! The `package-docs` custom section of the Wassette variant of the component.
//!
//! Wassette (the MCP runner for Wasm components) describes each exported function to the
//! model with the docs it finds in a custom section named `package-docs`: a version byte,
//! then the JSON of wit-parser's `PackageMetadata`. It looks a function up only under
//! `worlds.<world>.func_exports.<function>.docs`, where the standard encoding lists only
//! functions exported by the world itself, never those of an exported interface (ours are
//! all in `tools`). So the section here is the standard one with every function of each
//! interface the standalone world exports added to that world's `func_exports`.
//!
//! The JSON is kept in `wassette-package-docs.json` beside this crate's manifest, made
//! from `wit/` by the test in this module (which fails when `wit/` moved on without it, and
//! rewrites it when run with `FILE_TOOLS_BLESS=1`), so that building the crate needs no
//! WIT parser.
//!
//! A component carrying any `package-docs` section no longer decodes with wit-parser
//! (`jco transpile` refuses it), so the section goes only into the Wassette variant.

/// The JSON of the section's payload (see the module docs).
const PACKAGE_DOCS_JSON: &[u8] = include_bytes!("../wassette-package-docs.json");

/// The version byte of wit-parser's `PackageMetadata` encoding that the JSON follows.
const PACKAGE_DOCS_VERSION: u8 = 1;

/// The name of the custom section Wassette reads.
const SECTION_NAME: &str = "package-docs";

/// The complete custom section (id, size, name, payload), ready to be appended to the
/// standalone component's bytes.
pub fn docs_section() -> Vec<u8> {
    let mut payload = Vec::with_capacity(PACKAGE_DOCS_JSON.len() + 1);
    payload.push(PACKAGE_DOCS_VERSION);
    payload.extend_from_slice(PACKAGE_DOCS_JSON);
    custom_section(SECTION_NAME, &payload)
}

/// A top-level custom section: id 0, the size, the name (length-prefixed), the payload.
/// Custom sections may appear anywhere at a component's top level, so appending one needs
/// no re-encoding of the rest.
fn custom_section(name: &str, payload: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    leb128(name.len(), &mut body);
    body.extend_from_slice(name.as_bytes());
    body.extend_from_slice(payload);
    let mut section = vec![0];
    leb128(body.len(), &mut section);
    section.extend_from_slice(&body);
    section
}

/// Unsigned LEB128, the encoding of sizes in the Wasm binary format.
fn leb128(mut value: usize, out: &mut Vec<u8>) {
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use wit_parser::{PackageMetadata, Resolve, WorldItem};

    use super::*;

    /// The world of the component Wassette loads (WASI imports only).
    const WORLD: &str = "file-tools-standalone";

    /// The section's JSON made from the WIT package in `wit_dir`: the standard docs, with
    /// the standalone world's `func_exports` listing every function of the interfaces it
    /// exports, each with its doc comment.
    fn docs_from_wit(wit_dir: &Path) -> serde_json::Value {
        let mut resolve = Resolve::default();
        let (package, _) = resolve.push_dir(wit_dir).expect("the WIT parses");
        let standard = PackageMetadata::extract(&resolve, package)
            .encode()
            .expect("wit-parser encodes the docs");
        let (version, json) = standard.split_first().expect("a version byte");
        assert_eq!(
            *version, PACKAGE_DOCS_VERSION,
            "wit-parser writes another version of the package-docs encoding"
        );
        let mut docs: serde_json::Value = serde_json::from_slice(json).expect("JSON");
        let world = resolve.packages[package].worlds[WORLD];
        let mut func_exports = serde_json::Map::new();
        for item in resolve.worlds[world].exports.values() {
            let WorldItem::Interface { id, .. } = item else {
                continue;
            };
            for (name, function) in &resolve.interfaces[*id].functions {
                let doc = function
                    .docs
                    .contents
                    .as_deref()
                    .filter(|d| !d.trim().is_empty())
                    .unwrap_or_else(|| panic!("exported function {name} has no doc comment"));
                func_exports.insert(name.clone(), serde_json::json!({ "docs": doc }));
            }
        }
        docs["worlds"][WORLD]["func_exports"] = serde_json::Value::Object(func_exports);
        docs
    }

    #[test]
    fn the_kept_docs_are_the_wits() {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
        let made = docs_from_wit(&manifest.join("wit"));
        let kept: serde_json::Value =
            serde_json::from_slice(PACKAGE_DOCS_JSON).expect("the kept docs are JSON");
        if made != kept {
            let file = manifest.join("wassette-package-docs.json");
            if std::env::var_os("FILE_TOOLS_BLESS").is_some() {
                let text = serde_json::to_string_pretty(&made).expect("JSON") + "\n";
                std::fs::write(&file, text).expect("writing the docs");
            }
            panic!(
                "{} differs from the docs made from wit/: run `FILE_TOOLS_BLESS=1 cargo test \
                 --release -p file-tools-host --lib wassette` to rewrite it (done now if that \
                 was set), then build again",
                file.display()
            );
        }
        // Wassette reads the section through wit-parser's decoding.
        let section = docs_section();
        let payload = &section[section.len() - PACKAGE_DOCS_JSON.len() - 1..];
        assert_eq!(payload[0], PACKAGE_DOCS_VERSION);
        PackageMetadata::decode(payload).expect("the payload decodes");
    }

    #[test]
    fn sizes_are_leb128() {
        let mut out = Vec::new();
        for v in [0, 127, 128, 624_485] {
            leb128(v, &mut out);
        }
        assert_eq!(out, [0x00, 0x7f, 0x80, 0x01, 0xe5, 0x8e, 0x26]);
        let section = custom_section("ab", &[9; 200]);
        assert_eq!(&section[..5], &[0, 0xcb, 0x01, 2, b'a']);
        assert_eq!(section.len(), 1 + 2 + 1 + 2 + 200);
    }

    use wasmtime::component::types::ComponentItem;
    use wasmtime::component::Component;
    use wasmtime::Engine;

    use crate::runtime::{wassette_component, GUEST_WASM, STANDALONE_WASM};

    /// Reads an unsigned LEB128 at `*at`, moving `*at` past it.
    fn read_leb128(bytes: &[u8], at: &mut usize) -> usize {
        let mut value = 0;
        let mut shift = 0;
        loop {
            let byte = bytes[*at];
            *at += 1;
            value |= usize::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return value;
            }
            shift += 7;
        }
    }

    /// The payloads of the top-level custom sections named `name`, walking the binary's
    /// sections from the 8-byte header on.
    fn custom_sections<'a>(wasm: &'a [u8], name: &str) -> Vec<&'a [u8]> {
        let mut found = Vec::new();
        let mut at = 8;
        while at < wasm.len() {
            let id = wasm[at];
            at += 1;
            let size = read_leb128(wasm, &mut at);
            let body = &wasm[at..at + size];
            at += size;
            if id == 0 {
                let mut name_at = 0;
                let len = read_leb128(body, &mut name_at);
                if &body[name_at..name_at + len] == name.as_bytes() {
                    found.push(&body[name_at + len..]);
                }
            }
        }
        assert_eq!(at, wasm.len(), "sections overrun the binary");
        found
    }

    /// Every function (not type) the component exports from `tools`, by WIT name.
    fn exported_tool_functions(wasm: &[u8]) -> Vec<String> {
        let engine = Engine::default();
        let component = Component::new(&engine, wasm).expect("the Wassette variant compiles");
        let ty = component.component_type();
        let (_, tools) = ty
            .exports(&engine)
            .find(|(name, _)| name.starts_with("agent:file-tools/tools@"))
            .expect("the component exports the tools interface");
        let ComponentItem::ComponentInstance(tools) = tools.ty else {
            panic!("tools is not an instance");
        };
        tools
            .exports(&engine)
            .filter(|(_, item)| matches!(item.ty, ComponentItem::ComponentFunc(_)))
            .map(|(name, _)| name.to_string())
            .collect()
    }

    #[test]
    fn wassette_variant_describes_every_tool_with_its_wit_doc() {
        let wasm = wassette_component();
        assert!(wasm.starts_with(STANDALONE_WASM));
        let sections = custom_sections(&wasm, "package-docs");
        assert_eq!(sections.len(), 1, "exactly one package-docs section");
        let (version, json) = sections[0].split_first().expect("a version byte");
        assert_eq!(*version, 1, "package-docs format version");
        let docs: serde_json::Value = serde_json::from_slice(json).expect("the payload is JSON");
        let described = docs["worlds"]["file-tools-standalone"]["func_exports"]
            .as_object()
            .expect("the standalone world lists func_exports");

        let wit = include_str!("../wit/tools.wit");
        let functions = exported_tool_functions(&wasm);
        assert!(functions.len() >= 14, "only {functions:?}");
        for function in &functions {
            let doc = described
                .get(function)
                .and_then(|f| f["docs"].as_str())
                .unwrap_or_else(|| panic!("no doc for {function}"));
            let first = doc.lines().next().unwrap_or_default();
            assert!(
                !first.is_empty() && wit.contains(&format!("/// {first}")),
                "{function}'s doc is not its WIT doc: {doc:?}"
            );
        }
        assert_eq!(
            described.len(),
            functions.len(),
            "docs for functions not exported"
        );
    }

    #[test]
    fn plain_components_carry_no_package_docs() {
        // jco transpile cannot read a component with a package-docs section.
        assert!(custom_sections(GUEST_WASM, "package-docs").is_empty());
        assert!(custom_sections(STANDALONE_WASM, "package-docs").is_empty());
    }
}
