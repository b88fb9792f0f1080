//! Whether the repository's file system folds case in names, found by looking at the root:
//! the component's granting rules (allow lists, exemptions) compare folded names only where
//! this says they fold; its guarding rules always do (see the guest's `fold` module).

use std::collections::HashSet;
use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// How many root entries the probe looks at before it gives up.
const TRIES: usize = 64;

/// How long a directory must have been left alone to prove that names fold.
const QUIET: std::time::Duration = std::time::Duration::from_secs(1);

/// `Some(true)` when the root opens one of its directories under a case-swapped spelling,
/// `Some(false)` when that spelling opens nothing, `None` when the root has no directory to
/// try (none whose name has an ASCII letter) or the directory moved while it was looked at.
///
/// A concurrent process cannot make a case-sensitive root look folding by a hard link:
/// only directories are tried, and a directory has one name. Nor by renames: one rename
/// between the looks is caught by looking at the original name again and by the listing,
/// which must not hold the swapped spelling as an entry of its own; a rename there and
/// back again between the looks is caught by the directory's change time, which every
/// rename sets to the present and nobody can set back, so a directory changed within the
/// last [`QUIET`] or between the looks is not taken as proof that names fold.
pub(crate) fn folds_case(root: &Path) -> Option<bool> {
    let listing: Vec<OsString> = std::fs::read_dir(root)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.file_name()))
        .collect();
    let names: HashSet<&OsString> = listing.iter().collect();
    for name in listing.iter().take(TRIES) {
        let Some(text) = name.to_str() else { continue };
        let swapped: String = text
            .chars()
            .map(|c| {
                if c.is_ascii_lowercase() {
                    c.to_ascii_uppercase()
                } else {
                    c.to_ascii_lowercase()
                }
            })
            .collect();
        if swapped == text || names.contains(&OsString::from(&swapped)) {
            continue;
        }
        let Ok(before) = std::fs::symlink_metadata(root.join(name)) else {
            continue;
        };
        if !before.is_dir() {
            continue;
        }
        return match std::fs::symlink_metadata(root.join(&swapped)) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(false),
            Err(_) => continue,
            Ok(other) => {
                let again = std::fs::symlink_metadata(root.join(name)).ok()?;
                let same =
                    |m: &std::fs::Metadata| m.dev() == before.dev() && m.ino() == before.ino();
                if !same(&again) {
                    return None;
                }
                if !same(&other) {
                    return Some(false);
                }
                let changed = |m: &std::fs::Metadata| (m.ctime(), m.ctime_nsec());
                if changed(&again) != changed(&before) || !quiet(&again) {
                    continue;
                }
                Some(true)
            }
        };
    }
    None
}

/// Whether `m`'s change time is at least [`QUIET`] old.
fn quiet(m: &std::fs::Metadata) -> bool {
    let Ok(now) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) else {
        return false;
    };
    let changed = std::time::Duration::new(
        u64::try_from(m.ctime()).unwrap_or(u64::MAX),
        u32::try_from(m.ctime_nsec()).unwrap_or(0),
    );
    now.checked_sub(changed).is_some_and(|age| age >= QUIET)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_sensitive_root_is_found_sensitive() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir(t.path().join("src")).unwrap();
        assert_eq!(folds_case(t.path()), Some(false));
    }

    #[test]
    fn a_root_with_no_directory_to_try_is_unknown() {
        let t = tempfile::tempdir().unwrap();
        assert_eq!(folds_case(t.path()), None);
        std::fs::write(t.path().join("a.txt"), "x").unwrap();
        // Files are not tried: a hard link could give a file two spellings.
        std::fs::hard_link(t.path().join("a.txt"), t.path().join("A.TXT")).unwrap();
        assert_eq!(folds_case(t.path()), None);
    }

    #[test]
    fn both_spellings_as_entries_of_their_own_are_skipped() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir(t.path().join("Docs")).unwrap();
        std::fs::create_dir(t.path().join("dOCS")).unwrap();
        assert_eq!(folds_case(t.path()), None);
        std::fs::create_dir(t.path().join("lib")).unwrap();
        assert_eq!(folds_case(t.path()), Some(false));
    }

    #[test]
    fn renaming_a_directory_to_its_other_spelling_and_back_never_makes_a_root_look_folding() {
        // A second process renames `docs` to `DOCS` and back as fast as it can while the
        // probe looks; on this case-sensitive file system each look that lands between
        // the two renames sees one directory under both spellings.
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir(t.path().join("docs")).unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flipper = {
            let (root, stop) = (t.path().to_owned(), stop.clone());
            std::thread::spawn(move || {
                let mut flips = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let _ = std::fs::rename(root.join("docs"), root.join("DOCS"));
                    let _ = std::fs::rename(root.join("DOCS"), root.join("docs"));
                    flips += 1;
                }
                flips
            })
        };
        let mut answers = std::collections::HashMap::new();
        for _ in 0..100_000 {
            *answers.entry(folds_case(t.path())).or_insert(0u32) += 1;
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let flips = flipper.join().unwrap();
        assert!(flips > 100, "the flipper barely ran: {flips}");
        assert_eq!(answers.get(&Some(true)), None, "{answers:?}");
        // Positive control: the probe did answer while the flipper ran.
        assert!(
            answers.get(&Some(false)).copied().unwrap_or(0) > 0,
            "{answers:?}"
        );
    }
}
