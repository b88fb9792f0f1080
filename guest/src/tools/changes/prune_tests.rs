//! Pruning a state directory that other processes use at the same time ([`super`]): each
//! race is played step by step, beside a control where nothing races.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use super::super::delta::{base_of, Chain};
use super::super::delta_tests::{rec, snap, whole_then_one_gone};
use super::super::snapshot::Shown;
use super::super::store::{Memory, Store, KEEP};
use super::{carry_out, condemn, condemned_path, prune, settle, verdicts};
use crate::fs::hash::sha256_hex;
use crate::rules::services::{NoServices, Services};

/// A state directory holding `count` whole snapshots (see [`stored_wholes`]), its
/// `changes/` directory and their names.
fn state_with_wholes(count: usize) -> (tempfile::TempDir, std::path::PathBuf, Vec<String>) {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("changes");
    let names = stored_wholes(&dir, count);
    (t, dir, names)
}

/// `count` whole snapshots written into `dir` (as a store writes them), each a second older
/// than the next (so their order does not hang on the clock's grain); oldest first.
fn stored_wholes(dir: &Path, count: usize) -> Vec<String> {
    std::fs::create_dir_all(dir).unwrap();
    let now = SystemTime::now();
    (0..count)
        .map(|i| {
            let bytes = format!("whole {i}\n").into_bytes();
            let name = sha256_hex(&bytes);
            std::fs::write(dir.join(&name), &bytes).unwrap();
            set_time(
                &dir.join(&name),
                now - Duration::from_secs((count - i) as u64 + 10),
            );
            name
        })
        .collect()
}

fn set_time(path: &Path, at: SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(at)
        .unwrap();
}

/// A delta's bytes naming `base`, as the store keeps them (the entries do not matter here).
fn delta_on(base: &str, tag: u8) -> Vec<u8> {
    let mut out = b"ftsnapd\n".to_vec();
    out.extend_from_slice(&crate::fs::hash::unhex32(base).unwrap());
    out.extend_from_slice(&u64::from(tag).to_le_bytes());
    out
}

/// The file of `name` condemned under `nonce`.
fn condemned(dir: &Path, name: &str, nonce: &str) -> std::path::PathBuf {
    dir.join(format!("{name}.{nonce}.gone"))
}

/// The one condemned file of `name` in `dir`.
fn condemned_file(dir: &Path, name: &str) -> std::path::PathBuf {
    let found: Vec<String> = names_in(dir)
        .into_iter()
        .filter(|n| n.starts_with(&format!("{name}.")) && n.ends_with(".gone"))
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    dir.join(&found[0])
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().into_string().unwrap())
        .collect();
    out.sort();
    out
}

#[test]
fn a_delta_written_while_a_prune_runs_keeps_its_base() {
    for race in [false, true] {
        let (_t, dir, names) = state_with_wholes(KEEP + 1);
        let oldest = &names[0];
        // The prune lists and condemns the oldest, which no delta names yet...
        condemn(&dir, &names[KEEP]);
        assert!(!dir.join(oldest).exists(), "condemned: renamed away");
        // ...while another process writes a delta against it (it saw the base before).
        if race {
            let d = delta_on(oldest, 1);
            std::fs::write(dir.join(sha256_hex(&d)), &d).unwrap();
        }
        settle(&dir);
        assert_eq!(dir.join(oldest).is_file(), race, "{:?}", names_in(&dir));
        assert!(
            names_in(&dir).iter().all(|n| !n.ends_with(".gone")),
            "nothing left condemned: {:?}",
            names_in(&dir)
        );
        if race {
            assert_eq!(std::fs::read(dir.join(oldest)).unwrap(), b"whole 0\n");
        }
    }
}

/// A store whose hashing of a delta first removes the delta's base, as another process's
/// prune may between the writer's look at the base and its write.
#[derive(Debug)]
struct PrunedMeanwhile {
    dir: std::path::PathBuf,
    on: bool,
}

impl Services for PrunedMeanwhile {
    fn sha256_hex(&self, data: &[u8]) -> String {
        if let Some(base) = base_of(data).filter(|_| self.on) {
            let _ = std::fs::remove_file(self.dir.join(base));
        }
        sha256_hex(data)
    }
}

#[test]
fn a_base_pruned_while_its_delta_is_written_gives_a_whole_snapshot() {
    for on in [false, true] {
        let t = tempfile::tempdir().unwrap();
        let memory = Memory::default();
        let dir = t.path().join("changes");
        let services = PrunedMeanwhile {
            dir: dir.clone(),
            on,
        };
        let store = Store::new(Some(t.path()), &memory, &services);
        let (chain, base, name) = whole_then_one_gone(&store);
        let stored = store.load(&name).expect("the token's snapshot reads back");
        assert_eq!(stored.snapshot().unwrap().files.len(), 15);
        // The control stores a delta; with its base gone, the whole snapshot is stored
        // and starts a new chain.
        assert_eq!(chain.entries.is_empty(), on);
        assert_eq!(chain.base != base, on);
        // The delta that names the lost base is not left to take a kept place.
        let deltas = names_in(&dir)
            .iter()
            .filter(|n| base_of(&std::fs::read(dir.join(n)).unwrap()).is_some())
            .count();
        assert_eq!(deltas, usize::from(!on), "{:?}", names_in(&dir));
    }
}

#[test]
fn a_snapshot_stored_again_is_not_pruned_as_an_old_one() {
    for again in [false, true] {
        let (t, dir, names) = state_with_wholes(KEEP);
        let memory = Memory::default();
        let store = Store::new(Some(t.path()), &memory, &NoServices);
        // Another process stores the oldest's bytes again: its token names that file.
        if again {
            assert_eq!(
                store.put(Arc::new(b"whole 0\n".to_vec())).unwrap(),
                names[0]
            );
        }
        // A third process's prune, after one more snapshot.
        let newest = sha256_hex(b"newest\n");
        std::fs::write(dir.join(&newest), b"newest\n").unwrap();
        prune(&dir, &newest);
        assert_eq!(dir.join(&names[0]).is_file(), again, "{:?}", names_in(&dir));
        assert!(dir.join(&names[1]).is_file() != again);
    }
}

#[test]
fn a_crashed_prunes_condemned_files_are_settled_by_the_next() {
    let (t, dir, names) = state_with_wholes(3);
    let memory = Memory::default();
    let store = Store::new(Some(t.path()), &memory, &NoServices);
    // Left renamed by a prune that stopped there: one a delta names, one nothing names.
    for n in &names[..2] {
        std::fs::rename(dir.join(n), condemned(&dir, n, "0123456789abcdef")).unwrap();
    }
    let d = delta_on(&names[0], 1);
    let d_name = store.put(Arc::new(d)).unwrap();
    assert!(store.load(&d_name).is_ok(), "its base is back");
    assert!(!dir.join(&names[1]).exists());
    assert!(!condemned(&dir, &names[1], "0123456789abcdef").exists());
    assert!(dir.join(&names[2]).is_file());
}

#[test]
fn a_settle_removes_only_the_condemned_file_it_looked_at() {
    for stale_first in [false, true] {
        let (_t, dir, names) = state_with_wholes(KEEP + 1);
        let oldest = &names[0];
        // A first prune condemns the oldest and judges it while no delta names it.
        condemn(&dir, &names[KEEP]);
        let first = condemned_file(&dir, oldest);
        let judged = verdicts(&dir);
        assert_eq!(judged, vec![(first.clone(), oldest.clone(), false)]);
        // A writer's delta on it appears, the writer's own settle puts it back, and a
        // third process whose listing predates the delta condemns it again.
        let d = delta_on(oldest, 1);
        std::fs::write(dir.join(sha256_hex(&d)), &d).unwrap();
        settle(&dir);
        assert!(dir.join(oldest).is_file() && !first.exists());
        std::fs::rename(dir.join(oldest), condemned_path(&dir, oldest)).unwrap();
        // The first prune carries out its stale verdict; the third settles after it (or,
        // the control, before it).
        if stale_first {
            carry_out(&dir, judged);
            settle(&dir);
        } else {
            settle(&dir);
            carry_out(&dir, judged);
        }
        assert!(dir.join(oldest).is_file(), "{:?}", names_in(&dir));
    }
}

#[test]
fn a_read_halfway_through_a_prune_finds_what_the_prune_keeps() {
    for named in [true, false] {
        let (t, dir, names) = state_with_wholes(KEEP + 1);
        let memory = Memory::default();
        let store = Store::new(Some(t.path()), &memory, &NoServices);
        let oldest = &names[0];
        condemn(&dir, &names[KEEP]);
        // The prune stopped before it settled: the oldest is under its condemned name.
        assert!(!dir.join(oldest).exists());
        if named {
            let d = delta_on(oldest, 1);
            let d_name = sha256_hex(&d);
            std::fs::write(dir.join(&d_name), &d).unwrap();
            let stored = store.load(&d_name).expect("the base is found again");
            assert_eq!(&stored.chain().base, oldest);
            assert!(dir.join(oldest).is_file());
        } else {
            // The control: condemned and named by no delta, it is gone for good.
            let e = store.load(oldest).map(|_| ()).unwrap_err();
            assert_eq!(e.reason.as_deref(), Some("token_expired"));
            assert!(names_in(&dir).iter().all(|n| !n.ends_with(".gone")));
        }
    }
}

#[test]
fn putting_a_snapshot_back_keeps_a_copy_stored_meanwhile() {
    let (_t, dir, names) = state_with_wholes(KEEP + 1);
    let oldest = &names[0];
    condemn(&dir, &names[KEEP]);
    let d = delta_on(oldest, 1);
    std::fs::write(dir.join(sha256_hex(&d)), &d).unwrap();
    // Stored again meanwhile (its time is now), while the condemned copy keeps the old.
    std::fs::write(dir.join(oldest), b"whole 0\n").unwrap();
    let fresh = std::fs::metadata(dir.join(oldest))
        .unwrap()
        .modified()
        .unwrap();
    settle(&dir);
    let now = std::fs::metadata(dir.join(oldest))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(now, fresh, "the copy stored meanwhile keeps its time");
    assert!(names_in(&dir).iter().all(|n| !n.ends_with(".gone")));
}

#[test]
fn a_delta_put_back_takes_its_base_with_it() {
    for delta_new in [true, false] {
        let (_t, dir, names) = state_with_wholes(KEEP + 1);
        let base = &names[0];
        let d = delta_on(base, 1);
        let d_name = sha256_hex(&d);
        std::fs::write(dir.join(&d_name), &d).unwrap();
        if !delta_new {
            set_time(
                &dir.join(&d_name),
                SystemTime::now() - Duration::from_secs(3600),
            );
        }
        // A prune whose listing took the new delta for an old one condemned both.
        std::fs::rename(dir.join(base), condemned_path(&dir, base)).unwrap();
        std::fs::rename(dir.join(&d_name), condemned_path(&dir, &d_name)).unwrap();
        settle(&dir);
        assert_eq!(dir.join(&d_name).is_file(), delta_new);
        assert_eq!(dir.join(base).is_file(), delta_new, "{:?}", names_in(&dir));
        assert!(names_in(&dir).iter().all(|n| !n.ends_with(".gone")));
    }
}

#[test]
fn snapshots_whose_times_tie_with_the_oldest_kept_stay() {
    for tie in [true, false] {
        let (_t, dir, names) = state_with_wholes(KEEP + 1);
        if tie {
            let at = std::fs::metadata(dir.join(&names[1]))
                .unwrap()
                .modified()
                .unwrap();
            set_time(&dir.join(&names[0]), at);
        }
        prune(&dir, &names[KEEP]);
        assert_eq!(dir.join(&names[0]).is_file(), tie);
        assert!(dir.join(&names[1]).is_file());
    }
}

#[test]
fn a_prune_sweeps_temporary_files_a_killed_write_left() {
    let (_t, dir, names) = state_with_wholes(2);
    let (old, young) = (
        dir.join(".0123456789abcdef.tmp"),
        dir.join(".fedcba9876543210.tmp"),
    );
    std::fs::write(&old, b"half").unwrap();
    std::fs::write(&young, b"under way").unwrap();
    set_time(&old, SystemTime::now() - Duration::from_secs(7200));
    prune(&dir, &names[1]);
    assert!(!old.exists());
    assert!(young.exists(), "a write under way keeps its file");
}

/// A session whose chain of deltas stays on one base while two others store snapshots
/// into the same state directory at full speed (threads here, processes in use: the store
/// shares nothing else). The session stores its next delta just as its previous one falls
/// out of the newest [`KEEP`], when only the new delta keeps the base: every token it is
/// given must read back until [`KEEP`] newer snapshots were stored after it.
#[test]
fn a_session_storing_beside_busy_writers_loses_no_token_it_was_given() {
    const ROUNDS: u64 = 150;
    let t = tempfile::tempdir().unwrap();
    let stored = Arc::new(AtomicU64::new(0));
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let busy: Vec<_> = (0..2)
        .map(|w| {
            let (state, stored, done) = (t.path().to_path_buf(), stored.clone(), done.clone());
            std::thread::spawn(move || {
                let memory = Memory::default();
                let store = Store::new(Some(&state), &memory, &NoServices);
                let mut i = 0u64;
                while !done.load(Ordering::SeqCst) {
                    i += 1;
                    store
                        .put(Arc::new(format!("writer {w}, {i}\n").into_bytes()))
                        .unwrap();
                    stored.fetch_add(1, Ordering::SeqCst);
                }
            })
        })
        .collect();
    let memory = Memory::default();
    let store = Store::new(Some(t.path()), &memory, &NoServices);
    let names: Vec<String> = (0..32).map(|i| format!("f{i:02}")).collect();
    let mut files: Vec<(&str, u64)> = names.iter().map(|n| (n.as_str(), 1)).collect();
    let mut chain = Chain::default();
    let mut failures = Vec::new();
    let mut deltas = 0;
    for round in 0..ROUNDS {
        let last = stored.load(Ordering::SeqCst);
        let waiting = std::time::Instant::now();
        while stored.load(Ordering::SeqCst) < last + KEEP as u64 - 1 {
            assert!(
                waiting.elapsed() < Duration::from_secs(60),
                "the writers stopped"
            );
            // Not a busy spin: the writers need the cores.
            std::thread::sleep(Duration::from_micros(50));
        }
        files[0].1 = round + 2;
        chain.add([(Arc::from("f00"), Some(rec(round + 2, Shown::Content)))]);
        let before = stored.load(Ordering::SeqCst);
        let name = chain.store(&store, &snap(round, &files), b"").unwrap();
        deltas += usize::from(!chain.entries.is_empty());
        if let Err(e) = store.load(&name) {
            let newer = stored.load(Ordering::SeqCst) - before;
            // Up to two of the writers' snapshots may be written and not yet counted.
            if newer + 2 < KEEP as u64 {
                failures.push(format!("round {round}, {newer} newer: {}", e.message));
            }
        }
    }
    done.store(true, Ordering::SeqCst);
    for th in busy {
        th.join().unwrap();
    }
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(
        deltas > 0,
        "the session stored deltas ({deltas} of {ROUNDS})"
    );
    let dir = t.path().join("changes");
    assert!(names_in(&dir).len() <= 2 * KEEP, "{:?}", names_in(&dir));
}
