//! Builds the guest with the `fault-injection` feature (a component that can be told to
//! trap, run out of memory or loop, for the tests of trap handling) and hands its path to
//! the kit as `FILE_TOOLS_GUEST_FAULT_WASM`. It lives here, a dev-dependency of the tests,
//! so that building the host or the `file-tools` binary never builds it.

#[path = "../../host/build/guest.rs"]
mod guest;

use std::env;
use std::path::PathBuf;

fn main() {
    let manifest =
        PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let root = manifest
        .ancestors()
        .nth(2)
        .expect("the kit lives in tests/kit")
        .to_path_buf();
    guest::rerun_if_changed(&root);
    let dest = out.join("file_tools_guest_faults.wasm");
    guest::build_variant(
        &root,
        &guest::target_dir(&root),
        &["fault-injection"],
        &dest,
    );
    println!(
        "cargo:rustc-env=FILE_TOOLS_GUEST_FAULT_WASM={}",
        dest.display()
    );
}
