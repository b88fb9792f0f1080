//! Builds the guest component for wasm32-wasip2 with a nested cargo, in its own target
//! directory (so it never waits on the outer build's lock), and hands its path to the host
//! crate as `FILE_TOOLS_GUEST_WASM`. A second variant with fault injection (for the tests
//! of trap handling only) is built beside it as `FILE_TOOLS_GUEST_FAULT_WASM`, and the
//! standalone variant (WASI imports only, for the `wasmtime` CLI) as
//! `FILE_TOOLS_GUEST_STANDALONE_WASM`. The `package-docs` section of the Wassette variant
//! is built from `wit/` (see `build/package_docs.rs`) as `FILE_TOOLS_WASSETTE_DOCS`.
//!
//! A packaged crate (`cargo package`, `scripts/package.sh`) has no `../guest` to build: it
//! carries the two components it ships in `component/`, copied there at package time
//! (`scripts/package.sh` checks that the packaged crate's components equal the workspace's),
//! and `wit/` (a link to `../wit` in the repository, real files in the package).

#[path = "build/package_docs.rs"]
mod package_docs;

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn build_guest(root: &Path, target_dir: &Path, features: &[&str]) -> PathBuf {
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root)
        .args([
            "build",
            "--release",
            "--target",
            "wasm32-wasip2",
            "-p",
            "file-tools-guest",
        ])
        .arg("--target-dir")
        .arg(target_dir)
        // Whole-program optimisation of the component: it is small, and its speed is the
        // product's speed.
        .args([
            "--config",
            "profile.release.lto=true",
            "--config",
            "profile.release.codegen-units=1",
        ]);
    if !features.is_empty() {
        cmd.arg("--features").arg(features.join(","));
    }
    // The outer build's flags are for the host target, not for the guest.
    for var in [
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTFLAGS",
        "CARGO_BUILD_TARGET",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_RUSTFLAGS",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_PRIMARY_PACKAGE",
    ] {
        cmd.env_remove(var);
    }
    for (k, _) in env::vars() {
        if k.starts_with("CARGO_PROFILE_")
            || k.starts_with("CARGO_FEATURE_")
            || k.starts_with("CARGO_CFG_")
        {
            cmd.env_remove(k);
        }
    }
    let status = cmd.status().expect("running cargo for the guest");
    if !status.success() {
        panic!(
            "building the guest component failed; is the wasm32-wasip2 target installed? \
             (rustup target add wasm32-wasip2)"
        );
    }
    let wasm = target_dir
        .join("wasm32-wasip2")
        .join("release")
        .join("file_tools_guest.wasm");
    assert!(wasm.exists(), "guest build produced no {}", wasm.display());
    wasm
}

/// The components a packaged crate carries, beside its manifest.
const BUNDLED: [(&str, &str); 2] = [
    ("file_tools.wasm", "FILE_TOOLS_GUEST_WASM"),
    (
        "file_tools_standalone.wasm",
        "FILE_TOOLS_GUEST_STANDALONE_WASM",
    ),
];

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

    let wit = manifest.join("wit");
    println!("cargo:rerun-if-changed={}", wit.display());
    let docs = package_docs::section(&wit)
        .unwrap_or_else(|e| panic!("building the package-docs section: {e}"));
    let dest = out.join("wassette_package_docs.bin");
    std::fs::write(&dest, docs).expect("writing the package-docs section");
    println!(
        "cargo:rustc-env=FILE_TOOLS_WASSETTE_DOCS={}",
        dest.display()
    );
}

/// A packaged crate: the components copied into `component/` at package time.
fn use_bundled(manifest: &Path) {
    for (name, var) in BUNDLED {
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

/// The repository: every variant built from `../guest`.
fn build_from_workspace(root: &Path, out: &Path) {
    let target_dir = env::var_os("FILE_TOOLS_GUEST_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target").join("guest"));
    for dir in [
        "guest/src",
        "guest/Cargo.toml",
        "contract/src",
        "contract/Cargo.toml",
        "wit",
        "Cargo.lock",
        ".cargo/config.toml",
    ] {
        println!("cargo:rerun-if-changed={}", root.join(dir).display());
    }
    println!("cargo:rerun-if-env-changed=FILE_TOOLS_GUEST_TARGET_DIR");

    // All variants land at the same path, so each is copied out before the next build.
    for (features, name, var) in [
        (&[][..], "file_tools_guest.wasm", "FILE_TOOLS_GUEST_WASM"),
        (
            &["fault-injection"][..],
            "file_tools_guest_faults.wasm",
            "FILE_TOOLS_GUEST_FAULT_WASM",
        ),
        (
            &["standalone"][..],
            "file_tools_standalone.wasm",
            "FILE_TOOLS_GUEST_STANDALONE_WASM",
        ),
    ] {
        let built = build_guest(root, &target_dir, features);
        let dest = out.join(name);
        std::fs::copy(&built, &dest).expect("copying the guest component");
        println!("cargo:rustc-env={var}={}", dest.display());
        emit_sha256(var, &dest);
    }
}
