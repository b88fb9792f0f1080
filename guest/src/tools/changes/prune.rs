//! Pruning the state directory's snapshots while other processes of the same host use it.
//!
//! Several processes may serve one repository with one state directory (a CLI call beside
//! an MCP server), and WASI offers no lock. Two races matter:
//!
//! - a process stores a delta against a whole snapshot just as another one's prune, which
//!   listed the directory before that delta existed, removes the whole one;
//! - a process stores a snapshot whose bytes are already there (same name), so its token
//!   names a file another prune already counts among the old ones.
//!
//! So a prune does not remove at once: it renames each snapshot it condemns to
//! `<name>.<nonce>.gone` (not a snapshot name, so never read as one; the nonce makes each
//! condemnation its own file), then lists the directory again and puts back every
//! condemned file that a delta now names as its base (or a delta going back names), or
//! that is not older than the oldest snapshot kept (it was stored again meanwhile); only
//! the rest is removed. Putting back links the file under its name, so a copy stored
//! there meanwhile stays (a file system without links has the file renamed back). The
//! writer's half is in [`super::delta::Chain::store`] and [`super::store::Store::put`]:
//! after writing a delta it checks that the base is there (else it stores the whole
//! snapshot), a snapshot already there has its time set to now (and is written again when
//! it is gone after that), and every snapshot's time is set by one clock before it
//! appears under its name, so a new one never looks old. A read that
//! finds a snapshot missing settles the condemned files first and reads again, so a prune
//! stopped half way hides nothing it should have kept.
//!
//! Why that suffices: if the writer saw the base after writing its delta, the base can
//! only be taken away by a rename made later, into a condemned file no settle removes
//! unless its second listing, made after it saw that file, lacks the delta. A settle
//! removes only the condemned file it looked at: one condemned again under another nonce
//! is another settle's to decide. Times that tie (a file system with coarse times) keep
//! both. What it cannot see: a clock stepped back makes new snapshots look old (they go
//! first, and their tokens expire early).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::delta;
use super::store::KEEP;
use file_tools_contract::{condemned_snapshot, is_state_temp_name, CONDEMNED_SUFFIX};

/// Removes all but the newest [`KEEP`] snapshots and the bases of the deltas among them in
/// `dir`; `newest`, just stored, counts among the newest. Best effort: a failure leaves
/// more snapshots than needed, never fewer.
pub(super) fn prune(dir: &Path, newest: &str) {
    condemn(dir, newest);
    settle(dir);
    sweep_temps(dir);
}

/// Removes the temporary files a write killed half way left in `dir` (an hour old: a
/// write under way is younger).
fn sweep_temps(dir: &Path) {
    let hour_ago = SystemTime::now().checked_sub(std::time::Duration::from_secs(3600));
    let (Some(hour_ago), Ok(entries)) = (hour_ago, std::fs::read_dir(dir)) else {
        return;
    };
    for e in entries.flatten() {
        // `write_atomic`'s temporary name.
        let is_temp = e.file_name().to_str().is_some_and(is_state_temp_name);
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|t| t < hour_ago);
        if is_temp && old {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// The snapshots in `dir` with their times, oldest first.
fn snapshots(dir: &Path) -> Vec<(SystemTime, String)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut snaps: Vec<(SystemTime, String)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            crate::fs::hash::is_sha256(&name).then_some(())?;
            Some((e.metadata().ok()?.modified().ok()?, name))
        })
        .collect();
    snaps.sort();
    snaps
}

/// The name of the base of the delta stored at `path`; `None` for a whole snapshot or a
/// file that cannot be read.
fn base_at(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut head = [0u8; 40];
    std::fs::File::open(path).ok()?.read_exact(&mut head).ok()?;
    delta::base_of(&head)
}

/// Renames all but the newest [`KEEP`] snapshots (and the bases of the deltas among them)
/// to their condemned names.
pub(super) fn condemn(dir: &Path, newest: &str) {
    let mut snaps = snapshots(dir);
    snaps.retain(|(_, n)| n != newest);
    // The one just kept counts among the newest without being looked at.
    if snaps.len() < KEEP {
        return;
    }
    let old = snaps.len() + 1 - KEEP;
    let kept = snaps[old..].iter().map(|(_, n)| n.as_str());
    let bases: Vec<String> = kept
        .chain([newest])
        .filter_map(|n| base_at(&dir.join(n)))
        .collect();
    // A snapshot as new as the oldest kept one is kept too: on a file system with coarse
    // times, their order is not known.
    let oldest_kept = snaps[old].0;
    for (time, name) in &snaps[..old] {
        if !bases.contains(name) && *time < oldest_kept {
            let _ = std::fs::rename(dir.join(name), condemned_path(dir, name));
        }
    }
}

/// Settles every condemned file in `dir` (this prune's, another's, a crashed one's): back
/// under its name when a delta listed after it was seen (or a delta going back) names it
/// as its base or it is not older than the oldest snapshot kept, removed otherwise.
pub(super) fn settle(dir: &Path) {
    carry_out(dir, verdicts(dir));
}

/// A condemned file, its snapshot's name, and whether it goes back under that name.
type Verdict = (PathBuf, String, bool);

/// What [`settle`] does with each condemned file in `dir`.
pub(super) fn verdicts(dir: &Path) -> Vec<Verdict> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let condemned: Vec<(SystemTime, String, PathBuf)> = entries
        .flatten()
        .filter_map(|e| {
            let file = e.file_name().into_string().ok()?;
            let name = condemned_snapshot(&file)?.to_string();
            Some((e.metadata().ok()?.modified().ok()?, name, e.path()))
        })
        .collect();
    if condemned.is_empty() {
        return Vec::new();
    }
    // Listed after the condemned files were seen: a delta written before one of them was
    // renamed is in this listing.
    let snaps = snapshots(dir);
    let bases: Vec<String> = snaps
        .iter()
        .filter_map(|(_, n)| base_at(&dir.join(n)))
        .collect();
    let oldest_kept = snaps.iter().rev().take(KEEP).map(|(t, _)| *t).min();
    let mut verdicts: Vec<Verdict> = condemned
        .into_iter()
        .map(|(time, name, file)| {
            let wanted = bases.contains(&name) || oldest_kept.is_some_and(|o| time >= o);
            (file, name, wanted)
        })
        .collect();
    // A delta going back takes its base with it (a base is whole: one round suffices).
    let going_back: Vec<String> = verdicts
        .iter()
        .filter(|(_, _, wanted)| *wanted)
        .filter_map(|(file, _, _)| base_at(file))
        .collect();
    for (_, name, wanted) in &mut verdicts {
        *wanted |= going_back.contains(name);
    }
    verdicts
}

/// Puts back or removes each condemned file as judged, that very file only (condemned
/// again meanwhile, a snapshot is another file, judged by another settle).
pub(super) fn carry_out(dir: &Path, verdicts: Vec<Verdict>) {
    for (file, name, wanted) in verdicts {
        // Linked, not renamed: a copy stored under the name meanwhile stays as it is (a
        // file system without links has it renamed back).
        if wanted {
            if let Err(e) = std::fs::hard_link(&file, dir.join(&name)) {
                if e.kind() != std::io::ErrorKind::AlreadyExists {
                    let _ = std::fs::rename(&file, dir.join(&name));
                    continue;
                }
            }
        }
        let _ = std::fs::remove_file(&file);
    }
}

/// A new condemned name for the snapshot `name` in `dir`: `<name>.<16 hex>.gone`, unique
/// to this condemnation.
pub(super) fn condemned_path(dir: &Path, name: &str) -> PathBuf {
    let nonce = crate::rules::path::temp_suffix();
    dir.join(format!("{name}.{nonce}{CONDEMNED_SUFFIX}"))
}

#[cfg(test)]
#[path = "prune_tests.rs"]
mod tests;
