//! Building the guest component with a nested cargo, shared by the host's build script
//! (the variants it embeds) and the test kit's (the fault-injection variant). The nested
//! build has its own target directory, so it never waits on the outer build's lock.

use std::env;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where the guest is built: `FILE_TOOLS_GUEST_TARGET_DIR` (a relative one from the
/// repository's root, where the nested cargo runs), or `target/guest`.
pub fn target_dir(root: &Path) -> PathBuf {
    println!("cargo:rerun-if-env-changed=FILE_TOOLS_GUEST_TARGET_DIR");
    env::var_os("FILE_TOOLS_GUEST_TARGET_DIR")
        .map(|d| root.join(d))
        .unwrap_or_else(|| root.join("target").join("guest"))
}

/// Asks cargo to run the build script again when the guest's sources change. The paths
/// are relative to the package's directory, as cargo reads them: a checkout moved with its
/// target directory still watches its own sources, not the ones where it was built.
pub fn rerun_if_changed(root: &Path) {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let base = match manifest.strip_prefix(root) {
        Ok(below) => below.components().map(|_| "..").collect(),
        Err(_) => root.to_path_buf(),
    };
    for dir in [
        "guest/src",
        "guest/Cargo.toml",
        "contract/src",
        "contract/Cargo.toml",
        "wit",
        "Cargo.lock",
        ".cargo/config.toml",
    ] {
        println!("cargo:rerun-if-changed={}", base.join(dir).display());
    }
}

/// Builds the guest with `features` and copies the component to `dest`. Every variant
/// lands at the same path in the target directory, and two build scripts may build
/// variants at the same time, so a lock file in the target directory is held from the
/// build until the copy is made.
pub fn build_variant(root: &Path, target_dir: &Path, features: &[&str], dest: &Path) {
    std::fs::create_dir_all(target_dir).expect("creating the guest's target directory");
    let lock = File::create(target_dir.join(".variant-lock")).expect("creating the lock file");
    lock.lock().expect("locking the guest's target directory");
    let built = build_guest(root, target_dir, features);
    std::fs::copy(&built, dest).expect("copying the guest component");
    drop(lock);
}

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
