//! Names this build of the rules: a digest of the text of every file below `src/rules`
//! and of the contract crate's source (the state directory's name, which a walk passes
//! over), of this crate's manifest (the features it asks of the crates below) and the lock
//! file (the versions of globset, unicode-normalization and the other crates the rules
//! match and fold names with), and of the compiler's version (the standard library's
//! Unicode tables), which a walk's memo is bound to, so that verdicts kept by one build
//! are never reused by another.

use std::path::{Path, PathBuf};

fn main() {
    let trees = [Path::new("src/rules"), Path::new("../contract/src")];
    let single = [Path::new("Cargo.toml"), Path::new("../Cargo.lock")];
    let mut files = Vec::new();
    for tree in trees {
        println!("cargo:rerun-if-changed={}", tree.display());
        collect(tree, &mut files);
    }
    files.sort();
    for file in single {
        println!("cargo:rerun-if-changed={}", file.display());
        files.push(file.to_path_buf());
    }
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let version = std::process::Command::new(rustc)
        .arg("--version")
        .output()
        .map(|o| o.stdout)
        .unwrap_or_default();
    // FNV-1a over each part's name and text: not a defence (the inputs are ours), only a
    // name that changes when they do.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for &b in bytes.iter().chain(&[0]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    feed(&version);
    for f in files {
        feed(f.to_string_lossy().as_bytes());
        feed(&std::fs::read(&f).unwrap_or_default());
    }
    println!("cargo:rustc-env=FILE_TOOLS_RULES_DIGEST={h:016x}");
}

/// Every file below `dir`, its subdirectories' included (a module split into a folder is
/// still part of the rules); links are not followed.
fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        match entry.file_type() {
            Ok(t) if t.is_dir() => collect(&entry.path(), out),
            Ok(t) if t.is_file() => out.push(entry.path()),
            _ => {}
        }
    }
}
