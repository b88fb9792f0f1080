//! `search_text`: literal and regex search over the tree, line oriented like grep.
//!
//! Each file is read whole (bounded by the policy's per-file limit) and searched as one
//! buffer; a match is reported on the line where it starts, and a line counts once however
//! many matches it holds. `^` and `$` match at line boundaries (also before `\r\n`). A match
//! that would run past the end of its line is checked again against that line alone, so
//! results are the same as a line-by-line search.
//!
//! Ordinary files are searched as their bytes. Text in another encoding is searched in its
//! decoded text (`encoded`): UTF-16 and UTF-32, and windows-1252 or a declared encoding
//! when the query could tell its text from its bytes or when a line to show is not UTF-8.
//! Lines and columns of such a file count in its text as decoded (UTF-8).

use crate::tools::progress::Meter;

use crate::api::{FileCount, SearchMatch, SearchOutput, SearchTextArgs, SearchTextResult, Stop};
use crate::audit::CallLog;
use crate::error::{ToolError, ToolResult};
use crate::rules::classify::Kind;
use crate::rules::fsx::EntryType;
use crate::rules::glob::Globs;
use crate::rules::path::LogicalPath;
use crate::rules::policy::Policy;
use crate::rules::walk::{walk, walk_budget, Skips, WalkOptions};
use crate::text::literal::Literal;
use crate::tools::cursor::{Page, Skipper};
use crate::tools::session::Session;

mod encoded;
mod indexed;
mod matcher;
mod visit;

#[cfg(test)]
use matcher::required_literals;
use matcher::Finder;
pub use matcher::{compile, Matcher};

const MAX_CONTEXT: u32 = 10;

/// Lines of one file that match, with their context.
#[derive(Debug)]
pub struct FileMatches {
    pub count: u32,
    pub lines: Vec<SearchMatch>,
    /// A line shown (matched or context) is not UTF-8.
    pub lossy: bool,
}

/// Searches one buffer. `want` is how many match records to build (0 for counting only).
pub fn search_buffer(
    m: &Matcher,
    path: &str,
    buf: &[u8],
    context: u32,
    want: usize,
) -> FileMatches {
    search_in(m, path, buf, context, want, false)
}

/// [`search_buffer`], passing over the required ASCII literals when `checked` (already
/// found in the file's bytes).
fn search_in(
    m: &Matcher,
    path: &str,
    buf: &[u8],
    context: u32,
    want: usize,
    checked: bool,
) -> FileMatches {
    let unchecked = |l: &&Literal| !(checked && l.needle().is_ascii());
    if m.required
        .iter()
        .filter(unchecked)
        .any(|l| l.find(buf).is_none())
    {
        return FileMatches {
            count: 0,
            lines: Vec::new(),
            lossy: false,
        };
    }
    let hay = match &m.literal {
        Some(l) if l.answers_for(buf) => Finder::Literal(l),
        _ => Finder::Regex(&m.re),
    };
    let mut count = 0u32;
    let mut lines = Vec::new();
    let mut lossy = false;
    let mut pos = 0usize;
    let mut line_no = 1u32;
    let mut counted_to = 0usize;
    while pos <= buf.len() {
        let Some((start, end)) = hay.find_at(buf, pos) else {
            break;
        };
        if start == buf.len() && buf.last().is_none_or(|&b| b == b'\n') {
            // An empty match after the final line break is not a line.
            break;
        }
        let ls = memchr::memrchr(b'\n', &buf[..start]).map_or(0, |i| i + 1);
        let le = memchr::memchr(b'\n', &buf[start..]).map_or(buf.len(), |i| start + i);
        let found = if end <= le {
            Some((start - ls, end - ls))
        } else {
            hay.find_in(&buf[ls..le])
        };
        if let Some((col, col_end)) = found {
            count += 1;
            if lines.len() < want {
                line_no += memchr::memchr_iter(b'\n', &buf[counted_to..ls]).count() as u32;
                counted_to = ls;
                lossy |= !is_utf8(&buf[ls..le]);
                let shown = crate::text::snippet::around(&buf[ls..le], col, col_end);
                lines.push(SearchMatch {
                    path: path.to_string(),
                    line: line_no,
                    column: col as u32 + 1,
                    text: shown.text,
                    cut_before: shown.cut_before,
                    cut_after: shown.cut_after,
                    match_start: shown.match_start,
                    match_len: shown.match_len,
                    before: context_before(buf, ls, context, &mut lossy),
                    after: context_after(buf, le, context, &mut lossy),
                });
            }
        }
        pos = le + 1;
    }
    FileMatches {
        count,
        lines,
        lossy,
    }
}

fn is_utf8(line: &[u8]) -> bool {
    line.is_ascii() || std::str::from_utf8(line).is_ok()
}

fn context_before(buf: &[u8], line_start: usize, n: u32, lossy: &mut bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut end = line_start;
    for _ in 0..n {
        if end == 0 {
            break;
        }
        let prev_end = end - 1;
        let start = memchr::memrchr(b'\n', &buf[..prev_end]).map_or(0, |i| i + 1);
        *lossy |= !is_utf8(&buf[start..prev_end]);
        out.push(crate::text::snippet::head(&buf[start..prev_end]));
        end = start;
    }
    out.reverse();
    out
}

fn context_after(buf: &[u8], line_end: usize, n: u32, lossy: &mut bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut start = line_end + 1;
    for _ in 0..n {
        if start >= buf.len() {
            break;
        }
        let end = memchr::memchr(b'\n', &buf[start..]).map_or(buf.len(), |i| start + i);
        *lossy |= !is_utf8(&buf[start..end]);
        out.push(crate::text::snippet::head(&buf[start..end]));
        start = end + 1;
    }
    out
}

/// Searches the tree, or one file.
///
/// # Errors
/// `INVALID_INPUT` (query, regex, globs, shard), `PATH_REJECTED`, `NOT_FOUND`,
/// `POLICY_DENIED` for the start path.
pub fn search_text(
    s: &Session,
    log: &mut CallLog,
    a: &SearchTextArgs,
) -> ToolResult<SearchTextResult> {
    let re = compile(a, &s.policy)?;
    let include = Globs::new(&a.include)?;
    let exclude = Globs::new(&a.exclude)?;
    if let Some(sh) = a.shard {
        if sh.count == 0 || sh.index >= sh.count {
            return Err(ToolError::invalid(
                "shard.index must be below shard.count, and count above 0",
            ));
        }
    }
    let limits = s.policy.limits();
    let max_matches = Policy::clamp(
        a.max_matches,
        limits.max_search_matches,
        limits.max_search_matches,
    ) as usize;
    let max_files = limits.max_search_files as usize;
    let context = a.context_lines.unwrap_or(0).min(MAX_CONTEXT);
    let output = a.output.unwrap_or_default();
    let start = LogicalPath::parse_dir(a.path.as_deref().unwrap_or(""))?;
    if a.cursor.is_some() && (a.shard.is_some() || output == SearchOutput::Count) {
        return Err(ToolError::invalid(
            "a cursor continues a list of matches or files: not with output \"count\" or a shard",
        ));
    }
    let ids = (crate::tools::list::root_id(s)?, s.policy.fingerprint());
    let page = Page::open(
        &s.cursor_key,
        (ids.0, &ids.1),
        "search_text",
        a,
        "max_matches",
        a.cursor.as_deref(),
    )?;
    let mut st = State {
        skipper: page.skipper(),
        page,
        re: &re,
        s,
        max_file_bytes: limits.max_search_file_bytes,
        context,
        want: if output == SearchOutput::Matches {
            max_matches
        } else {
            0
        },
        matches: Vec::new(),
        files: Vec::new(),
        total: 0,
        searched: 0,
        stopped_by: None,
        walk_stop: None,
        skips: Skips::default(),
        bytes: 0,
        buf: Vec::new(),
        meter: Meter::default(),
        configs: Default::default(),
        index: None,
    };
    if !start.is_root() {
        let r = s.readable_path(&start)?;
        match r.resolved.entry_type() {
            Some(EntryType::File) => {
                // `readable_path` has applied the read policy, as the walk does below.
                let held = r.resolved.parent.as_ref();
                st.search_file(&r.resolved.target, &start.to_string(), r.kind, held);
                return st.finish(log, output, max_files);
            }
            Some(EntryType::Dir) => {}
            _ => return Err(r.resolved.not_a_file_error()),
        }
        if r.resolved.via_link {
            return Err(ToolError::invalid(format!(
                "'{start}' is a symlink to a directory; search '{}' instead",
                r.resolved.target
            )));
        }
    }
    let opts = WalkOptions {
        include_hidden: a.include_hidden.unwrap_or(false),
        respect_ignore: a.respect_ignore.unwrap_or(true),
        max_depth: usize::MAX,
        shard: a.shard.map(|sh| (sh.index, sh.count)),
        with_stat: false,
    };
    // The index holds no file the ignore rules leave out: a search that reads them scans,
    // and so does a query without a trigram to narrow by (it reads every text file).
    let whole_tree = start.is_root() && opts.shard.is_none();
    let need = re.trigrams();
    if opts.respect_ignore && !need.is_empty() {
        st.index = indexed::Indexed::open(s, ids.0, need, whole_tree);
    }
    let mut walk_skips = Skips::default();
    let tree = match &mut st.index {
        Some(ix) if whole_tree => ix.replayable(s, opts.include_hidden),
        _ => None,
    };
    let stopped = match tree {
        Some(tree) => {
            let stopped = st.replay(&tree, &include, &exclude, &mut walk_skips);
            if let Some(ix) = &mut st.index {
                ix.put_back(tree);
            }
            stopped
        }
        None => {
            if whole_tree {
                let tape = st
                    .index
                    .as_mut()
                    .and_then(|ix| ix.record_walk(s, opts.include_hidden));
                if let Some(tape) = tape {
                    walk_skips = Skips::taped(tape);
                }
            }
            let stopped = walk(&s.fs, &s.policy, &start, &opts, &mut walk_skips, |e| {
                if let Some(ix) = &mut st.index {
                    ix.note(s, e);
                }
                st.visit(e, &include, &exclude)
            })?;
            let by_search = st.stopped_by.is_some();
            if let Some(ix) = &mut st.index {
                ix.end_walk(!by_search, stopped && !by_search);
            }
            stopped
        }
    };
    if let Some(ix) = st.index.take() {
        ix.close(s, !stopped);
    }
    // Each shard's walk counts only its own entries, so shards' counts add up.
    st.skips.merge(&walk_skips);
    if stopped && st.stopped_by.is_none() {
        st.walk_stop = Some(walk_budget(&s.policy));
    }
    st.finish(log, output, max_files)
}

struct State<'a> {
    re: &'a Matcher,
    s: &'a Session,
    max_file_bytes: u64,
    context: u32,
    want: usize,
    matches: Vec<SearchMatch>,
    files: Vec<FileCount>,
    total: u64,
    searched: u64,
    /// The cap that stopped the search (or, at the end, cut its list of files).
    stopped_by: Option<Stop>,
    /// The walk's budget, when it ran out.
    walk_stop: Option<Stop>,
    /// The page asked for, and what passes over the earlier pages' matches or files.
    page: Page<'a>,
    skipper: Skipper,
    skips: Skips,
    bytes: u64,
    buf: Vec<u8>,
    meter: Meter,
    /// Configuration files read for declared encodings, once per call.
    configs: crate::tools::conventions::Seen,
    /// The search index, when this search uses it.
    index: Option<indexed::Indexed>,
}

impl State<'_> {
    /// Reads up to `max` bytes of `path` into the buffer through its held parent directory
    /// (the walk's, or one opened from the root when there is none).
    fn read_through_port(
        &mut self,
        path: &LogicalPath,
        held: Option<&std::sync::Arc<crate::fs::port::Dir>>,
        max: u64,
    ) -> std::io::Result<usize> {
        let opened;
        let dir = match held {
            Some(d) => d,
            None => {
                opened = self.s.fs.open_dir(&path.parent())?;
                &opened
            }
        };
        let (data, st) = dir.read_file(path.name(), max)?;
        if !self.s.policy.links_allowed(st.nlink) {
            return Err(std::io::Error::other("several hard links"));
        }
        self.buf = data;
        Ok(self.buf.len())
    }

    /// Searches one file and counts it for the progress reports.
    fn search_file(
        &mut self,
        real_path: &LogicalPath,
        shown: &str,
        kind: Kind,
        held: Option<&std::sync::Arc<crate::fs::port::Dir>>,
    ) {
        let (bytes, total) = (self.bytes, self.total);
        self.search_one(real_path, shown, kind, held);
        let services = self.s.fs.services();
        self.meter
            .file(services, self.bytes - bytes, self.total - total);
    }

    fn search_one(
        &mut self,
        real_path: &LogicalPath,
        shown: &str,
        kind: Kind,
        held: Option<&std::sync::Arc<crate::fs::port::Dir>>,
    ) {
        match kind {
            Kind::Secret => return self.skips.add("secret"),
            Kind::GitInternal => return self.skips.add("git_internal"),
            Kind::Binary => return self.skips.add("binary"),
            _ => {}
        }
        let s = self.s;
        let mut look = None;
        let mut answer = None;
        if let Some(ix) = &mut self.index {
            match ix.trusted(real_path) {
                // Nothing changed since the walk that confirmed the record.
                Some(a) => answer = a,
                None => {
                    look = ix.look(s, real_path, held);
                    answer = look.as_ref().and_then(|l| ix.answer(s, real_path, l));
                }
            }
        }
        match answer {
            Some(indexed::Answer::Binary) => return self.skips.add("binary"),
            Some(indexed::Answer::TooLarge) => return self.skips.add("too_large"),
            Some(indexed::Answer::NoMatch) => {
                self.searched += 1;
                return;
            }
            None => {}
        }
        let limit = self.max_file_bytes;
        let read = match self.s.fs.services().read_file(real_path, limit + 1) {
            Some(Ok(bytes)) => {
                self.buf = bytes;
                Ok(self.buf.len())
            }
            Some(Err(e)) => Err(e),
            None => self.read_through_port(real_path, held, limit + 1),
        };
        let n = match read {
            Ok(n) => n as u64,
            Err(_) => return self.skips.add("unreadable"),
        };
        let record = |index: &mut Option<indexed::Indexed>,
                      what: &mut dyn FnMut(
            &mut crate::text::trigram::Scratch,
        ) -> crate::tools::index::What| {
            if let (Some(ix), Some(l)) = (index.as_mut(), look.as_ref()) {
                ix.record(s, real_path, l, n, what);
            }
        };
        if n > limit {
            record(&mut self.index, &mut |_| {
                crate::tools::index::What::TooLarge
            });
            return self.skips.add("too_large");
        }
        // UTF-16 and UTF-32 text is searched decoded; other NUL bytes are binary.
        let wide = match encoded::wide_text(&self.buf) {
            Ok(text) => text,
            Err(encoded::Binary) => {
                record(&mut self.index, &mut |_| crate::tools::index::What::Binary);
                return self.skips.add("binary");
            }
        };
        if wide.is_none() {
            let buf = &self.buf;
            record(&mut self.index, &mut |scratch| {
                indexed::text_record(s, real_path, buf, scratch)
            });
        }
        self.searched += 1;
        self.bytes += self.buf.len() as u64;
        let (text, checked) = match wide {
            Some(text) => (Some(text), false),
            // A query that could tell legacy text from its bytes: such a file is searched
            // decoded, once the ASCII literals its matches need are found.
            None if self.re.beyond_ascii => {
                if !self.re.ascii_required_in(&self.buf) {
                    return;
                }
                (
                    encoded::legacy_text(self.s, real_path, &self.buf, true, &mut self.configs),
                    true,
                )
            }
            None => (None, false),
        };
        let room = self.want.saturating_sub(self.matches.len());
        // Lines earlier pages returned are collected to be passed over (they still count).
        let skip = if self.want > 0 {
            self.skipper.left() as usize
        } else {
            0
        };
        let hay = text.as_ref().map_or(&self.buf[..], |t| t.as_bytes());
        let mut fm = search_in(self.re, shown, hay, self.context, room + skip, checked);
        if fm.lossy && text.is_none() {
            // A line to show is not UTF-8: a legacy file is searched again, decoded, so
            // that its lines read right (the same lines match: see `encoded`).
            if let Some(t) =
                encoded::legacy_text(self.s, real_path, &self.buf, false, &mut self.configs)
            {
                fm = search_in(
                    self.re,
                    shown,
                    t.as_bytes(),
                    self.context,
                    room + skip,
                    false,
                );
            }
        }
        if fm.count == 0 {
            return;
        }
        // A file holding a secret counts for nothing and is not named, whatever matched in
        // it: any answer that differed with the query (a count, a skip reason, a line)
        // would let queries spell the secret out, prefix by prefix. A file without a match
        // answers the same (nothing), so whether the query met the secret stays unknown.
        if self.s.policy.sniffs(real_path) && crate::rules::sniff::secret_in(&self.buf).is_some() {
            return;
        }
        if skip > 0 {
            let skipper = &mut self.skipper;
            let passed = fm
                .lines
                .iter()
                .take_while(|m| skipper.skip(&format!("{}:{}", m.path, m.line)))
                .count();
            fm.lines.drain(..passed);
        }
        self.total += u64::from(fm.count);
        if self.want > 0 && fm.count as usize > room + skip {
            self.stopped_by = Some(Stop::new("max_matches", self.want as u64));
        }
        self.matches.extend(fm.lines);
        self.files.push(FileCount {
            path: shown.to_string(),
            count: fm.count,
        });
    }

    fn finish(
        mut self,
        log: &mut CallLog,
        output: SearchOutput,
        max_files: usize,
    ) -> ToolResult<SearchTextResult> {
        log.bytes_read += self.bytes;
        for f in &self.files {
            log.paths_read.push(f.path.clone());
        }
        self.files.sort_by(|a, b| a.path.cmp(&b.path));
        let files_matched = self.files.len() as u64;
        if self.want == 0 && output == SearchOutput::Files {
            // Files pages: the earlier pages' files are the first by path.
            let skipper = &mut self.skipper;
            let passed = self
                .files
                .iter()
                .take_while(|f| skipper.skip(&f.path))
                .count();
            self.files.drain(..passed);
        }
        if output != SearchOutput::Count && self.files.len() > max_files {
            self.files.truncate(max_files);
            self.stopped_by
                .get_or_insert_with(|| Stop::new("max_search_files", max_files as u64));
        }
        self.stopped_by =
            self.page
                .finish(&self.skipper, self.stopped_by.take(), self.walk_stop.take())?;
        let next_cursor = match output {
            SearchOutput::Matches => {
                self.page
                    .next(&self.stopped_by, "max_matches", self.matches.len(), || {
                        self.matches
                            .last()
                            .map(|m| format!("{}:{}", m.path, m.line))
                    })
            }
            _ => self.page.next(
                &self.stopped_by,
                "max_search_files",
                self.files.len(),
                || self.files.last().map(|f| f.path.clone()),
            ),
        };
        if output == SearchOutput::Count {
            self.files.clear();
        }
        let skipped = self.skips.counts();
        let mut summary = format!(
            "{} matching lines in {files_matched} files ({} files searched",
            self.total, self.searched
        );
        if output == SearchOutput::Matches && (self.matches.len() as u64) < self.total {
            summary.push_str(&format!("; {} lines shown", self.matches.len()));
        }
        summary.push(')');
        if let Some(stop) = &self.stopped_by {
            summary.push_str(&stop.note(match stop.cap.as_str() {
                "max_matches" => {
                    "the counts cover the files searched until then; pass next_cursor as cursor for the next page, or narrow the query"
                }
                "max_search_files" => {
                    "the counts cover every file searched; pass next_cursor as cursor for the next files"
                }
                _ => "the walk visited no more entries, so more files may match; search a subdirectory",
            }));
        }
        let skipped_text = self.skips.describe();
        if !skipped_text.is_empty() {
            summary.push_str(&format!("; skipped {skipped_text}"));
        }
        summary.push_str(&self.page.note());
        Ok(SearchTextResult {
            matches: self.matches,
            files: self.files,
            total_matches: self.total,
            files_matched,
            files_searched: self.searched,
            truncated: self.stopped_by.is_some(),
            stopped_by: self.stopped_by,
            skipped,
            next_cursor,
            summary,
        })
    }
}

#[cfg(test)]
mod tests;
