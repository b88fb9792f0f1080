//! Names this build of the rules (`src/rules`): a digest of their text, which a walk's memo
//! is bound to, so that verdicts kept by one build are never reused by another.

use std::path::Path;

fn main() {
    let dir = Path::new("src/rules");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.sort();
    // FNV-1a over each file's name and text: not a defence (the sources are ours), only a
    // name that changes when they do.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for f in files {
        let text = std::fs::read(&f).unwrap_or_default();
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for b in name.bytes().chain([0]).chain(text).chain([0]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    println!("cargo:rustc-env=FILE_TOOLS_RULES_DIGEST={h:016x}");
}
