//! `file-tools mcp` over stdio answers whatever its standard streams are: the pipes MCP
//! clients give (read and written on the runtime's reactor), and a file, a socket pair or
//! a mix of them (through blocking handles), and stops when its input ends.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// An initialize request, its notification and a `tools/list`, as a client sends them.
const REQUESTS: &str = concat!(
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#,
    "\n",
);

/// The ids of the answers in `out` and whether `tools/list` named `read_file`.
fn answers(out: &str) -> (Vec<u64>, bool) {
    let mut ids = Vec::new();
    let mut lists_read = false;
    for line in out.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        if let Some(id) = v["id"].as_u64() {
            ids.push(id);
        }
        if let Some(tools) = v["result"]["tools"].as_array() {
            lists_read = tools.iter().any(|t| t["name"] == "read_file");
        }
    }
    (ids, lists_read)
}

/// Waits for `child` to end by itself (its input has ended), at most a minute.
fn ends(child: &mut std::process::Child) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the server did not stop when its input ended");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[derive(Debug, Clone, Copy)]
enum Stream {
    Pipe,
    File,
    Socket,
}

fn serve(input: Stream, output: Stream) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    crate::support::write(&repo.join("a.txt"), b"a\n");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_file-tools"));
    cmd.args(["mcp", "--repo"])
        .arg(&repo)
        .arg("--state-dir")
        .arg(tmp.path().join("state"))
        .stderr(Stdio::null());
    let mut feed = None;
    match input {
        Stream::Pipe => {
            cmd.stdin(Stdio::piped());
        }
        Stream::File => {
            let path = tmp.path().join("in");
            std::fs::write(&path, REQUESTS).unwrap();
            cmd.stdin(std::fs::File::open(&path).unwrap());
        }
        Stream::Socket => {
            let (ours, theirs) = UnixStream::pair().unwrap();
            cmd.stdin(std::os::fd::OwnedFd::from(theirs));
            feed = Some(ours);
        }
    }
    let mut drain = None;
    let out_file = tmp.path().join("out");
    match output {
        Stream::Pipe => {
            cmd.stdout(Stdio::piped());
        }
        Stream::File => {
            cmd.stdout(std::fs::File::create(&out_file).unwrap());
        }
        Stream::Socket => {
            let (ours, theirs) = UnixStream::pair().unwrap();
            cmd.stdout(std::os::fd::OwnedFd::from(theirs));
            drain = Some(ours);
        }
    }
    let mut child = cmd.spawn().unwrap();
    // The command holds our copies of the server's ends of the socket pairs: closed now,
    // so that the server's output ends when the server closes it.
    drop(cmd);
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(REQUESTS.as_bytes()).unwrap();
    }
    if let Some(mut s) = feed {
        s.write_all(REQUESTS.as_bytes()).unwrap();
    }
    // Our ends are dropped (closed) above: the server's input has ended.
    let reader = std::thread::spawn({
        let stdout = child.stdout.take();
        move || {
            let mut text = String::new();
            if let Some(mut s) = stdout {
                s.read_to_string(&mut text).unwrap();
            }
            if let Some(mut s) = drain {
                s.read_to_string(&mut text).unwrap();
            }
            text
        }
    });
    let status = ends(&mut child);
    let streamed = reader.join().unwrap();
    assert!(status.success(), "{input:?} -> {output:?}: {status}");
    match output {
        Stream::File => std::fs::read_to_string(&out_file).unwrap(),
        Stream::Pipe | Stream::Socket => streamed,
    }
}

#[test]
fn the_stdio_server_answers_on_pipes_files_and_sockets_and_stops_at_the_end_of_its_input() {
    for (input, output) in [
        (Stream::Pipe, Stream::Pipe),
        (Stream::File, Stream::File),
        (Stream::Socket, Stream::Socket),
        (Stream::Pipe, Stream::File),
        (Stream::File, Stream::Pipe),
    ] {
        let out = serve(input, output);
        let (ids, lists_read) = answers(&out);
        assert_eq!(ids, [1, 2], "{input:?} -> {output:?}: {out}");
        assert!(lists_read, "{input:?} -> {output:?}: {out}");
    }
}
