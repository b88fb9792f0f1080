//! Load benchmark of the MCP server: 1, 4 and 16 concurrent HTTP clients on 1 and 4
//! repositories, and the same calls from one client over stdio. Loopback only, bounded in
//! calls (every client makes `CALLS_PER_CLIENT`) and in time (a run stops handing out calls
//! after `MAX_SECONDS`). Prints calls per second and p50/p99 latency; nothing passes or fails.
//!
//! Run with `bash scripts/bench-mcp.sh` (builds the `file-tools` binary beside this example).
//! Each repository is a copy of the project's `guest/src`; the calls alternate a `read_file`
//! of one source file and a counting `search_text` over the whole copy.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const CALLS_PER_CLIENT: usize = 200;
const MAX_SECONDS: u64 = 60;

fn main() {
    let exe = std::env::current_exe().expect("the benchmark's own path");
    let bin = exe
        .parent()
        .and_then(Path::parent)
        .map(|d| d.join("file-tools"))
        .expect("target/release/file-tools");
    assert!(
        bin.exists(),
        "build it first: cargo build --release --bin file-tools"
    );
    let work = tempfile::tempdir().expect("a temporary directory");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../guest/src");
    let repos: Vec<PathBuf> = (0..4)
        .map(|i| {
            let dest = work.path().join(format!("repo{i}"));
            copy_tree(&source, &dest);
            dest
        })
        .collect();
    let state = work.path().join("state");
    println!("MCP server load, {} cores; calls alternate read_file and a counting search_text over a copy of guest/src", cores());
    println!();
    println!("| transport | clients | repositories | calls | calls/s | p50 | p99 |");
    println!("|---|---|---|---|---|---|---|");
    let mut stdio = stdio_server(&bin, &repos[0], &state);
    let lat = stdio_calls(&mut stdio, CALLS_PER_CLIENT);
    let _ = stdio.kill();
    row("stdio", 1, 1, &lat.0, lat.1);
    let mut server = http_server(&bin, &repos, &state);
    let addr = listening_address(&mut server);
    for repo_count in [1, 4] {
        for clients in [1, 4, 16] {
            let (lat, wall) = http_load(&addr, clients, repo_count);
            row("HTTP", clients, repo_count, &lat, wall);
        }
    }
    let _ = server.kill();
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn row(transport: &str, clients: usize, repos: usize, lat: &[Duration], wall: Duration) {
    let mut sorted = lat.to_vec();
    sorted.sort();
    let pick = |q: f64| sorted[((sorted.len() - 1) as f64 * q).round() as usize];
    println!(
        "| {transport} | {clients} | {repos} | {} | {:.0} | {:.1} ms | {:.1} ms |",
        lat.len(),
        lat.len() as f64 / wall.as_secs_f64(),
        pick(0.5).as_secs_f64() * 1e3,
        pick(0.99).as_secs_f64() * 1e3,
    );
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("a repository directory");
    for entry in std::fs::read_dir(from).expect("guest/src").flatten() {
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if src.is_dir() {
            copy_tree(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).expect("a source file");
        }
    }
}

/// The `i`-th call's arguments.
fn call_body(i: usize) -> String {
    let (tool, args) = if i.is_multiple_of(2) {
        ("read_file", r#"{"path":"search.rs"}"#)
    } else {
        ("search_text", r#"{"query":"fn ","output":"count"}"#)
    };
    format!(
        r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"{tool}","arguments":{args}}}}}"#
    )
}

fn env_cmd(bin: &Path, state: &Path) -> Command {
    let mut c = Command::new(bin);
    c.env("XDG_STATE_HOME", state);
    c
}

fn stdio_server(bin: &Path, repo: &Path, state: &Path) -> Child {
    env_cmd(bin, state)
        .arg("--repo")
        .arg(repo)
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("file-tools mcp")
}

/// `calls` tool calls over stdio after the handshake; latencies and the wall time.
fn stdio_calls(child: &mut Child, calls: usize) -> (Vec<Duration>, Duration) {
    let mut input = child.stdin.take().expect("stdin");
    let mut output = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#;
    writeln!(input, "{init}").expect("initialize");
    output.read_line(&mut line).expect("initialize answer");
    writeln!(
        input,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .expect("initialized");
    let started = Instant::now();
    let mut lat = Vec::new();
    for i in 1..=calls {
        let t = Instant::now();
        writeln!(input, "{}", call_body(i)).expect("a call");
        line.clear();
        output.read_line(&mut line).expect("an answer");
        assert!(line.contains("\"result\""), "{line}");
        lat.push(t.elapsed());
    }
    (lat, started.elapsed())
}

fn http_server(bin: &Path, repos: &[PathBuf], state: &Path) -> Child {
    let mut c = env_cmd(bin, state);
    c.arg("--repo")
        .arg(&repos[0])
        .args(["mcp", "--http", "127.0.0.1:0"]);
    for (i, r) in repos.iter().enumerate().skip(1) {
        c.arg("--serve").arg(format!("r{i}={}", r.display()));
    }
    c.stderr(Stdio::piped())
        .spawn()
        .expect("file-tools mcp --http")
}

fn listening_address(child: &mut Child) -> String {
    let mut err = BufReader::new(child.stderr.take().expect("stderr"));
    let mut line = String::new();
    while err.read_line(&mut line).expect("the server's stderr") > 0 {
        if let Some(at) = line.find("http://") {
            let addr = line[at + 7..].split_whitespace().next().unwrap_or("");
            return addr.to_string();
        }
        line.clear();
    }
    panic!("the server stopped before listening");
}

/// `clients` threads, client `c` on repository `c % repos`; latencies and the wall time.
fn http_load(addr: &str, clients: usize, repos: usize) -> (Vec<Duration>, Duration) {
    let deadline = Instant::now() + Duration::from_secs(MAX_SECONDS);
    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let threads: Vec<_> = (0..clients)
        .map(|c| {
            let (addr, stop) = (addr.to_string(), stop.clone());
            let path = match c % repos {
                0 => "/mcp".to_string(),
                r => format!("/mcp/r{r}"),
            };
            std::thread::spawn(move || {
                let mut lat = Vec::new();
                for i in 0..CALLS_PER_CLIENT {
                    if stop.load(Ordering::Relaxed) || Instant::now() > deadline {
                        stop.store(true, Ordering::Relaxed);
                        break;
                    }
                    let t = Instant::now();
                    let answer = post(&addr, &path, &call_body(i + 1));
                    assert!(answer.contains("\"result\""), "{answer}");
                    lat.push(t.elapsed());
                }
                lat
            })
        })
        .collect();
    let lat = threads
        .into_iter()
        .flat_map(|t| t.join().expect("a client thread"))
        .collect();
    (lat, started.elapsed())
}

/// One POST on its own connection; the response as text.
fn post(addr: &str, path: &str, body: &str) -> String {
    let mut s = TcpStream::connect(addr).expect("connect");
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(request.as_bytes()).expect("send");
    let mut answer = String::new();
    s.read_to_string(&mut answer).expect("receive");
    answer
}
