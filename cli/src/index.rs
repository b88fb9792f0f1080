//! `file-tools index build | status | drop`: the search index in its folder (the one the
//! repository's sessions share in the user's state directory, or `index/` in the
//! `--state-dir` given; see [`crate::setup::index_dir`]). The component makes and checks
//! it (see the README's "Search index"); here it is built by one search that reads every
//! file, shown, or removed.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Subcommand;
use serde_json::{json, Value};

use crate::setup::{
    index_dir, load_policy, need_repo, session_builder, state_dir, usage_error, Options,
};

#[derive(Debug, Subcommand)]
pub(crate) enum IndexCommand {
    /// Build the index now (one search that reads and records every file the policy lets
    /// a search read); needs a policy with `limits.max_index_bytes` above 0.
    Build,
    /// The index files in the state directory and their sizes.
    Status,
    /// Remove the index files (the next search with the index on builds them again).
    Drop,
}

/// The index files in the index folder `dir`: the names the component gives them (64 hex
/// digits).
fn index_files(dir: &Path) -> Vec<(String, u64)> {
    let mut out: Vec<(String, u64)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let ours = name.len() == 64 && name.bytes().all(|b| b.is_ascii_hexdigit());
            let meta = e.metadata().ok().filter(|m| m.is_file())?;
            ours.then_some((name, meta.len()))
        })
        .collect();
    out.sort();
    out
}

/// The temporary files in the index folder `dir` (`.`, 16 hex digits, `.tmp`: the names a
/// save writes before it renames): a save that a limit cut short leaves its own, as large
/// as the index, which no later save replaces.
fn temporary_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| {
            n.strip_prefix('.')
                .and_then(|n| n.strip_suffix(".tmp"))
                .is_some_and(|h| h.len() == 16 && h.bytes().all(|b| b.is_ascii_hexdigit()))
        })
        .collect()
}

fn status_json(dir: &Path, enabled: bool) -> Value {
    let files = index_files(dir);
    let bytes: u64 = files.iter().map(|f| f.1).sum();
    json!({
        "index_dir": dir,
        "enabled": enabled,
        "files": files.iter().map(|(n, b)| json!({"name": n, "bytes": b})).collect::<Vec<_>>(),
        "bytes": bytes,
    })
}

pub(crate) fn index(o: &Options, cmd: &IndexCommand) -> ExitCode {
    let repo = match need_repo(o, "index") {
        Ok(r) => r,
        Err(e) => return usage_error(&e),
    };
    let folder = |o: &Options| -> Result<std::path::PathBuf, String> {
        Ok(match index_dir(o, repo)? {
            Some(d) => d,
            None => state_dir(o, repo)?.join(file_tools_host::index_build::INDEX_DIR_NAME),
        })
    };
    let (dir, policy) = match folder(o).and_then(|d| Ok((d, load_policy(o)?.0))) {
        Ok(v) => v,
        Err(e) => return usage_error(&e),
    };
    let enabled = policy
        .pointer("/limits/max_index_bytes")
        .and_then(Value::as_u64)
        .is_some_and(|n| n > 0);
    match cmd {
        IndexCommand::Status => crate::ok(status_json(&dir, enabled)),
        IndexCommand::Drop => {
            let mut removed = 0;
            for (name, _) in index_files(&dir) {
                if std::fs::remove_file(dir.join(name)).is_ok() {
                    removed += 1;
                }
            }
            let mut temporary = 0;
            for name in temporary_files(&dir) {
                if std::fs::remove_file(dir.join(name)).is_ok() {
                    temporary += 1;
                }
            }
            crate::ok(json!({
                "index_dir": dir,
                "removed": removed,
                "temporary_files_removed": temporary,
            }))
        }
        IndexCommand::Build => {
            if !enabled {
                return usage_error(
                    "the index is off: give a --policy whose [limits] max_index_bytes is above 0 (for example 268435456)",
                );
            }
            let opened = session_builder(o, repo)
                .and_then(|(b, _)| b.index_builder(true).build().map_err(|e| e.to_string()));
            let mut session = match opened {
                Ok(s) => s,
                Err(e) => return usage_error(&e),
            };
            let started = Instant::now();
            let terminal = std::io::stderr().is_terminal();
            let progress = terminal.then(|| terminal_progress(started));
            let answer = file_tools_host::index_build::build(&mut session, progress);
            if terminal {
                crate::errln("");
            }
            match answer {
                Ok(r) => {
                    let mut v = status_json(&dir, enabled);
                    v["files_searched"] = r["files_searched"].clone();
                    v["skipped"] = r["skipped"].clone();
                    v["seconds"] = json!(started.elapsed().as_secs_f64());
                    crate::ok(v)
                }
                Err(e) => crate::failed(e.to_json()),
            }
        }
    }
}

/// How far a build has come, as the line a terminal shows.
fn progress_line(files: u64, elapsed: Duration) -> String {
    format!(
        "\rindexing: {files} files looked at, {:.1} s",
        elapsed.as_secs_f64()
    )
}

/// A progress sink that rewrites one line of standard error in place, at most ten times a
/// second.
fn terminal_progress(started: Instant) -> Arc<dyn file_tools_host::Progress> {
    let last: Mutex<Option<Instant>> = Mutex::new(None);
    Arc::new(move |u: file_tools_host::ProgressUpdate| {
        let Ok(mut last) = last.lock() else { return };
        if last.is_some_and(|t| t.elapsed() < Duration::from_millis(100)) {
            return;
        }
        *last = Some(Instant::now());
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(progress_line(u.files_scanned, started.elapsed()).as_bytes());
        let _ = err.flush();
    })
}
