//! Builds the guest component for wasm32-wasip2 with a nested cargo (see
//! `build/guest.rs`) and hands its path to the host crate as `FILE_TOOLS_GUEST_WASM`, and,
//! with the crate's feature `standalone`, the standalone variant (WASI imports only, for
//! the `wasmtime` CLI) as `FILE_TOOLS_GUEST_STANDALONE_WASM`. (The variant with fault
//! injection, which only the tests use, is built by the test kit, `tests/kit`, so that a
//! plain build never waits for it.)
//!
//! A packaged crate (`cargo package`, `scripts/package.sh`) has no `../guest` to build: it
//! carries the components it ships in `component/`, copied there at package time
//! (`scripts/package.sh` checks that the packaged crate's components equal the workspace's),
//! and `wit/` (a link to `../wit` in the repository, real files in the package).

#[path = "build/guest.rs"]
mod guest;

use std::env;
use std::path::{Path, PathBuf};

/// The components the crate carries: the guest's features, the name of the file a packaged
/// crate keeps it in (beside its manifest, in `component/`), the variable naming its path.
const VARIANTS: [(&[&str], &str, &str); 2] = [
    (&[], "file_tools.wasm", "FILE_TOOLS_GUEST_WASM"),
    (
        &["standalone"],
        "file_tools_standalone.wasm",
        "FILE_TOOLS_GUEST_STANDALONE_WASM",
    ),
];

/// The variants this build carries: the standalone one only with the feature of its name.
fn variants() -> impl Iterator<Item = (&'static [&'static str], &'static str, &'static str)> {
    let standalone = env::var_os("CARGO_FEATURE_STANDALONE").is_some();
    VARIANTS
        .into_iter()
        .filter(move |(features, _, _)| standalone || features.is_empty())
}

fn main() {
    let manifest =
        PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let root = manifest
        .parent()
        .expect("a manifest lives in a directory")
        .to_path_buf();
    if root.join("guest").join("Cargo.toml").exists() {
        build_from_workspace(&root, &out);
    } else {
        use_bundled(&manifest);
    }
}

/// A packaged crate: the components copied into `component/` at package time.
fn use_bundled(manifest: &Path) {
    for (_, name, var) in variants() {
        let path = manifest.join("component").join(name);
        assert!(
            path.exists(),
            "{} is missing: outside the repository the crate needs the components that \
             scripts/package.sh puts in component/",
            path.display()
        );
        println!("cargo:rerun-if-changed={}", path.display());
        println!("cargo:rustc-env={var}={}", path.display());
        emit_sha256(var, &path);
    }
}

/// Sets `{var}_SHA256` to the hex sha256 of the component at `path`: the runtime keys its
/// compiled artifacts by it, and hashing megabytes at every start would cost milliseconds.
fn emit_sha256(var: &str, path: &Path) {
    use sha2::Digest as _;
    let bytes = std::fs::read(path).expect("reading the guest component");
    let hex: String = sha2::Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    println!("cargo:rustc-env={var}_SHA256={hex}");
}

/// The repository: the shipped variants built from `../guest`.
fn build_from_workspace(root: &Path, out: &Path) {
    let target_dir = guest::target_dir(root);
    guest::rerun_if_changed(root);
    for (features, name, var) in variants() {
        let dest = out.join(name);
        guest::build_variant(root, &target_dir, features, &dest);
        println!("cargo:rustc-env={var}={}", dest.display());
        emit_sha256(var, &dest);
    }
}
