//! The synthetic trees of the `large` section: `n` files, 100 to a directory, two levels
//! of directories, code-like text of 200 bytes to 3 KB whose identifiers come from a fixed
//! vocabulary (a few common, most rare), a planted identifier in one file of 10,007 (the
//! rare query), `return` in every text file (the common query), a binary file in 25,000,
//! and ignored files under two `.gitignore`s. The same `n` always gives the same tree; a
//! marker beside it says it is complete, so that the next run reuses it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Changes whenever the generator's output would; a tree with another marker is remade.
const VERSION: &str = "synthetic v1";

/// The identifier planted in one file of `RARE_EVERY` (no other text holds a `z` or `q`).
pub const RARE: &str = "zq_needle_marker";
const RARE_EVERY: usize = 10_007;
const BINARY_EVERY: usize = 25_000;

/// Syllables of the vocabulary's words (three each: 27,000 words).
const SYLLABLES: [&str; 30] = [
    "al", "be", "co", "da", "ex", "fi", "go", "hu", "in", "jo", "ka", "lu", "mo", "ne", "or", "pa",
    "ri", "se", "tu", "vi", "wa", "yo", "ab", "ed", "ig", "ob", "ut", "ch", "st", "th",
];

/// splitmix64: a small deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A word of the vocabulary, the k-th about as often as 1/(k+1) (Zipf-like).
    fn word(&mut self) -> String {
        let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        let k = (27_000f64.powf(u) - 1.0) as usize;
        [k % 30, k / 30 % 30, k / 900 % 30]
            .iter()
            .map(|&s| SYLLABLES[s])
            .collect()
    }
}

/// The relative path of file `i`.
pub fn path_of(i: usize) -> String {
    let dir = i / 100;
    let ext = if is_binary(i) {
        "bin"
    } else {
        ["rs", "c", "py"][i % 3]
    };
    format!("m{:03}/p{:02}/f{i:06}.{ext}", dir / 100, dir % 100)
}

pub fn is_binary(i: usize) -> bool {
    i % BINARY_EVERY == 17
}

fn text(i: usize) -> String {
    let mut r = Rng(i as u64);
    let size = 200 + (r.next() % 2800) as usize;
    let mut t = format!("// file {i}: {} {} {}\n", r.word(), r.word(), r.word());
    if i % RARE_EVERY == 3 {
        t.push_str(&format!("const {RARE}: u32 = {i};\n"));
    }
    while t.len() < size {
        let (f, g, a, b, c) = (r.word(), r.word(), r.word(), r.word(), r.word());
        let n = r.next() % 65_536;
        t.push_str(&format!(
            "\nfn {f}_{g}({a}: u32, {b}: &str) -> u32 {{\n    let {c} = {}({a}, {n:#x});\n    if {c} > {n} {{\n        {}.{}({b});\n    }}\n    return {c} + {};\n}}\n",
            r.word(),
            r.word(),
            r.word(),
            r.word()
        ));
    }
    t
}

fn binary(i: usize) -> Vec<u8> {
    let mut r = Rng(i as u64);
    (0..4096).map(|_| (r.next() % 256) as u8).collect()
}

fn write(root: &Path, rel: &str, data: &[u8]) {
    let p = root.join(rel);
    if let Some(d) = p.parent() {
        std::fs::create_dir_all(d).expect("directory of the synthetic tree");
    }
    std::fs::write(&p, data).expect("file of the synthetic tree");
}

/// The tree of `n` files below `corpus`, made unless its marker says it is there.
pub fn tree(corpus: &Path, n: usize) -> PathBuf {
    let root = corpus.join(format!("synthetic-{n}"));
    let marker = corpus.join(format!("synthetic-{n}.done"));
    if std::fs::read_to_string(&marker).is_ok_and(|m| m == VERSION) {
        return root;
    }
    let t = std::time::Instant::now();
    let _ = std::fs::remove_dir_all(&root);
    let _ = std::fs::remove_dir_all(corpus.join(format!("synthetic-{n}.git")));
    write(&root, ".gitignore", b"*.log\n/scratch/\n");
    write(&root, "m000/.gitignore", b"*.gen\n");
    for i in 0..n {
        let rel = path_of(i);
        if is_binary(i) {
            write(&root, &rel, &binary(i));
        } else {
            write(&root, &rel, text(i).as_bytes());
        }
        // Ignored files: a log in one directory of ten, generated files under m000/.
        if i % 1000 == 0 {
            write(&root, &format!("{rel}.log"), b"return zq_needle_marker\n");
        }
        if i < 2000 && i % 100 == 0 {
            write(&root, &format!("{rel}.gen"), b"return zq_needle_marker\n");
        }
    }
    for j in 0..100 {
        write(
            &root,
            &format!("scratch/s{j}.rs"),
            b"return zq_needle_marker\n",
        );
    }
    std::fs::write(&marker, VERSION).expect("marker");
    println!(
        "generated {} ({n} files) in {:.1} s",
        root.display(),
        t.elapsed().as_secs_f64()
    );
    root
}

/// A git repository of the tree outside it (`synthetic-N.git`), whose index and commit
/// name every file the ignore rules leave; the files' contents are hashed into the index
/// but not stored as objects (`git status` compares metadata and hashes, never contents
/// of the commit), which keeps it small and quick to make. Made once; returns its path.
pub fn git_dir(corpus: &Path, root: &Path, n: usize) -> PathBuf {
    let dir = corpus.join(format!("synthetic-{n}.git"));
    if dir.join("bench-ready").is_file() {
        return dir;
    }
    let _ = std::fs::remove_dir_all(&dir);
    let t = std::time::Instant::now();
    let script = "git init -q && git ls-files -o --exclude-standard -z | git update-index --add --info-only -z --stdin && c=$(git -c user.name=bench -c user.email=bench@localhost commit-tree $(git write-tree --missing-ok) -m tree) && git update-ref HEAD $c";
    let ok = git_cmd(&dir, root)
        .args(["-c", script])
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "making the git repository of {} failed", root.display());
    std::fs::write(dir.join("bench-ready"), "").expect("marker");
    println!(
        "git repository of {} made in {:.1} s",
        root.display(),
        t.elapsed().as_secs_f64()
    );
    dir
}

/// `sh` with the repository `dir` for `root`, in `root`.
pub fn git_cmd(dir: &Path, root: &Path) -> Command {
    let mut c = Command::new("sh");
    c.env("GIT_DIR", dir)
        .env("GIT_WORK_TREE", root)
        .current_dir(root);
    c
}
