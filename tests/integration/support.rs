//! Test helpers: a temporary repository with a sentinel directory beside it, sessions over
//! it that record their audit events, and whole-tree snapshots for byte-identical checks.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use file_tools_host::{AuditEvent, Limits, Runtime, Session};
use serde_json::{json, Value};

/// Marker inside every sentinel file: it must never appear in any output.
pub const SENTINEL_MARK: &str = "SENTINEL-OUTSIDE-7d1f";
/// Marker inside the repository's secrets: it must never appear in any output.
pub const SECRET_MARK: &str = "SECRET-VALUE-93ab";

pub fn runtime() -> &'static Runtime {
    static RT: OnceLock<Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("component-cache");
        Runtime::builder()
            .cache_dir(cache)
            .build()
            .expect("runtime")
    })
}

/// A repository in a temp dir, with `outside/` beside it as the sentinel.
pub struct Fixture {
    _tmp: tempfile::TempDir,
    pub repo: PathBuf,
    pub outside: PathBuf,
    pub events: Arc<Mutex<Vec<AuditEvent>>>,
}

/// Files every fixture starts with.
pub const FILES: &[(&str, &str)] = &[
    ("README.md", "# demo\nA small repository.\n"),
    ("src/main.rs", "fn main() {\n    println!(\"hello\");\n}\n"),
    ("src/lib.rs", "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\npub fn sub(a: i32, b: i32) -> i32 {\n    a - b\n}\n"),
    ("src/util/strings.rs", "pub fn shout(s: &str) -> String {\n    s.to_uppercase()\n}\n"),
    ("docs/guide.md", "Use add() to add.\nUse sub() to subtract.\n"),
    ("pom.xml", "<project></project>\n"),
    (".gitignore", "*.log\nignored_dir/\n"),
    ("app.log", "log line with add\n"),
    ("ignored_dir/data.txt", "add inside an ignored dir\n"),
    ("target/debug/out.txt", "add inside generated output\n"),
    ("vendor/lib/v.rs", "pub fn add() {}\n"),
    ("Cargo.lock", "# lock\n"),
    ("Cargo.toml", "[package]\nname = \"demo\"\n"),
    (".env", "API_KEY=SECRET-VALUE-93ab\n"),
    ("config/server.pem", "-----BEGIN PRIVATE KEY-----\nSECRET-VALUE-93ab\n"),
    (".git/config", "[core]\n\tSECRET-VALUE-93ab = 1\n"),
    ("crlf.txt", "one\r\ntwo\r\nthree\r\n"),
    ("bom.txt", "\u{feff}with bom\n"),
];

impl Fixture {
    pub fn new() -> Fixture {
        let tmp = tempfile::tempdir().expect("tempdir");
        let repo = tmp.path().join("repo");
        let outside = tmp.path().join("outside");
        for (p, c) in FILES {
            write(&repo.join(p), c.as_bytes());
        }
        write(&repo.join("image.png"), b"\x89PNG\r\n\x1a\n\0\0\0binary");
        write(&repo.join("data.bin"), b"abc\0def");
        write(&outside.join("secret.txt"), SENTINEL_MARK.as_bytes());
        write(&outside.join("sub/inner.txt"), SENTINEL_MARK.as_bytes());
        // A sibling whose name shares the repository's prefix.
        write(
            &tmp.path().join("repo-evil/x.txt"),
            SENTINEL_MARK.as_bytes(),
        );
        Fixture {
            _tmp: tmp,
            repo,
            outside,
            events: Arc::new(Mutex::new(Vec::new())),
        }
    }

    pub fn session(&self) -> Session {
        self.session_with(json!({}), true, Limits::default())
    }

    /// A session with the search index on and the host's watch running (the MCP server's
    /// kind): listings of directories in which nothing changed come from the host's cache.
    pub fn watched_session(&self, policy: Value) -> Session {
        let mut policy = policy;
        policy["limits"]["max_index_bytes"] = json!(1 << 26);
        Session::builder(runtime())
            .repo(&self.repo)
            .policy(policy)
            .watch_tree(true)
            .build()
            .expect("session")
    }

    pub fn session_with(&self, policy: Value, writable: bool, limits: Limits) -> Session {
        let events = self.events.clone();
        Session::builder(runtime())
            .repo(&self.repo)
            .writable(writable)
            .policy(policy)
            .limits(limits)
            .audit_sink(Arc::new(move |e: &AuditEvent| {
                events.lock().expect("events").push(e.clone())
            }))
            .build()
            .expect("session")
    }

    pub fn events(&self) -> Vec<AuditEvent> {
        self.events.lock().expect("events").clone()
    }

    /// The whole tree below the temp dir (repo and sentinels), for before/after checks.
    pub fn snapshot(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        snapshot(self.repo.parent().expect("parent"))
    }

    pub fn write(&self, rel: &str, content: &[u8]) {
        write(&self.repo.join(rel), content);
    }

    #[cfg(unix)]
    pub fn symlink(&self, target: &str, rel: &str) {
        let link = self.repo.join(rel);
        if let Some(d) = link.parent() {
            fs::create_dir_all(d).expect("mkdir");
        }
        std::os::unix::fs::symlink(target, link).expect("symlink");
    }
}

pub fn write(path: &Path, content: &[u8]) {
    fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    fs::write(path, content).expect("write");
}

/// Every file, directory and symlink below `root`, with content (or link text).
pub fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in fs::read_dir(&dir).expect("read_dir") {
            let e = e.expect("entry");
            let p = e.path();
            let ft = e.file_type().expect("file_type");
            let rel = p.strip_prefix(root).expect("prefix").to_path_buf();
            if ft.is_symlink() {
                let t = fs::read_link(&p).expect("read_link");
                out.insert(rel, format!("-> {}", t.display()).into_bytes());
            } else if ft.is_dir() {
                out.insert(rel, b"<dir>".to_vec());
                stack.push(p);
            } else {
                out.insert(rel, fingerprint(&p));
            }
        }
    }
    out
}

/// A file's content, or for a very large file its size and modification time (reading
/// gigabytes to compare them would make the checks slower than the attacks).
fn fingerprint(p: &Path) -> Vec<u8> {
    let meta = fs::metadata(p).expect("metadata");
    if meta.len() > 64 << 20 {
        let mtime = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        return format!("<{} bytes, mtime {mtime}>", meta.len()).into_bytes();
    }
    fs::read(p).expect("read")
}

/// `policy` plus `allow_overwrite_without_sha256`, for tests whose subject is not stale
/// writes and which replace files without reading them first.
pub fn relaxed(mut policy: Value) -> Value {
    if let Some(o) = policy.as_object_mut() {
        o.insert("allow_overwrite_without_sha256".into(), Value::Bool(true));
    }
    policy
}

/// Asserts that a JSON or debug rendering of an output leaks neither marker.
pub fn assert_no_leak(output: &str) {
    assert!(
        !output.contains(SENTINEL_MARK),
        "sentinel content leaked: {output}"
    );
    assert!(
        !output.contains(SECRET_MARK),
        "secret content leaked: {output}"
    );
}

/// The error code of a JSON call's failure.
pub fn code(r: &Result<Value, file_tools_host::ToolError>) -> &'static str {
    match r {
        Ok(v) => panic!("expected an error, got {v}"),
        Err(e) => file_tools_host::code_name(e.code),
    }
}

/// Runs a JSON call and checks it leaked nothing, whatever it returned.
pub fn call(s: &mut Session, tool: &str, args: Value) -> Result<Value, file_tools_host::ToolError> {
    let r = s.call(tool, &args.to_string());
    match &r {
        Ok(v) => assert_no_leak(&v.to_string()),
        Err(e) => assert_no_leak(&e.to_json().to_string()),
    }
    r
}

/// sha256 of bytes, lowercase hex, as the tools report it.
pub fn sha256(data: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// file-tools temporary files below `dir` (there should be none).
pub fn temp_files(dir: &Path) -> Vec<String> {
    snapshot(dir)
        .keys()
        .map(|p| p.display().to_string())
        .filter(|p| p.contains(".ft-tmp-"))
        .collect()
}
