//! `read_file` and `read_many`: bounded, line-ranged reads with the whole file's sha256.
//!
//! A file within the policy's whole-read limit is read in one go; a larger one may only be
//! read by range and is streamed in 1 MiB chunks, so it is never held in memory whole. Either
//! way one pass computes the sha256, the line count, the line-ending style and the lines
//! asked for. A file in another encoding than UTF-8 (`text_file::form_of`: a BOM, the
//! repository's declaration, or what its content surely is, judged by the whole file or
//! its first chunk) is decoded on the way, so lines, line endings and the byte budget are
//! counted in its text; size and sha256 are always those of its bytes. An ordinary file
//! costs no more than before: its first 8 KiB tell UTF-8, and only a file that then turns
//! out not to be is judged whole and read again.

use sha2::{Digest, Sha256};

use crate::api::{
    LineEnding, ReadFileArgs, ReadFileResult, ReadManyArgs, ReadManyItem, ReadManyResult,
};
use crate::audit::CallLog;
use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::fs::hash::hex;
use crate::rules::classify::Kind;
use crate::rules::path::LogicalPath;
use crate::rules::policy::Policy;
use crate::text::encoding::detect;
use crate::text::encoding::stream::Stream;
use crate::text::encoding::Encoding;
use crate::tools::session::Session;
use crate::tools::text_file::{form_of, Form};

const CHUNK: usize = 1 << 20;

/// Reads a text file or a range of its lines.
///
/// # Errors
/// `PATH_REJECTED`, `NOT_FOUND`, `NOT_A_FILE`, `POLICY_DENIED`, `UNSUPPORTED_BINARY`,
/// `FILE_TOO_LARGE` (a read without a range of a file over the whole-read limit), `IO_ERROR`.
pub fn read_file(s: &Session, log: &mut CallLog, a: &ReadFileArgs) -> ToolResult<ReadFileResult> {
    let r = s.readable(&a.path)?;
    let meta = r.resolved.require_file()?;
    let shown = r.resolved.requested.to_string();
    if r.kind == Kind::Binary {
        return Err(binary_error(&shown));
    }
    let limits = s.policy.limits();
    let size = meta.size;
    let ranged = a.start_line.is_some() || a.max_lines.is_some();
    if !ranged && size > limits.max_whole_read_bytes {
        return Err(ToolError::new(
            ErrorCode::FileTooLarge,
            format!(
                "'{shown}' is {size} bytes, over the {} byte limit for reading a whole file; read it by range with start_line and max_lines",
                limits.max_whole_read_bytes
            ),
        )
        .with_path(shown)
        .with_detail("size", size.to_string()));
    }
    let start = a.start_line.unwrap_or(1).max(1);
    let (max_lines, max_bytes) = (
        Policy::clamp(a.max_lines, limits.max_read_lines, limits.max_read_lines),
        Policy::clamp(a.max_bytes, limits.max_read_bytes, limits.max_read_bytes) as usize,
    );
    let target = &r.resolved.target;
    let numbered = a.line_numbers.unwrap_or(false);
    let result = if size <= limits.max_whole_read_bytes {
        // Room past the size seen, so a file that grew meanwhile is not silently cut.
        let (buf, _) = r.resolved.read(size.saturating_add(1 << 16))?;
        Policy::content_denial(&shown, s.policy.sniff(target, &buf))?;
        let read = |form: &Form| {
            let mut col = Collector::new(start, max_lines, max_bytes, form);
            col.feed_whole(&buf, s.fs.services());
            col.finish(shown.clone(), r.kind, numbered)
        };
        // Ordinary text is taken as UTF-8 by its first 8 KiB, as the binary check looks;
        // when a later byte is not UTF-8, the whole file decides.
        let window = &buf[..buf.len().min(detect::WINDOW)];
        let plain = detect::bom(window).is_none()
            && detect::plain_utf8(window, buf.len() <= detect::WINDOW);
        let first = if plain {
            read(&Form::utf8())
        } else {
            read(&text_form(s, log, target, &shown, &buf, true)?)
        };
        if plain && !first.valid_utf8 {
            let form = text_form(s, log, target, &shown, &buf, true)?;
            if form.encoding == Encoding::Utf8 {
                first
            } else {
                read(&form)
            }
        } else {
            first
        }
    } else {
        let mut sniffer = crate::rules::sniff::Sniffer::default();
        let (file, _) = r.resolved.open()?;
        let mut offset = 0u64;
        let mut col: Option<Collector> = None;
        loop {
            let chunk = file
                .read_at(offset, CHUNK)
                .map_err(|e| ToolError::io(&shown, &e))?;
            let c = match &mut col {
                Some(c) => c,
                None => {
                    // The first chunk (1 MiB) decides the encoding.
                    let form = text_form(s, log, target, &shown, &chunk, chunk.is_empty())?;
                    col.insert(Collector::new(start, max_lines, max_bytes, &form))
                }
            };
            if chunk.is_empty() {
                break;
            }
            offset += chunk.len() as u64;
            if s.policy.sniffs(target) {
                sniffer.feed(&chunk);
            }
            c.feed(&chunk);
        }
        Policy::content_denial(&shown, sniffer.found())?;
        col.ok_or_else(|| ToolError::new(ErrorCode::Internal, "nothing was read"))?
            .finish(shown.clone(), r.kind, numbered)
    };
    log.read(&shown, result.size);
    if r.resolved.via_link {
        log.read(&r.resolved.target.to_string(), 0);
    }
    Ok(result)
}

/// How to read the file's text, judged by its bytes (all of them, or its first chunk);
/// the repository's declared encoding is read only for bytes that are not plain UTF-8.
///
/// # Errors
/// `UNSUPPORTED_BINARY`.
fn text_form(
    s: &Session,
    log: &mut CallLog,
    target: &LogicalPath,
    shown: &str,
    bytes: &[u8],
    whole: bool,
) -> ToolResult<Form> {
    let mut declared = crate::tools::mutate::declared(s, log, target);
    form_of(shown, bytes, whole, &mut declared).map_err(|e| match e.code {
        ErrorCode::UnsupportedBinary => binary_error(shown),
        _ => e,
    })
}

/// Reads several files; each gets its own result or error.
///
/// # Errors
/// `INVALID_INPUT` for an empty list, `LIMIT_EXCEEDED` for more paths than the policy allows.
pub fn read_many(s: &Session, log: &mut CallLog, a: &ReadManyArgs) -> ToolResult<ReadManyResult> {
    if a.paths.is_empty() {
        return Err(ToolError::invalid(
            "paths is empty; give at least one file to read",
        ));
    }
    let cap = s.policy.limits().max_read_many as usize;
    if a.paths.len() > cap {
        return Err(ToolError::new(
            ErrorCode::LimitExceeded,
            format!(
                "{} paths asked for, at most {cap} per call; split the request",
                a.paths.len()
            ),
        ));
    }
    let mut files = Vec::with_capacity(a.paths.len());
    let mut ok = 0;
    for p in &a.paths {
        let args = ReadFileArgs {
            path: p.clone(),
            start_line: None,
            max_lines: a.max_lines,
            max_bytes: a.max_bytes,
            line_numbers: a.line_numbers,
        };
        match read_file(s, log, &args) {
            Ok(res) => {
                ok += 1;
                files.push(ReadManyItem {
                    path: res.path.clone(),
                    ok: true,
                    result: Some(res),
                    error: None,
                });
            }
            Err(e) => files.push(ReadManyItem {
                path: p.clone(),
                ok: false,
                result: None,
                error: Some(e),
            }),
        }
    }
    let summary = format!("read {ok} of {} files", files.len());
    Ok(ReadManyResult { files, summary })
}

fn binary_error(shown: &str) -> ToolError {
    ToolError::new(
        ErrorCode::UnsupportedBinary,
        format!("'{shown}' holds binary data; read_file only reads text (read an image or a PDF with read_media; file_info gives any file's size and sha256)"),
    )
    .with_path(shown)
}

/// One pass over a file's bytes.
struct Collector {
    start: u32,
    max_lines: u32,
    max_bytes: usize,
    hasher: Sha256,
    /// The digest of a file fed whole (hashed in one call, by the host when it offers).
    digest: Option<String>,
    /// Bytes of the file (not of its text).
    size: u64,
    encoding: Encoding,
    bom: bool,
    /// Bytes of the BOM still to pass over.
    skip: usize,
    /// The decoder of a file not in UTF-8 (UTF-8 is taken as it is, and checked at the end).
    decoder: Option<Stream>,
    /// Line that the next byte belongs to (from 1).
    line: u32,
    at_line_start: bool,
    taking: bool,
    stopped: bool,
    cut: bool,
    taken: u32,
    line_start_len: usize,
    out: Vec<u8>,
    crlf: u64,
    lf: u64,
    /// The text's byte before the next one, and its last byte.
    prev: u8,
    last: Option<u8>,
}

impl Collector {
    fn new(start: u32, max_lines: u32, max_bytes: usize, form: &Form) -> Self {
        Collector {
            start,
            max_lines,
            max_bytes,
            hasher: Sha256::new(),
            digest: None,
            size: 0,
            encoding: form.encoding,
            bom: form.bom > 0,
            skip: form.bom,
            decoder: (form.encoding != Encoding::Utf8).then(|| Stream::new(form.encoding)),
            line: 1,
            at_line_start: true,
            taking: false,
            stopped: false,
            cut: false,
            taken: 0,
            line_start_len: 0,
            out: Vec::new(),
            crlf: 0,
            lf: 0,
            prev: 0,
            last: None,
        }
    }

    /// Feeds a whole file in one chunk.
    fn feed_whole(&mut self, data: &[u8], services: &dyn crate::rules::services::Services) {
        if self.size == 0 {
            self.digest = Some(services.sha256_hex(data));
        }
        self.feed(data);
    }

    /// Feeds the file's next bytes.
    fn feed(&mut self, chunk: &[u8]) {
        if self.digest.is_none() {
            self.hasher.update(chunk);
        }
        self.size += chunk.len() as u64;
        // The BOM is reported, never returned as content.
        let passed = self.skip.min(chunk.len());
        self.skip -= passed;
        let rest = &chunk[passed..];
        match self.decoder.take() {
            None => self.feed_text(rest),
            Some(mut d) => {
                let mut text = String::new();
                d.feed(rest, false, &mut text);
                self.decoder = Some(d);
                self.feed_text(text.as_bytes());
            }
        }
    }

    /// Feeds the next part of the file's text (UTF-8 for a file not in UTF-8).
    fn feed_text(&mut self, mut chunk: &[u8]) {
        if chunk.is_empty() {
            return;
        }
        self.last = chunk.last().copied();
        for nl in memchr::memchr_iter(b'\n', chunk) {
            let before = if nl > 0 { chunk[nl - 1] } else { self.prev };
            if before == b'\r' {
                self.crlf += 1;
            } else {
                self.lf += 1;
            }
        }
        self.prev = *chunk.last().unwrap_or(&0);
        while !chunk.is_empty() {
            if self.stopped {
                // Nothing more is taken: only the lines are counted, in one SIMD pass.
                self.line += memchr::memchr_iter(b'\n', chunk).count() as u32;
                self.at_line_start = chunk.last() == Some(&b'\n');
                break;
            }
            if self.at_line_start {
                self.at_line_start = false;
                self.taking =
                    !self.stopped && self.line >= self.start && self.taken < self.max_lines;
                if self.taking {
                    self.taken += 1;
                    self.line_start_len = self.out.len();
                }
            }
            let (seg, ends_line) = match memchr::memchr(b'\n', chunk) {
                Some(i) => (&chunk[..=i], true),
                None => (chunk, false),
            };
            if self.taking {
                self.take(seg);
            }
            chunk = &chunk[seg.len()..];
            if ends_line {
                self.line += 1;
                self.at_line_start = true;
                if !self.stopped && self.taken >= self.max_lines && self.line >= self.start {
                    self.stopped = true;
                }
            }
        }
    }

    fn take(&mut self, seg: &[u8]) {
        if self.out.len() + seg.len() <= self.max_bytes {
            self.out.extend_from_slice(seg);
            return;
        }
        self.stopped = true;
        self.taking = false;
        if self.taken == 1 {
            // A single line longer than the byte budget: return its head.
            let room = self.max_bytes.saturating_sub(self.out.len());
            let mut end = room.min(seg.len());
            while end > 0 && end < seg.len() && (seg[end] & 0xC0) == 0x80 {
                end -= 1;
            }
            self.out.extend_from_slice(&seg[..end]);
            self.cut = true;
        } else {
            self.out.truncate(self.line_start_len);
            self.taken -= 1;
        }
    }

    fn finish(mut self, path: String, kind: Kind, numbered: bool) -> ReadFileResult {
        let mut replaced = false;
        if let Some(mut d) = self.decoder.take() {
            // A character cut at the end of the file.
            let mut text = String::new();
            d.feed(&[], true, &mut text);
            self.feed_text(text.as_bytes());
            replaced = d.replaced();
        }
        let total_lines = match self.last {
            None => 0,
            Some(b'\n') => self.line - 1,
            Some(_) => self.line,
        };
        let end_line = self.start + self.taken - 1;
        let truncated = self.cut || end_line < total_lines;
        let (text, valid_utf8) = match String::from_utf8(std::mem::take(&mut self.out)) {
            Ok(t) => (t, !replaced),
            Err(e) => (String::from_utf8_lossy(e.as_bytes()).into_owned(), false),
        };
        let content = if numbered {
            number_lines(&text, self.start)
        } else {
            text
        };
        let line_ending = match (self.crlf > 0, self.lf > 0) {
            (true, false) => LineEnding::Crlf,
            (false, true) => LineEnding::Lf,
            (true, true) => LineEnding::Mixed,
            (false, false) => LineEnding::None,
        };
        let encoding = self.encoding.name();
        let shown_encoding = if self.encoding == Encoding::Utf8 {
            String::new()
        } else {
            format!(" ({encoding})")
        };
        let summary = if self.taken == 0 {
            if total_lines == 0 {
                format!("{path} is empty")
            } else {
                format!(
                    "{path} has {total_lines} lines; nothing at line {}",
                    self.start
                )
            }
        } else if truncated {
            let next = if self.cut { end_line } else { end_line + 1 };
            format!(
                "{path}{shown_encoding}: lines {}-{end_line} of {total_lines}{}; continue with start_line={next}",
                self.start,
                if self.cut { " (line cut at the byte limit)" } else { "" }
            )
        } else {
            format!(
                "{path}{shown_encoding}: lines {}-{end_line} of {total_lines}",
                self.start
            )
        };
        ReadFileResult {
            path,
            content,
            start_line: self.start,
            end_line,
            total_lines,
            size: self.size,
            sha256: self.digest.unwrap_or_else(|| hex(&self.hasher.finalize())),
            truncated,
            line_ending,
            bom: self.bom,
            encoding,
            valid_utf8,
            kind,
            summary,
        }
    }
}

fn number_lines(text: &str, start: u32) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for (i, line) in text.split_inclusive('\n').enumerate() {
        out.push_str(&format!("{:>6}\t{line}", start as usize + i));
    }
    out
}

#[cfg(test)]
mod tests;
