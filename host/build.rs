//! Builds the guest component for wasm32-wasip2 with a nested cargo, in its own target
//! directory (so it never waits on the outer build's lock), and hands its path to the host
//! crate as `FILE_TOOLS_GUEST_WASM`. A second variant with fault injection (for the tests
//! of trap handling only) is built beside it as `FILE_TOOLS_GUEST_FAULT_WASM`, and the
//! standalone variant (WASI imports only, for the `wasmtime` CLI) as
//! `FILE_TOOLS_GUEST_STANDALONE_WASM`. The `package-docs` section of the Wassette variant
//! is built from `wit/` (see `build/package_docs.rs`) as `FILE_TOOLS_WASSETTE_DOCS`.

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

fn main() {
    let manifest =
        PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let root = manifest
        .parent()
        .expect("host/ lives in the workspace")
        .to_path_buf();
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let target_dir = env::var_os("FILE_TOOLS_GUEST_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target").join("guest"));
    for dir in [
        "guest/src",
        "guest/Cargo.toml",
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
        let built = build_guest(&root, &target_dir, features);
        let dest = out.join(name);
        std::fs::copy(&built, &dest).expect("copying the guest component");
        println!("cargo:rustc-env={var}={}", dest.display());
    }

    let docs = package_docs::section(&root.join("wit"))
        .unwrap_or_else(|e| panic!("building the package-docs section: {e}"));
    let dest = out.join("wassette_package_docs.bin");
    std::fs::write(&dest, docs).expect("writing the package-docs section");
    println!(
        "cargo:rustc-env=FILE_TOOLS_WASSETTE_DOCS={}",
        dest.display()
    );
}
