//! Reading audit logs written by [`crate::JsonLinesSink`]: the hash chain, its check, and
//! statistics.

use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// `prev_sha256` of the first line.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// sha256 of one line (without its line break), lowercase hex.
pub fn line_hash(line: &str) -> String {
    line_hash_bytes(line.as_bytes())
}

/// The directory beside `log` that holds its diff artifacts (`LOG.artifacts/`).
pub fn artifacts_dir(log: &Path) -> PathBuf {
    let mut name = log.file_name().unwrap_or_default().to_os_string();
    name.push(".artifacts");
    log.with_file_name(name)
}

/// Stores `diff` once, named by its sha256, in the log's artifact directory; returns the
/// artifact's path relative to the log's directory (what events reference). A diff holds
/// file content, so the directory is its owner's alone (`0700`, see
/// `src/private_dir.rs`) and each artifact is `0600`, whatever the changed file's bits.
///
/// # Errors
/// When the artifact cannot be written, or the directory belongs to another user.
pub fn store_artifact(log: &Path, sha256: &str, diff: &str) -> std::io::Result<String> {
    let dir = artifacts_dir(log);
    let name = format!("{sha256}.diff");
    let path = dir.join(&name);
    crate::private_dir::ensure_dir(&dir)?;
    if path.exists() {
        // One stored before artifacts were private.
        crate::private_dir::tighten_file(&path)?;
    } else {
        let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
        // A temporary file a crashed run of the same process id left behind.
        let _ = std::fs::remove_file(&tmp);
        crate::private_dir::write_new(&tmp, diff.as_bytes())?;
        std::fs::rename(&tmp, &path)?;
    }
    let dir_name = dir.file_name().unwrap_or_default().to_string_lossy();
    Ok(format!("{dir_name}/{name}"))
}

pub(crate) fn head_path(log: &Path) -> PathBuf {
    let mut name = log.file_name().unwrap_or_default().to_os_string();
    name.push(".head");
    log.with_file_name(name)
}

/// Lines so far and the hash the next line must carry, from the sidecar (or the log itself
/// when there is no sidecar yet).
///
/// # Errors
/// When the log or its sidecar cannot be read.
pub fn tail(log: &Path) -> std::io::Result<(u64, String)> {
    if let Ok(text) = std::fs::read_to_string(head_path(log)) {
        // `COUNT HASH`, and a mac after them when the log is keyed.
        let mut fields = text.split_whitespace();
        if let (Some(n), Some(h)) = (fields.next(), fields.next()) {
            if let Ok(n) = n.parse() {
                return Ok((n, h.to_string()));
            }
        }
    }
    // No sidecar: read the last line of the log.
    let mut f = std::fs::File::open(log)?;
    let len = f.metadata()?.len();
    if len == 0 {
        return Ok((0, GENESIS.to_string()));
    }
    let start = len.saturating_sub(1 << 20);
    f.seek(SeekFrom::Start(start))?;
    let mut buf = String::new();
    f.read_to_string(&mut buf)?;
    let last = buf.trim_end_matches('\n').rsplit('\n').next().unwrap_or("");
    let count = std::fs::read_to_string(log)?.lines().count() as u64;
    Ok((count, line_hash(last)))
}

/// Records the line count and the last line's hash beside the log (atomically), with
/// their mac when the log is keyed.
///
/// # Errors
/// When the sidecar cannot be written.
pub fn write_head(log: &Path, count: u64, hash: &str, mac: Option<&str>) -> std::io::Result<()> {
    let head = head_path(log);
    let tmp = head.with_extension(format!("tmp{}", std::process::id()));
    let record = match mac {
        Some(m) => format!("{count} {hash} {m}\n"),
        None => format!("{count} {hash}\n"),
    };
    std::fs::write(&tmp, record)?;
    std::fs::rename(tmp, head)
}

/// Why a log failed its check.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct VerifyError {
    /// The first line (from 1) where the chain breaks.
    pub line: u64,
    /// What is wrong there.
    pub message: String,
}

/// Checks the chain of a log; returns its number of lines.
///
/// # Errors
/// The first line where a line was removed, inserted, edited or cut off, or the log is
/// unreadable (line 0).
pub fn verify(log: &Path) -> Result<u64, VerifyError> {
    let text = std::fs::read_to_string(log).map_err(|e| VerifyError {
        line: 0,
        message: format!("cannot read the log: {e}"),
    })?;
    let mut prev = GENESIS.to_string();
    let mut n = 0u64;
    for (i, line) in text.lines().enumerate() {
        n = i as u64 + 1;
        let v: Value = serde_json::from_str(line).map_err(|e| VerifyError {
            line: n,
            message: format!("not a JSON object: {e}"),
        })?;
        if v["prev_sha256"].as_str() != Some(prev.as_str()) {
            return Err(VerifyError {
                line: n,
                message: "does not follow the line before it: a line was removed, inserted or edited here or just before".into(),
            });
        }
        if let Some(rel) = v["diff_artifact"].as_str() {
            check_artifact(log, rel, v["diff_sha256"].as_str())
                .map_err(|message| VerifyError { line: n, message })?;
        }
        prev = line_hash(line);
    }
    if let Ok(head) = std::fs::read_to_string(head_path(log)) {
        let expected = format!("{n} {prev}");
        let recorded: Vec<&str> = head.split_whitespace().take(2).collect();
        if recorded.join(" ") != expected {
            return Err(VerifyError {
                line: n,
                message: format!("the log ends differently from its head record ({}): its end was cut off or its last line edited", head.trim()),
            });
        }
    }
    Ok(n)
}

/// An event's diff artifact must exist, sit in the log's artifact directory and hash to
/// the event's `diff_sha256`.
fn check_artifact(log: &Path, rel: &str, sha: Option<&str>) -> Result<(), String> {
    let dir = artifacts_dir(log);
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let bytes = std::fs::read(dir.join(name))
        .map_err(|e| format!("its diff artifact {rel} cannot be read: {e}"))?;
    if Some(line_hash_bytes(&bytes).as_str()) != sha {
        return Err(format!(
            "its diff artifact {rel} does not match the diff_sha256 the event records: the artifact was changed"
        ));
    }
    Ok(())
}

fn line_hash_bytes(bytes: &[u8]) -> String {
    crate::hex(&Sha256::digest(bytes))
}

/// What `stats` gathers for one tool.
#[derive(Default)]
struct ToolStats {
    calls: u64,
    outcomes: BTreeMap<String, u64>,
    durations: Vec<u64>,
}

fn percentile(sorted: &[u64], p: usize) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    sorted[((sorted.len() - 1) * p) / 100]
}

/// The calls an audit log records, as a [`crate::CallObserver`] would have heard them (for
/// `file-tools metrics FILE`): tool, outcome, duration, bytes read and written. A log holds
/// no fuel figures and tells no trap from another error with the same code, so those count
/// as their code. A tool name not in `offered` (the tools the session offers) is
/// `unknown`, as for a live observer: a log full of made-up names makes one label, not
/// one each; so is an error code the contract does not define.
///
/// # Errors
/// When the log cannot be read or a line is not a JSON object.
pub fn call_records(
    log: &Path,
    offered: &std::collections::HashSet<String>,
) -> Result<Vec<crate::CallRecord>, VerifyError> {
    let text = std::fs::read_to_string(log).map_err(|e| VerifyError {
        line: 0,
        message: format!("cannot read the log: {e}"),
    })?;
    let mut records = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let v: Value = serde_json::from_str(line).map_err(|e| VerifyError {
            line: i as u64 + 1,
            message: format!("not a JSON object: {e}"),
        })?;
        let outcome = if v["ok"] == Value::Bool(true) {
            "ok".to_string()
        } else {
            logged_outcome(v["error_code"].as_str())
        };
        records.push(crate::CallRecord {
            tool: v["tool"]
                .as_str()
                .filter(|t| offered.contains(*t))
                .unwrap_or("unknown")
                .to_string(),
            outcome,
            duration: std::time::Duration::from_micros(v["duration_us"].as_u64().unwrap_or(0)),
            bytes_read: v["bytes_read"].as_u64().unwrap_or(0),
            bytes_written: v["bytes_written"].as_u64().unwrap_or(0),
            fuel: 0,
        });
    }
    Ok(records)
}

/// The outcome label of a logged failure: its error code in lower case when it is one the
/// contract knows, else `unknown`. A log is a file anyone with access may have edited; like
/// tool names, codes nobody defined make one label, not one each.
fn logged_outcome(code: Option<&str>) -> String {
    match code {
        Some(c) if file_tools_contract::ERROR_CODES.contains(&c) => crate::observe::outcome_of(c),
        _ => "unknown".to_string(),
    }
}

/// Calls per tool and outcome, p50/p99 durations, bytes read and written.
///
/// # Errors
/// When the log cannot be read or a line is not JSON.
pub fn stats(log: &Path) -> Result<Value, VerifyError> {
    let text = std::fs::read_to_string(log).map_err(|e| VerifyError {
        line: 0,
        message: format!("cannot read the log: {e}"),
    })?;
    let mut per_tool: BTreeMap<String, ToolStats> = BTreeMap::new();
    let (mut all, mut read, mut written) = (Vec::new(), 0u64, 0u64);
    for (i, line) in text.lines().enumerate() {
        let v: Value = serde_json::from_str(line).map_err(|e| VerifyError {
            line: i as u64 + 1,
            message: format!("not a JSON object: {e}"),
        })?;
        let tool = v["tool"].as_str().unwrap_or("?").to_string();
        let outcome = if v["ok"] == Value::Bool(true) {
            "ok".to_string()
        } else {
            v["error_code"].as_str().unwrap_or("ERROR").to_string()
        };
        let d = v["duration_us"].as_u64().unwrap_or(0);
        let e = per_tool.entry(tool).or_default();
        e.calls += 1;
        *e.outcomes.entry(outcome).or_insert(0) += 1;
        e.durations.push(d);
        all.push(d);
        read += v["bytes_read"].as_u64().unwrap_or(0);
        written += v["bytes_written"].as_u64().unwrap_or(0);
    }
    all.sort_unstable();
    let tools: serde_json::Map<String, Value> = per_tool
        .into_iter()
        .map(|(name, mut t)| {
            t.durations.sort_unstable();
            let (p50, p99) = (percentile(&t.durations, 50), percentile(&t.durations, 99));
            (
                name,
                json!({ "calls": t.calls, "outcomes": t.outcomes, "p50_us": p50, "p99_us": p99 }),
            )
        })
        .collect();
    Ok(json!({
        "calls": all.len(),
        "p50_us": percentile(&all, 50),
        "p99_us": percentile(&all, 99),
        "bytes_read": read,
        "bytes_written": written,
        "tools": tools,
    }))
}
