//! The translation on a stream of JSON-RPC lines (stdio): a reader that translates what
//! the client sends before rmcp reads it, and a writer that adds the fields to the answers
//! that need them before they leave.
//!
//! Both look at a line's bytes first and parse only the few lines that may need
//! translating, so other messages pass as they came. The writer passes its bytes straight
//! through while no answer is awaited for a patch.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{ready, Context, Poll};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::{answer_id, outbound, translate, Patch};

/// Answers awaited for a patch at once, at most.
const MAX_AWAITED: usize = 64;
/// How long an answer is awaited: one that never comes (rmcp answers a request it cannot
/// read with a null id) stops costing the writer a parse of every line after this.
const AWAIT_FOR: Duration = Duration::from_secs(60);
/// The longest line translated: rmcp's own bound on a line, which it discards whole. A
/// longer one is passed on as it comes, unread, for rmcp to discard.
const MAX_LINE: usize = 16 * 1024 * 1024;

/// What the two directions of one connection share.
#[derive(Debug, Default)]
struct Shared {
    /// The client negotiated 2025-11-25.
    speaks_2025: bool,
    /// Answers to patch: request id, patch, when asked.
    awaited: Vec<(Value, Patch, Instant)>,
}

impl Shared {
    fn awaiting(&mut self) -> bool {
        self.awaited.retain(|a| a.2.elapsed() < AWAIT_FOR);
        !self.awaited.is_empty()
    }
}

/// The two ends of one connection's translation.
pub(crate) fn pair<R, W>(read: R, write: W) -> (Reader<R>, Writer<W>) {
    let shared = Arc::new(Mutex::new(Shared::default()));
    let reader = Reader {
        inner: read,
        raw: Vec::new(),
        scanned: 0,
        passing: false,
        out: Vec::new(),
        at: 0,
        ended: false,
        shared: shared.clone(),
    };
    let writer = Writer {
        inner: write,
        line: Vec::new(),
        out: Vec::new(),
        at: 0,
        line_start: true,
        shared,
    };
    (reader, writer)
}

/// The client's side: lines translated as they complete.
pub(crate) struct Reader<R> {
    inner: R,
    /// Bytes read, not yet a whole line.
    raw: Vec<u8>,
    /// How much of `raw` holds no line end.
    scanned: usize,
    /// Within a line longer than [`MAX_LINE`]: its bytes pass as they come.
    passing: bool,
    /// Translated bytes not yet handed on, from `at`.
    out: Vec<u8>,
    at: usize,
    ended: bool,
    shared: Arc<Mutex<Shared>>,
}

impl<R> Reader<R> {
    /// Moves every whole line of `raw` to `out`, translated where needed; at the end of
    /// the input, the rest too.
    fn take_lines(&mut self) {
        let mut start = 0;
        while let Some(n) = memchr::memchr(b'\n', &self.raw[start + self.scanned..]) {
            let end = start + self.scanned + n + 1;
            self.scanned = 0;
            if std::mem::take(&mut self.passing) || end - start > MAX_LINE {
                self.out.extend_from_slice(&self.raw[start..end]);
            } else {
                self.translate(start, end);
            }
            start = end;
        }
        let rest = self.raw.len() - start;
        if rest > 0 && self.ended && !self.passing {
            // The last line, without its line end.
            self.translate(start, self.raw.len());
            start = self.raw.len();
        } else if rest > 0 && (self.passing || rest > MAX_LINE) {
            // A line too long to translate: as it comes.
            self.passing = !self.ended;
            self.out.extend_from_slice(&self.raw[start..]);
            start = self.raw.len();
        }
        self.raw.drain(..start);
        self.scanned = self.raw.len();
    }

    fn translate(&mut self, start: usize, end: usize) {
        let line = &self.raw[start..end];
        let speaks_2025 = self.shared.lock().is_ok_and(|s| s.speaks_2025);
        // The renamed line and its line end stay within rmcp's bound.
        let done = translate(line, speaks_2025, MAX_LINE - 2);
        if let (Some((id, patch)), Ok(mut shared)) = (done.awaited, self.shared.lock()) {
            if patch == Patch::Initialize {
                shared.speaks_2025 = true;
            }
            // A client that asks without waiting for answers gets some unpatched, rather
            // than a list that grows.
            shared.awaiting();
            if shared.awaited.len() < MAX_AWAITED {
                shared.awaited.push((id, patch, Instant::now()));
            }
        }
        match done.renamed {
            Some(text) => {
                self.out.extend_from_slice(text.as_bytes());
                self.out.push(b'\n');
            }
            None => self.out.extend_from_slice(line),
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Reader<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        loop {
            if this.at < this.out.len() {
                let n = buf.remaining().min(this.out.len() - this.at);
                buf.put_slice(&this.out[this.at..this.at + n]);
                this.at += n;
                return Poll::Ready(Ok(()));
            }
            this.out.clear();
            this.at = 0;
            if this.ended {
                return Poll::Ready(Ok(()));
            }
            let mut chunk = [0u8; 16 * 1024];
            let mut read = ReadBuf::new(&mut chunk);
            ready!(Pin::new(&mut this.inner).poll_read(cx, &mut read))?;
            if read.filled().is_empty() {
                this.ended = true;
            } else {
                this.raw.extend_from_slice(read.filled());
            }
            this.take_lines();
        }
    }
}

/// The server's side: answers patched where the client's request asked for it.
pub(crate) struct Writer<W> {
    inner: W,
    /// The line being gathered while an answer is awaited.
    line: Vec<u8>,
    /// Bytes ready for `inner`, from `at`.
    out: Vec<u8>,
    at: usize,
    /// The last byte passed on ended a line.
    line_start: bool,
    shared: Arc<Mutex<Shared>>,
}

impl<W: AsyncWrite + Unpin> Writer<W> {
    /// Writes what `out` holds.
    fn poll_out(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.at < self.out.len() {
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &self.out[self.at..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.at += n;
        }
        self.out.clear();
        self.at = 0;
        Poll::Ready(Ok(()))
    }

    fn awaiting(&self) -> bool {
        self.shared.lock().is_ok_and(|mut s| s.awaiting())
    }

    /// Moves the whole lines gathered to `out`, patched where awaited.
    fn take_lines(&mut self) {
        while let Some(n) = self.line.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.line.drain(..=n).collect();
            let patched = serde_json::from_slice::<Value>(&line)
                .ok()
                .and_then(|mut m| self.patch(&mut m).then_some(m));
            match patched {
                Some(m) => {
                    self.out.extend_from_slice(m.to_string().as_bytes());
                    self.out.push(b'\n');
                }
                None => self.out.extend_from_slice(&line),
            }
        }
    }

    /// Patches `message` when it answers an awaited request.
    fn patch(&self, message: &mut Value) -> bool {
        let Ok(mut shared) = self.shared.lock() else {
            return false;
        };
        let Some(id) = answer_id(message) else {
            return false;
        };
        let Some(i) = shared.awaited.iter().position(|a| &a.0 == id) else {
            return false;
        };
        let (_, patch, _) = shared.awaited.swap_remove(i);
        outbound(message, patch);
        true
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for Writer<W> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        ready!(this.poll_out(cx))?;
        let awaiting = this.awaiting();
        if this.line.is_empty() && !(this.line_start && awaiting) {
            // Nothing to patch: straight through, up to the end of the line while an
            // answer is awaited, so that it is gathered from its start.
            let upto = match memchr::memchr(b'\n', buf) {
                Some(n) if awaiting => n + 1,
                _ => buf.len(),
            };
            let n = ready!(Pin::new(&mut this.inner).poll_write(cx, &buf[..upto]))?;
            if n > 0 {
                this.line_start = buf[n - 1] == b'\n';
            }
            return Poll::Ready(Ok(n));
        }
        this.line.extend_from_slice(buf);
        this.take_lines();
        this.line_start = this.line.is_empty();
        // Start writing; what is left goes out on the next write or flush.
        if let Poll::Ready(Err(e)) = this.poll_out(cx) {
            return Poll::Ready(Err(e));
        }
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_out(cx))?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // A line never ended goes out as it is.
        let rest = std::mem::take(&mut self.line);
        self.out.extend_from_slice(&rest);
        ready!(self.poll_out(cx))?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime")
    }

    #[test]
    fn a_2025_11_25_sessions_lines_are_translated_and_its_answers_patched() {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}}});
        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "find_files", "task": {"ttl": 1000}}});
        let plain = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";
        let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"});
        let sent = format!("{init}\n{plain}{call}\r\n{list}");
        rt().block_on(async {
            let (mut reader, mut writer) = pair(sent.as_bytes(), Vec::new());
            // Read in small pieces: lines cross reads.
            let mut got = Vec::new();
            let mut piece = [0u8; 7];
            loop {
                let n = reader.read(&mut piece).await.expect("read");
                if n == 0 {
                    break;
                }
                got.extend_from_slice(&piece[..n]);
            }
            let text = String::from_utf8(got).expect("utf-8");
            let lines: Vec<&str> = text.lines().collect();
            assert_eq!(lines.len(), 4, "{text}");
            assert_eq!(lines[1], plain.trim_end(), "an untouched line keeps its bytes");
            let call: Value = serde_json::from_str(lines[2]).expect("json");
            assert_eq!(call["method"], "file-tools/2025-11-25/tools/call");
            // The answers, written in pieces, the awaited ones patched.
            let answers = [
                json!({"jsonrpc": "2.0", "id": 9, "result": {}}),
                json!({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25", "capabilities": {}}}),
                json!({"jsonrpc": "2.0", "id": 3, "result": {"tools": [{"name": "find_files"}]}}),
                json!({"jsonrpc": "2.0", "id": 4, "result": {"tools": []}}),
            ];
            for a in &answers {
                let bytes = format!("{a}\n").into_bytes();
                for part in bytes.chunks(5) {
                    writer.write_all(part).await.expect("write");
                }
            }
            writer.flush().await.expect("flush");
            let out = String::from_utf8(writer.inner.clone()).expect("utf-8");
            let out: Vec<Value> = out
                .lines()
                .map(|l| serde_json::from_str(l).expect("json"))
                .collect();
            assert_eq!(out[0], answers[0]);
            assert!(out[1]["result"]["capabilities"]["tasks"].is_object());
            assert_eq!(out[2]["result"]["tools"][0]["execution"]["taskSupport"], "optional");
            assert_eq!(out[3], answers[3], "only awaited answers are patched");
        });
    }

    #[test]
    fn a_line_past_the_bound_passes_as_it_came_and_the_next_is_translated() {
        let mut long = b"{\"method\":\"tasks/list\",\"x\":\"".to_vec();
        long.resize(3 * MAX_LINE, b'a');
        long.extend_from_slice(b"\"}\n");
        let next = json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/list"});
        let mut sent = long.clone();
        sent.extend_from_slice(format!("{next}\n").as_bytes());
        rt().block_on(async {
            let (mut reader, _) = pair(&sent[..], Vec::<u8>::new());
            reader.shared.lock().expect("lock").speaks_2025 = true;
            let mut got = Vec::new();
            reader.read_to_end(&mut got).await.expect("read");
            assert!(
                got.starts_with(&long),
                "the long line passes whole and first"
            );
            // What was held at once stayed within the bound (plus one read).
            assert!(reader.raw.capacity() <= 2 * MAX_LINE + 64 * 1024);
            let last: Value = serde_json::from_slice(&got[long.len()..]).expect("json");
            assert_eq!(last["method"], "file-tools/2025-11-25/tasks/list");
        });
    }

    #[test]
    fn an_answer_that_begins_within_a_passing_write_is_still_patched() {
        rt().block_on(async {
            let (_, mut writer) = pair(&b""[..], Vec::<u8>::new());
            // A line half written while nothing was awaited.
            writer.write_all(b"{\"id\":9,\"res").await.expect("write");
            writer.shared.lock().expect("lock").awaited.push((
                json!(3),
                Patch::ToolsList,
                Instant::now(),
            ));
            let answer = json!({"jsonrpc": "2.0", "id": 3, "result": {"tools": [{"name": "a"}]}});
            let rest = format!("ult\":{{}}}}\n{answer}\n");
            writer.write_all(rest.as_bytes()).await.expect("write");
            writer.flush().await.expect("flush");
            let out = String::from_utf8(writer.inner.clone()).expect("utf-8");
            let lines: Vec<Value> = out
                .lines()
                .map(|l| serde_json::from_str(l).expect("json"))
                .collect();
            assert_eq!(lines[0], json!({"id": 9, "result": {}}));
            assert_eq!(
                lines[1]["result"]["tools"][0]["execution"]["taskSupport"],
                "optional"
            );
        });
    }

    #[test]
    fn a_line_the_renaming_would_take_past_the_bound_goes_as_it_came() {
        let head = r#"{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":""#;
        let mut line = head.as_bytes().to_vec();
        line.resize(MAX_LINE - 10, b't');
        line.extend_from_slice(b"\"}}\n");
        rt().block_on(async {
            let (mut reader, _) = pair(&line[..], Vec::<u8>::new());
            reader.shared.lock().expect("lock").speaks_2025 = true;
            let mut got = Vec::new();
            reader.read_to_end(&mut got).await.expect("read");
            assert!(got == line, "unchanged");
        });
    }

    #[test]
    fn an_answer_never_given_is_not_awaited_for_ever() {
        let (_, writer) = pair(&b""[..], Vec::<u8>::new());
        let old = Instant::now() - AWAIT_FOR - Duration::from_secs(1);
        writer
            .shared
            .lock()
            .expect("lock")
            .awaited
            .push((json!(1), Patch::ToolsList, old));
        assert!(!writer.awaiting());
        assert!(writer.shared.lock().expect("lock").awaited.is_empty());
    }

    #[test]
    fn a_later_sessions_lines_pass_unchanged() {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18"}});
        let call =
            json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"taskId": "t"}});
        let sent = format!("{init}\n{call}\n");
        rt().block_on(async {
            let (mut reader, _) = pair(sent.as_bytes(), Vec::<u8>::new());
            let mut got = String::new();
            reader.read_to_string(&mut got).await.expect("read");
            assert_eq!(got, sent);
        });
    }
}
