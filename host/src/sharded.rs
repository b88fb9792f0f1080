//! Search on several cores: one session per shard of the tree, run in parallel threads, and
//! their answers merged into the answer one session would give.
//!
//! Every session walks the whole tree but reads and searches only the files of its shard
//! (`search-text-args.shard`, a hash of the path), so the reading and matching work splits
//! evenly while the cheap directory walk is repeated. Each shard's session emits its own
//! audit event.

use crate::bindings::agent::file_tools::types::{ErrorCode, SkipCount, ToolError};
use crate::bindings::exports::agent::file_tools::tools::{
    FileCount, SearchMatch, SearchTextArgs, SearchTextResult, Shard, Stop,
};
use crate::error::HostError;
use crate::session::{Session, SessionBuilder};

/// A set of sessions over the same repository that search in parallel.
#[derive(Debug)]
pub struct ShardedSearch {
    sessions: Vec<Session>,
}

impl ShardedSearch {
    /// Opens `shards` sessions from `builder` (at least one).
    ///
    /// # Errors
    /// As [`SessionBuilder::build`].
    pub fn new(builder: &SessionBuilder, shards: usize) -> Result<Self, HostError> {
        let sessions = (0..shards.max(1))
            .map(|_| builder.clone().build())
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ShardedSearch { sessions })
    }

    /// How many shards (and threads) a search uses.
    pub fn shards(&self) -> usize {
        self.sessions.len()
    }

    /// Runs `args` on every shard at once and merges the answers: matches and files in
    /// the order one session would list them, counts added up.
    ///
    /// # Errors
    /// The first shard's error (they all see the same arguments and policy).
    pub fn search(&mut self, args: &SearchTextArgs) -> Result<SearchTextResult, ToolError> {
        let count = self.sessions.len() as u32;
        let answers: Vec<Result<SearchTextResult, ToolError>> = std::thread::scope(|scope| {
            let handles: Vec<_> = self
                .sessions
                .iter_mut()
                .enumerate()
                .map(|(i, s)| {
                    let mut a = args.clone();
                    a.shard = Some(Shard {
                        index: i as u32,
                        count,
                    });
                    scope.spawn(move || s.search_text(&a))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(ToolError {
                            code: ErrorCode::Internal,
                            message: "a search thread panicked".into(),
                            path: None,
                            reason: None,
                            details: Vec::new(),
                        })
                    })
                })
                .collect()
        });
        let parts = answers.into_iter().collect::<Result<Vec<_>, _>>()?;
        Ok(merge(parts, args.max_matches))
    }
}

/// Walk order: components compared one by one (a directory's subtree right after it).
fn walk_key(path: &str) -> Vec<&str> {
    path.split('/').collect()
}

fn merge(parts: Vec<SearchTextResult>, max_matches: Option<u32>) -> SearchTextResult {
    // Without an explicit cap, a shard that stopped early stopped at the policy's cap.
    let cap = max_matches.map(|m| m as usize).or_else(|| {
        parts
            .iter()
            .filter(|p| p.truncated)
            .map(|p| p.matches.len())
            .max()
    });
    let mut matches: Vec<SearchMatch> = Vec::new();
    let mut files: Vec<FileCount> = Vec::new();
    let mut skipped: Vec<SkipCount> = Vec::new();
    let (mut total, mut searched, mut truncated) = (0u64, 0u64, false);
    let (mut files_matched, mut stopped_by) = (0u64, None);
    for p in parts {
        matches.extend(p.matches);
        files.extend(p.files);
        total += p.total_matches;
        searched += p.files_searched;
        files_matched += p.files_matched;
        truncated |= p.truncated;
        stopped_by = stopped_by.or(p.stopped_by);
        for s in p.skipped {
            match skipped.iter_mut().find(|k| k.reason == s.reason) {
                Some(k) => k.count += s.count,
                None => skipped.push(s),
            }
        }
    }
    matches.sort_by(|a, b| {
        walk_key(&a.path)
            .cmp(&walk_key(&b.path))
            .then(a.line.cmp(&b.line))
    });
    files.sort_by(|a, b| walk_key(&a.path).cmp(&walk_key(&b.path)));
    skipped.sort_by(|a, b| a.reason.cmp(&b.reason));
    if let Some(cap) = cap {
        if matches.len() > cap {
            matches.truncate(cap);
            truncated = true;
            stopped_by = stopped_by.or(Some(Stop {
                cap: "max_matches".into(),
                limit: cap as u64,
            }));
        }
    }
    let mut summary =
        format!("{total} matching lines in {files_matched} files ({searched} files searched)");
    if let Some(stop) = &stopped_by {
        summary.push_str(&format!("; stopped at {} = {}", stop.cap, stop.limit));
    }
    SearchTextResult {
        matches,
        files,
        total_matches: total,
        files_matched,
        files_searched: searched,
        truncated,
        stopped_by,
        // Shards are one page each: a cursor does not continue a sharded search.
        next_cursor: None,
        skipped,
        summary,
    }
}
