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
//! A component carrying any `package-docs` section no longer decodes with wit-parser
//! (`jco transpile` refuses it), so the section goes only into the Wassette variant.

use std::path::Path;

use wit_parser::{PackageMetadata, Resolve, WorldItem};

/// The world of the component Wassette loads (WASI imports only).
const WORLD: &str = "file-tools-standalone";

/// Builds the complete custom section (id, size, name, payload) from the WIT package in
/// `wit_dir`, ready to be appended to the standalone component's bytes.
///
/// # Errors
///
/// A message when the WIT does not parse, the world is missing, an exported function has
/// no doc comment, or the result does not decode as `PackageMetadata` again.
pub fn section(wit_dir: &Path) -> Result<Vec<u8>, String> {
    let mut resolve = Resolve::default();
    let (package, _) = resolve
        .push_dir(wit_dir)
        .map_err(|e| format!("parsing {}: {e:#}", wit_dir.display()))?;
    let standard = PackageMetadata::extract(&resolve, package)
        .encode()
        .map_err(|e| format!("encoding package docs: {e:#}"))?;
    let (version, json) = standard
        .split_first()
        .ok_or("package docs encoded as nothing")?;
    let mut docs: serde_json::Value =
        serde_json::from_slice(json).map_err(|e| format!("reading package docs back: {e}"))?;

    let world = resolve.packages[package]
        .worlds
        .get(WORLD)
        .copied()
        .ok_or_else(|| format!("WIT has no world {WORLD}"))?;
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
                .ok_or_else(|| format!("exported function {name} has no doc comment"))?;
            func_exports.insert(name.clone(), serde_json::json!({ "docs": doc }));
        }
    }
    docs["worlds"][WORLD]["func_exports"] = serde_json::Value::Object(func_exports);

    let mut payload = vec![*version];
    serde_json::to_writer(&mut payload, &docs).map_err(|e| format!("writing docs: {e}"))?;
    PackageMetadata::decode(&payload)
        .map_err(|e| format!("the package-docs payload does not decode: {e:#}"))?;
    Ok(custom_section(PackageMetadata::SECTION_NAME, &payload))
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
