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
//! `<name>.gone` (not a snapshot name, so never read as one), then lists the directory
//! again and renames back every condemned file that a delta now names as its base, or
//! that is newer than the oldest snapshot kept (it was stored again meanwhile). Only the
//! rest is removed. The writer's half is in [`super::delta::Chain::store`] and
//! [`super::store::Store::put`]: after writing a delta it checks that the base is there
//! (else it stores the whole snapshot), and a snapshot already there has its time set to
//! now (or is written again when it is gone).
//!
//! Why that suffices: if the writer saw the base after writing its delta, any prune that
//! condemns the base renames it later, so its second listing (later still) holds the
//! delta and renames the base back. A `.gone` file a crashed prune left is settled the
//! same way by the next prune, from a listing made after it was seen.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::delta;
use super::store::KEEP;

/// The suffix of a condemned snapshot.
const GONE: &str = ".gone";

/// Removes all but the newest [`KEEP`] snapshots and the bases of the deltas among them in
/// `dir`; `newest`, just stored, counts among the newest. Best effort: a failure leaves
/// more snapshots than needed, never fewer.
pub(super) fn prune(dir: &Path, newest: &str) {
    condemn(dir, newest);
    settle(dir);
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
    for (_, name) in &snaps[..old] {
        if !bases.contains(name) {
            let _ = std::fs::rename(dir.join(name), gone(dir, name));
        }
    }
}

/// Settles every condemned file in `dir` (this prune's, another's, a crashed one's): back
/// under its name when a delta listed after it was seen names it as its base or it is
/// newer than the oldest snapshot kept, removed otherwise.
pub(super) fn settle(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let condemned: Vec<(SystemTime, String)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let name = name.strip_suffix(GONE)?;
            crate::fs::hash::is_sha256(name).then_some(())?;
            Some((e.metadata().ok()?.modified().ok()?, name.to_string()))
        })
        .collect();
    if condemned.is_empty() {
        return;
    }
    // Listed after the condemned files were seen: a delta written before one of them was
    // renamed is in this listing.
    let snaps = snapshots(dir);
    let bases: Vec<String> = snaps
        .iter()
        .filter_map(|(_, n)| base_at(&dir.join(n)))
        .collect();
    let oldest_kept = snaps.iter().rev().take(KEEP).map(|(t, _)| *t).min();
    for (time, name) in condemned {
        let wanted = bases.contains(&name) || oldest_kept.is_some_and(|o| time > o);
        if wanted {
            let _ = std::fs::rename(gone(dir, &name), dir.join(&name));
        } else {
            let _ = std::fs::remove_file(gone(dir, &name));
        }
    }
}

fn gone(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}{GONE}"))
}

#[cfg(test)]
#[path = "prune_tests.rs"]
mod tests;
