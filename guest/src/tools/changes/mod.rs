//! `changes_since`: what changed in the visible tree since a token.
//!
//! A call without a token takes a snapshot of the tree ([`scan`]) and returns a token for
//! it. A call with a token takes a new snapshot, reusing the old one's hashes for files
//! whose metadata did not move, and returns the difference ([`snapshot::diff`]) and a token
//! for the new snapshot. A token is signed like a continuation cursor (the session's
//! [`crate::tools::cursor::CursorKey`]) and bound to the tool, the repository root, the policy and
//! the walk's arguments (`path`, `include_hidden`, `respect_ignore`); it names the
//! snapshot, which lives in the host's state directory ([`store`]), whole or as a delta
//! against a whole one ([`delta`]). The difference is paged: the pages after the first
//! compare the same two stored snapshots, so they never mix two states of the tree.

pub mod delta;
mod prune;
mod record;
pub mod scan;
pub mod snapshot;
pub mod store;
pub mod tree;
pub mod watched;

use serde::{Deserialize, Serialize};

use crate::api::{Change, ChangeKind, ChangesSinceArgs, ChangesSinceResult, Stop};
use crate::audit::CallLog;
use crate::error::{ToolError, ToolResult};
use crate::rules::policy::Policy;
use crate::rules::walk::WalkOptions;
use crate::tools::cursor::Binding;
use crate::tools::list::{root_id, start_dir};
use crate::tools::session::Session;
use snapshot::Snapshot;
use store::Store;

const TOOL: &str = "changes_since";

/// What a token binds besides the tool, root and policy.
#[derive(Serialize)]
struct Scope<'a> {
    path: &'a str,
    include_hidden: bool,
    respect_ignore: bool,
}

/// A token's payload: the snapshot's name, and the host watch's count of changes read
/// before the snapshot was taken (see `host-fs.tree-changes`), when a watch runs.
#[derive(Serialize, Deserialize)]
struct TokenAt {
    snap: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    changes: Option<u64>,
}

/// A continuation cursor's payload: the two snapshots compared and where the page ended.
#[derive(Serialize, Deserialize)]
struct PageAt {
    from: String,
    to: String,
    count: u64,
    last: String,
    /// The watch's count when `to` was taken (its token's), when a watch runs: each page's
    /// token names `to` at that count, never at a later one (changes made between the
    /// pages would then be taken as seen).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    changes: Option<u64>,
}

/// Reports what changed since `token`, or returns a token for the tree as it is.
///
/// # Errors
/// `INVALID_INPUT` (reason `token` for a token that was altered, forged, or made for
/// another repository, policy or scope; `token_expired` when its snapshot is no longer
/// kept or was altered; `cursor` for a bad cursor), `PATH_REJECTED`, `NOT_FOUND`,
/// `NOT_A_FILE`, `POLICY_DENIED`, `LIMIT_EXCEEDED` (more entries than one walk may visit),
/// `IO_ERROR` (the state directory cannot be written).
pub fn changes_since(
    s: &Session,
    log: &mut CallLog,
    a: &ChangesSinceArgs,
) -> ToolResult<ChangesSinceResult> {
    let start = start_dir(s, a.path.as_deref())?;
    let opts = WalkOptions {
        include_hidden: a.include_hidden.unwrap_or(false),
        respect_ignore: a.respect_ignore.unwrap_or(true),
        max_depth: usize::MAX,
        shard: None,
        // Each file's metadata from the listing the walk makes anyway.
        with_stat: true,
    };
    let scope = Scope {
        path: start.as_str(),
        include_hidden: opts.include_hidden,
        respect_ignore: opts.respect_ignore,
    };
    let ids = (root_id(s)?, s.policy.fingerprint());
    let token_binding = Binding::new(TOOL, &scope, "", ids.0, &ids.1);
    let page_binding = Binding::new(TOOL, a, "max_changes", ids.0, &ids.1);
    let store = Store::new(s.state_dir.as_deref(), &s.changes_memory, s.fs.services());
    log.paths_read.push(start.to_string());
    let from = match &a.token {
        None if a.cursor.is_some() => {
            return Err(ToolError::invalid(
                "a cursor continues the changes since a token: pass the same token with it",
            ))
        }
        None => None,
        Some(t) => Some(
            token_binding
                .decode_with::<TokenAt>(
                    &s.cursor_key,
                    t,
                    "token",
                    "call changes_since without a token for a new one",
                )
                .map_err(|mut e| {
                    if !store.persistent() {
                        // The likely cause: another instance made it, with its own key.
                        e.message.push_str(" (this host mounts no state directory, so a token lasts only as long as the component instance that made it)");
                    }
                    e
                })?,
        ),
    };
    // The watch's count, read before any look at the tree: when it is the token's, nothing
    // below the repository changed since the token's snapshot was taken.
    // (A file of that snapshot that is racily clean is read again all the same, as a whole
    // scan reads it.)
    let changes_now = s.fs.services().tree_changes();
    let unchanged = match &from {
        Some(t) if a.cursor.is_none() && changes_now.is_some() && t.changes == changes_now => {
            settled(s, &store, &t.snap)?
        }
        _ => false,
    };
    // The token's count, when the watch still counts exactly.
    let since = from
        .as_ref()
        .and_then(|t| t.changes)
        .filter(|_| changes_now.is_some());
    let from = from.map(|t| t.snap);
    // The time of a snapshot taken by a whole scan: before anything is listed (the walks
    // of `watched::since` may leave listings read ahead that the scan's walk is answered
    // with), so that no metadata it records is older.
    let began = scan::now_ns();
    // Every change, when the watch's stamps answered (see [`watched`]).
    let mut known = None;
    let scope_key = serde_json::to_string(&scope).unwrap_or_default();
    // Where the watch says which directories changed, only those are walked again.
    let fast = match (&from, &a.cursor, since) {
        (Some(name), None, Some(c)) if !unchanged => {
            watched::since(s, &store, (name, c), &scope_key, &start, &opts)?
        }
        _ => None,
    };
    // The count the new token names its snapshot at.
    let mut to_changes = changes_now;
    let (from, to, skip, hashed) = match (&from, &a.cursor, fast) {
        (Some(from), Some(c), _) => {
            let at: PageAt = page_binding.decode_with(
                &s.cursor_key,
                c,
                "cursor",
                "call again without a cursor",
            )?;
            if at.from != *from {
                return Err(ToolError::invalid("the cursor belongs to another token"));
            }
            to_changes = at.changes;
            (Some(from.clone()), at.to, Some((at.count, at.last)), 0)
        }
        (Some(from), None, _) if unchanged => (Some(from.clone()), from.clone(), None, 0),
        (Some(from), None, Some(found)) => {
            log.bytes_read += found.bytes;
            known = Some(found.changes);
            (Some(from.clone()), found.to, None, found.hashed)
        }
        _ => {
            let (to, found) = rescan(
                s,
                &store,
                (from.as_deref(), began),
                &start,
                &opts,
                &scope_key,
            )?;
            log.bytes_read += found.bytes;
            known = found.changes;
            (from, to, None, found.hashed)
        }
    };
    let token = token_binding.encode_with(
        &s.cursor_key,
        TokenAt {
            snap: to.clone(),
            changes: to_changes,
        },
    );
    let Some(from) = from else {
        let summary = format!(
            "token for the tree below '{}' as it is now; pass it as token to see what changes{}",
            if start.is_root() { "." } else { start.as_str() },
            if store.persistent() {
                ""
            } else {
                " (this host mounts no state directory: the token lasts as long as this component instance)"
            }
        );
        return Ok(ChangesSinceResult {
            changes: Vec::new(),
            token,
            created: 0,
            modified: 0,
            deleted: 0,
            rehashed: hashed,
            truncated: false,
            stopped_by: None,
            next_cursor: None,
            summary,
        });
    };
    let all = match known {
        Some(changes) => changes,
        None if from == to => Vec::new(),
        None => {
            let (old, new) = (store.load(&from)?, store.load(&to)?);
            snapshot::diff(&old.snapshot()?, &new.snapshot()?)
        }
    };
    let count = |k: ChangeKind| all.iter().filter(|c| c.change == k).count() as u32;
    let (created, modified, deleted) = (
        count(ChangeKind::Created),
        count(ChangeKind::Modified),
        count(ChangeKind::Deleted),
    );
    let before = match &skip {
        None => 0,
        Some((n, last)) => {
            let n = usize::try_from(*n).unwrap_or(usize::MAX);
            let matches = n > 0 && all.get(n - 1).is_some_and(|c| c.path == *last);
            if !matches {
                return Err(crate::tools::cursor::tree_changed());
            }
            n
        }
    };
    let limits = s.policy.limits();
    let max = Policy::clamp(
        a.max_changes,
        limits.max_find_results,
        limits.max_find_results,
    ) as usize;
    let changes: Vec<Change> = all.iter().skip(before).take(max).cloned().collect();
    let end = before + changes.len();
    let stopped_by = (end < all.len()).then(|| Stop::new("max_changes", max as u64));
    let next_cursor = stopped_by.as_ref().map(|_| {
        page_binding.encode_with(
            &s.cursor_key,
            PageAt {
                from: from.clone(),
                to: to.clone(),
                count: end as u64,
                last: changes.last().map(|c| c.path.clone()).unwrap_or_default(),
                changes: to_changes,
            },
        )
    });
    let mut summary =
        format!("{created} created, {modified} modified, {deleted} deleted since the token");
    if let Some(stop) = &stopped_by {
        summary.push_str(&stop.note(
            "more changes follow; pass next_cursor as cursor with the same token for the next page",
        ));
    }
    if before > 0 {
        summary.push_str(&format!("; this page follows {before} earlier"));
    }
    summary.push_str("; token is the tree as it is now");
    Ok(ChangesSinceResult {
        changes,
        token,
        created,
        modified,
        deleted,
        rehashed: hashed,
        truncated: stopped_by.is_some(),
        stopped_by,
        next_cursor,
        summary,
    })
}

/// Whether no file of the snapshot `name` is racily clean (see [`watched::racy`]), as the
/// session's copy or the store holds it.
///
/// # Errors
/// `INVALID_INPUT` (reason `token_expired`) when the store no longer holds it or it was
/// altered; `IO_ERROR` when the state directory cannot be read.
fn settled(s: &Session, store: &Store<'_>, name: &str) -> ToolResult<bool> {
    if let Some(settled) = watched::settled(s, name) {
        return Ok(settled);
    }
    let stored = store.load(name)?;
    Ok(watched::racy(&stored.snapshot()?).is_empty())
}

/// What a scan of the whole tree found besides the new snapshot's name.
struct Rescanned {
    /// What changed since the token's snapshot, when a token was given.
    changes: Option<Vec<Change>>,
    hashed: u32,
    bytes: u64,
}

/// Scans the whole tree below `start` against the token's snapshot `from` (when given),
/// taking the new snapshot at time `taken`; stores it (or keeps `from`'s when nothing
/// visible moved) and keeps it as the session's newest; returns its name.
fn rescan(
    s: &Session,
    store: &Store<'_>,
    (from, taken): (Option<&str>, u64),
    start: &crate::rules::path::LogicalPath,
    opts: &WalkOptions,
    scope_key: &str,
) -> ToolResult<(String, Rescanned)> {
    // The token's snapshot: the session's own, or read back from the store (meanwhile,
    // a host that reads listings ahead lists the tree).
    let kept = from.and_then(|n| watched::kept(s, n));
    let first = scan::ahead(s, start, opts, from.is_some() && kept.is_none(), taken);
    let stored = match (from, &kept) {
        (Some(name), None) => Some(store.load(name)?),
        _ => None,
    };
    let (old, memo, chain) = match (&kept, &stored) {
        (Some(held), _) => {
            let files = held
                .snap
                .files
                .iter()
                .map(|(p, r)| (p.as_ref(), *r))
                .collect();
            let view = Snapshot {
                taken: held.snap.taken,
                files,
            };
            (Some(view), held.memo.clone(), held.chain.clone())
        }
        (None, Some(st)) => (
            Some(st.snapshot()?),
            std::sync::Arc::new(st.memo().to_vec()),
            st.chain(),
        ),
        (None, None) => Default::default(),
    };
    let (new, mut stats) = scan::scan_from(
        s,
        first,
        opts,
        old.as_ref(),
        old.as_ref().map(|_| &memo[..]),
    )?;
    let (hashed, bytes) = (stats.hashed, stats.bytes);
    let found = |changes| Rescanned {
        changes,
        hashed,
        bytes,
    };
    // Nothing visible moved and nothing was racy: the old snapshot still holds (and the
    // same token comes back). Unless its memo was refused whole (a token kept across an
    // upgrade): each later call would judge every entry again, so a new snapshot is
    // stored with this walk's memo.
    if let (Some(old), Some(name)) = (&old, from) {
        if stats.hashed == 0 && stats.same_as_old && !stats.memo_refused {
            // A snapshot read back is kept as read, its racily clean files listed now
            // while its records are at hand; the session's own is renewed.
            let racy = match &stored {
                Some(_) => watched::racy(old),
                None => Vec::new(),
            };
            match stored {
                Some(stored) => {
                    let r = watched::ReadBack {
                        stored,
                        racy,
                        memo,
                        chain,
                    };
                    watched::keep_read_back(s, r, scope_key, stats.tree);
                }
                None => {
                    let k = watched::Kept {
                        name,
                        replaces: None,
                        snap: old,
                        memo,
                        chain,
                    };
                    watched::keep(s, k, scope_key, stats.tree);
                }
            }
            return Ok((name.to_string(), found(Some(Vec::new()))));
        }
    }
    // A delta against the old snapshot's base when the walk's memo is the base's (a
    // delta keeps its base's), whole otherwise (and a new chain starts).
    let (mut chain, memo) = match &old {
        Some(old) if *memo == stats.memo => {
            let mut chain = chain;
            let moved = delta::between(&old.files, &new.files);
            chain.add(moved.into_iter().map(|(p, r)| (std::sync::Arc::from(p), r)));
            (chain, memo)
        }
        _ => (
            delta::Chain::default(),
            std::sync::Arc::new(std::mem::take(&mut stats.memo)),
        ),
    };
    let to = chain.store(store, &new, &memo)?;
    let changes = old.as_ref().map(|old| snapshot::diff(old, &new));
    let k = watched::Kept {
        name: &to,
        replaces: from,
        snap: &new,
        memo,
        chain,
    };
    watched::keep(s, k, scope_key, stats.tree);
    Ok((to, found(changes)))
}

#[cfg(test)]
mod delta_tests;
#[cfg(test)]
mod memo_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod watched_tests;
