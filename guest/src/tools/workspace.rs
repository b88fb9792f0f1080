//! `diff_workspace` and `revert`: what the session changed, against its baseline.

use std::collections::BTreeMap;

use crate::api::{DiffWorkspaceArgs, DiffWorkspaceResult, FileStat, MutationResult, RevertArgs};
use crate::audit::CallLog;
use crate::error::{ToolError, ToolResult};
use crate::rules::classify::Kind;
use crate::rules::path::LogicalPath;
use crate::rules::policy::Policy;
use crate::text::diff::{bound, file_diff, Side};
use crate::tools::baseline::{Baseline, Entry};
use crate::tools::session::Session;
use crate::tools::txn::{check_expected, commit, writable_path, Change, Guard};

struct Changed {
    path: String,
    before: Option<Vec<u8>>,
    now: Option<Vec<u8>>,
    opaque: bool,
}

fn changed_files(s: &Session, filter: &[LogicalPath]) -> ToolResult<Vec<Changed>> {
    let baseline = Baseline::new(s.state_dir.as_deref(), &s.memory);
    let mut out = Vec::new();
    for (path, entry) in baseline.entries()? {
        let lp = LogicalPath::parse(&path)?;
        if !filter.is_empty() && !filter.iter().any(|f| lp.starts_with(f)) {
            continue;
        }
        let before = baseline.content(&entry)?;
        // Never through a symlink: something else planted where a file was is shown as
        // changed, its content withheld.
        let max = s.policy.limits().max_write_bytes.saturating_add(1);
        // A file with several hard links may be another name of a file outside the
        // repository or of a secret: planted too, unless the policy allows hard links.
        let (now, planted) = match s.fs.read_nofollow(&lp, max) {
            Ok(Some((data, st))) if s.policy.links_allowed(st.nlink) => (Some(data), false),
            Ok(None) => (None, false),
            Ok(Some(_)) | Err(_) => (Some(Vec::new()), true),
        };
        if !planted && crate::text::bytes::eq_opt(before.as_deref(), now.as_deref()) {
            continue;
        }
        let kind = s.policy.kind_of(&lp, false);
        let sniffed =
            |c: &Option<Vec<u8>>| c.as_ref().is_some_and(|c| s.policy.sniff(&lp, c).is_some());
        let opaque = planted
            || matches!(kind, Kind::Secret | Kind::GitInternal)
            || s.policy.read_denial(&lp, kind).is_some()
            || sniffed(&before)
            || sniffed(&now);
        out.push(Changed {
            path,
            before,
            now,
            opaque,
        });
    }
    Ok(out)
}

fn side<'a>(bytes: &'a Option<Vec<u8>>, opaque: bool) -> Side<'a> {
    match bytes {
        None => Side::Absent,
        Some(_) if opaque => Side::Opaque,
        Some(b) => crate::text::encoding::text_of(b, None).map_or(Side::Opaque, Side::Text),
    }
}

/// The diff of everything the session changed.
///
/// # Errors
/// `PATH_REJECTED` for a bad filter path, `IO_ERROR` when the baseline cannot be read.
pub fn diff_workspace(
    s: &Session,
    log: &mut CallLog,
    a: &DiffWorkspaceArgs,
) -> ToolResult<DiffWorkspaceResult> {
    let filter = a
        .paths
        .iter()
        .map(|p| LogicalPath::parse_dir(p))
        .collect::<ToolResult<Vec<_>>>()?;
    let mut changed = changed_files(s, &filter)?;
    // A file deleted in one place and created with the same content in another was moved.
    let mut renames: Vec<(usize, usize)> = Vec::new();
    for (i, gone) in changed.iter().enumerate().filter(|(_, c)| c.now.is_none()) {
        let target = changed.iter().enumerate().position(|(j, c)| {
            c.before.is_none() && c.now == gone.before && !renames.iter().any(|&(_, k)| k == j)
        });
        if let Some(j) = target {
            renames.push((i, j));
        }
    }
    let mut diff = String::new();
    let mut files = Vec::new();
    let (mut ins, mut del) = (0, 0);
    for (i, c) in changed.iter().enumerate() {
        if renames.iter().any(|&(_, j)| j == i) {
            continue;
        }
        let (d, status, shown) = match renames.iter().find(|&&(k, _)| k == i) {
            Some(&(_, j)) => {
                let to = &changed[j];
                (
                    file_diff(
                        &c.path,
                        &to.path,
                        side(&c.before, c.opaque),
                        side(&to.now, to.opaque),
                    ),
                    "renamed",
                    format!("{} -> {}", c.path, to.path),
                )
            }
            None => {
                let status = match (&c.before, &c.now) {
                    (None, _) => "created",
                    (_, None) => "deleted",
                    _ => "modified",
                };
                (
                    file_diff(
                        &c.path,
                        &c.path,
                        side(&c.before, c.opaque),
                        side(&c.now, c.opaque),
                    ),
                    status,
                    c.path.clone(),
                )
            }
        };
        ins += d.insertions;
        del += d.deletions;
        files.push(FileStat {
            path: shown,
            status: status.to_string(),
            insertions: d.insertions,
            deletions: d.deletions,
        });
        diff.push_str(&d.text);
        log.paths_read.push(c.path.clone());
    }
    changed.clear();
    let diff_sha256 = s.fs.services().sha256_hex(diff.as_bytes());
    let max = s.policy.limits().max_diff_bytes;
    let cap = Policy::clamp(a.max_bytes, max, max.saturating_mul(16));
    let truncated = if a.stat_only.unwrap_or(false) {
        diff.clear();
        false
    } else {
        bound(&mut diff, cap as usize)
    };
    let summary = if files.is_empty() {
        "no changes since the session began".to_string()
    } else {
        format!(
            "{} file(s) changed since the session began, +{ins} -{del}{}",
            files.len(),
            if truncated {
                " (diff cut at the size limit)"
            } else {
                ""
            }
        )
    };
    Ok(DiffWorkspaceResult {
        files,
        insertions: ins,
        deletions: del,
        diff,
        diff_sha256,
        truncated,
        summary,
    })
}

/// Restores paths to their baseline content.
///
/// # Errors
/// `INVALID_INPUT` (no paths, or a path the session did not change), `PATH_REJECTED`,
/// `POLICY_DENIED`, `WRITE_CONFLICT`, `IO_ERROR`.
pub fn revert(s: &Session, log: &mut CallLog, a: &RevertArgs) -> ToolResult<MutationResult> {
    if a.paths.is_empty() {
        return Err(ToolError::invalid(
            "paths is empty; name the files to restore (diff_workspace lists them)",
        ));
    }
    let baseline = Baseline::new(s.state_dir.as_deref(), &s.memory);
    let entries: BTreeMap<String, Entry> = baseline.entries()?;
    let expected: BTreeMap<String, String> = a
        .expected_sha256s
        .iter()
        .map(|(k, v)| Ok((LogicalPath::parse(k)?.to_string(), v.clone())))
        .collect::<ToolResult<_>>()?;
    let mut changes = Vec::new();
    for p in &a.paths {
        let lp = LogicalPath::parse(p)?;
        let key = lp.to_string();
        let entry = entries.get(&key).ok_or_else(|| {
            ToolError::invalid(format!(
                "'{key}' was not changed in this session; diff_workspace lists what was"
            ))
            .with_path(&key)
        })?;
        let w = writable_path(s, lp)?;
        let now = if w.exists() { Some(w.read(s)?) } else { None };
        if !w.blind {
            check_expected(
                s,
                &key,
                now.as_deref(),
                expected.get(&key).map(String::as_str),
                Guard::Content,
            )?;
        }
        let original = baseline.content(entry)?;
        let mut change = Change::new(w.target, key, now, original);
        change.blind = w.blind;
        changes.push(change);
    }
    commit(s, log, changes, a.dry_run.unwrap_or(false), Vec::new())
}
