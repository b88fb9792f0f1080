//! Snapshots stored as deltas ([`super::delta`]): what one stands for, how the store keeps
//! and checks it, and tokens naming one read back by a session that never held it.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::sync::Arc;

use proptest::prelude::*;

use super::delta::{apply, base_of, between, Chain, Delta};
use super::snapshot::{Rec, Sha256, Shown, Snapshot};
use super::store::{Memory, Store, KEEP};
use super::watched_tests::{age, answered, call, session, write, Pair};
use crate::fs::hash::sha256_hex;
use crate::rules::services::NoServices;

pub(super) fn rec(size: u64, shown: Shown) -> Rec {
    Rec {
        size,
        mtime: Some(size * 7),
        ctime: None,
        inode: Some(size + 1),
        shown,
        sha256: match shown {
            Shown::Content => Sha256::parse(&sha256_hex(&[size as u8])),
            _ => None,
        },
    }
}

pub(super) fn snap(taken: u64, files: &[(&str, u64)]) -> Snapshot<String> {
    Snapshot {
        taken,
        files: files
            .iter()
            .map(|(p, n)| (p.to_string(), rec(*n, Shown::Content)))
            .collect(),
    }
}

/// Sixteen files stored whole, then the same without the first through a chain: the
/// chain, the whole snapshot's name and the second's (a delta, unless the store lost the
/// base meanwhile).
pub(super) fn whole_then_one_gone(store: &Store<'_>) -> (Chain, String, String) {
    let names: Vec<String> = (0..16).map(|i| format!("f{i:02}")).collect();
    let files: Vec<(&str, u64)> = names.iter().map(|n| (n.as_str(), 1)).collect();
    let mut chain = Chain::default();
    let base = chain.store(store, &snap(1, &files), b"").unwrap();
    chain.add([(Arc::from("f00"), None)]);
    let name = chain.store(store, &snap(2, &files[1..]), b"").unwrap();
    (chain, base, name)
}

/// The names of the files in a store's directory, with whether each is a delta.
fn stored(dir: &std::path::Path) -> Vec<(String, bool)> {
    let mut out: Vec<(String, bool)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            let bytes = std::fs::read(e.path()).unwrap();
            (
                e.file_name().into_string().unwrap(),
                base_of(&bytes).is_some(),
            )
        })
        .collect();
    out.sort();
    out
}

proptest! {
    /// The entries between two snapshots turn the first into the second.
    #[test]
    fn the_entries_between_two_snapshots_turn_one_into_the_other(
        old in proptest::collection::btree_map("[ab]{1,3}(/[ab]{1,2})?", 0u64..4, 0..12),
        new in proptest::collection::btree_map("[ab]{1,3}(/[ab]{1,2})?", 0u64..4, 0..12),
    ) {
        let recs = |m: &BTreeMap<String, u64>| -> Vec<(String, Rec)> {
            m.iter().map(|(p, n)| (p.clone(), rec(*n, Shown::Content))).collect()
        };
        // BTreeMap order is byte order, the snapshots' order.
        let (old, new) = (recs(&old), recs(&new));
        let moved = between(&old, &new);
        let owned: Vec<(String, Option<Rec>)> =
            moved.iter().map(|(p, r)| (p.to_string(), *r)).collect();
        prop_assert_eq!(apply(old.clone(), owned), new.clone());
        // Only what differs is an entry.
        let same = old.iter().filter(|f| new.contains(f)).count();
        let paths: std::collections::BTreeSet<&String> =
            old.iter().chain(&new).map(|(p, _)| p).collect();
        prop_assert_eq!(moved.len(), paths.len() - same);
    }
}

#[test]
fn a_delta_reads_back_as_the_snapshot_it_stands_for_or_not_at_all() {
    let t = tempfile::tempdir().unwrap();
    let memory = Memory::default();
    for dir in [Some(t.path()), None] {
        let store = Store::new(dir, &memory, &NoServices);
        let names: Vec<String> = (0..32).map(|i| format!("f{i:02}")).collect();
        let files: Vec<(&str, u64)> = names.iter().map(|n| (n.as_str(), 1)).collect();
        let whole = snap(10, &files);
        let mut chain = Chain::default();
        let base = chain.store(&store, &whole, b"memo").unwrap();
        assert!(chain.entries.is_empty() && chain.base == base);
        // One file changed, one gone, one made: a delta of three entries.
        let mut next = snap(20, &files);
        next.files[3].1 = rec(2, Shown::Name);
        next.files.remove(7);
        next.files.push(("g".to_string(), rec(3, Shown::Size)));
        let moved = between(&whole.files, &next.files);
        chain.add(moved.into_iter().map(|(p, r)| (Arc::from(p), r)));
        let name = chain.store(&store, &next, b"memo").unwrap();
        assert_eq!(chain.base, base, "still stored against the same base");
        let loaded = store.load(&name).unwrap();
        assert_eq!(loaded.snapshot().unwrap(), snapshot_ref(&next));
        assert_eq!(loaded.memo(), b"memo", "the base's memo");
        assert_eq!(loaded.chain().entries, chain.entries);
        // Positive control for the form: it is a delta, and small.
        if let Some(d) = dir {
            let bytes = std::fs::read(d.join("changes").join(&name)).unwrap();
            assert_eq!(base_of(&bytes), Some(base.clone()));
            let whole_len = std::fs::read(d.join("changes").join(&base)).unwrap().len();
            assert!(bytes.len() * 4 < whole_len, "{} {whole_len}", bytes.len());
        }
        // Too many entries for a delta: stored whole, and a new chain starts.
        let mut most = snap(30, &files);
        for f in &mut most.files[..8] {
            f.1 = rec(5, Shown::Content);
        }
        chain.add(
            between(&next.files, &most.files)
                .into_iter()
                .map(|(p, r)| (Arc::from(p), r)),
        );
        let whole_again = chain.store(&store, &most, b"memo 2").unwrap();
        assert!(chain.entries.is_empty() && chain.base == whole_again);
        assert!(store.load(&whole_again).unwrap().chain().entries.is_empty());
    }
    // Altered in the state directory: the base, or the delta's name of it.
    let store = Store::new(Some(t.path()), &memory, &NoServices);
    let (chain, base, name) = whole_then_one_gone(&store);
    assert_eq!(
        store.load(&name).unwrap().snapshot().unwrap().files.len(),
        15
    );
    assert!(!chain.entries.is_empty(), "stored as a delta");
    let changes = t.path().join("changes");
    let base_bytes = std::fs::read(changes.join(&base)).unwrap();
    let mut altered = base_bytes.clone();
    *altered.last_mut().unwrap() ^= 1;
    std::fs::write(changes.join(&base), &altered).unwrap();
    let e = store.load(&name).unwrap_err();
    assert_eq!(e.reason.as_deref(), Some("token_expired"));
    assert!(e.message.contains("altered"), "{}", e.message);
    std::fs::write(changes.join(&base), &base_bytes).unwrap();
    assert!(
        store.load(&name).is_ok(),
        "the control: put back, it reads again"
    );
    // A delta against a delta is not one this store writes: refused.
    let mut on_delta = std::fs::read(changes.join(&name)).unwrap();
    on_delta[8..40].copy_from_slice(&crate::fs::hash::unhex32(&name).unwrap());
    let on_delta_name = store.put(Arc::new(on_delta)).unwrap();
    let e = store.load(&on_delta_name).unwrap_err();
    assert!(e.message.contains("damaged"), "{}", e.message);
}

/// A snapshot's records with borrowed paths, as a stored one reads back.
fn snapshot_ref(s: &Snapshot<String>) -> Snapshot<&str> {
    Snapshot {
        taken: s.taken,
        files: s.files.iter().map(|(p, r)| (p.as_str(), *r)).collect(),
    }
}

#[test]
fn a_delta_with_junk_in_it_reads_as_nothing() {
    let memory = Memory::default();
    let store = Store::new(None, &memory, &NoServices);
    let files: Vec<(String, u64)> = (0..16).map(|i| (format!("f{i:02}"), 1)).collect();
    let files: Vec<(&str, u64)> = files.iter().map(|(p, n)| (p.as_str(), *n)).collect();
    let mut chain = Chain::default();
    chain.store(&store, &snap(1, &files), b"").unwrap();
    chain.add([
        (Arc::from("f01"), None),
        (Arc::from("f02"), Some(rec(9, Shown::Link))),
    ]);
    let name = chain.store(&store, &snap(2, &files), b"").unwrap();
    let good = memory
        .lock()
        .unwrap()
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap()
        .1
        .as_ref()
        .clone();
    let d = Delta::decode(&good).unwrap();
    assert_eq!(d.entries.len(), 2, "the control reads");
    // The gone entry of "f01" starts right after the header.
    let gone_at = 8 + 32 + 8;
    assert_eq!(good[gone_at], 0x40);
    let mut out_of_order = good.clone();
    out_of_order[gone_at + 5..gone_at + 8].copy_from_slice(b"f03");
    let mut control = good.clone();
    control[gone_at + 5] = 0x01;
    let mut cut = good.clone();
    cut.pop();
    for (why, junk) in [
        ("out of order", out_of_order),
        ("a control character", control),
        ("cut short", cut),
        ("no header", good[..40].to_vec()),
    ] {
        assert!(Delta::decode(&junk).is_none(), "{why}");
    }
}

#[test]
fn the_store_keeps_the_base_of_every_delta_it_keeps() {
    let t = tempfile::tempdir().unwrap();
    let memory = Memory::default();
    let files: Vec<(String, u64)> = (0..64).map(|i| (format!("f{i:02}"), 1)).collect();
    let files: Vec<(&str, u64)> = files.iter().map(|(p, n)| (p.as_str(), *n)).collect();
    for dir in [Some(t.path()), None] {
        let store = Store::new(dir, &memory, &NoServices);
        let mut chain = Chain::default();
        let base = chain.store(&store, &snap(1, &files), b"").unwrap();
        let mut names = Vec::new();
        for i in 0..KEEP as u64 + 4 {
            // Distinct times: the file system's times order the kept ones.
            std::thread::sleep(std::time::Duration::from_millis(5));
            chain.add([(Arc::from("f00"), Some(rec(10 + i, Shown::Content)))]);
            names.push(chain.store(&store, &snap(2 + i, &files), b"").unwrap());
        }
        assert_eq!(chain.base, base, "every one a delta against the first");
        for n in &names[names.len() - KEEP..] {
            let loaded = store.load(n).unwrap();
            let got = loaded.snapshot().unwrap();
            assert_eq!(
                got.files[0].1.size,
                names.iter().position(|m| m == n).unwrap() as u64 + 10
            );
        }
        // The older deltas are gone (the control that pruning ran), the base is not.
        assert!(store.load(&names[0]).is_err());
        assert!(store.load(&base).is_ok());
        if let Some(d) = dir {
            let kept = stored(&d.join("changes"));
            assert_eq!(kept.len(), KEEP + 1, "{kept:?}");
            assert_eq!(kept.iter().filter(|(_, delta)| !delta).count(), 1);
        }
    }
}

/// A session that never held the token's snapshot reads it back from the state directory,
/// delta and base, and answers what the session that made it answered.
#[test]
fn a_token_stored_as_a_delta_answers_in_a_session_that_never_held_it() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("repo");
    for d in ["d0", "d1", "d2", "d3"] {
        for f in 0..6 {
            let p = format!("{d}/f{f}.txt");
            write(&root, &p, &format!("{p}\n"));
            age(&root, &p);
        }
    }
    let state = t.path().join("on");
    let mut p = Pair::new(t.path(), &root);
    type Step = (
        &'static str,
        Option<&'static [&'static str]>,
        fn(&std::path::Path),
    );
    let steps: [Step; 7] = [
        ("a file rewritten", Some(&["d0"]), |r| {
            write(r, "d0/f0.txt", "changed\n")
        }),
        ("a file made", Some(&["d1"]), |r| {
            write(r, "d1/new.txt", "new\n")
        }),
        ("a file removed", Some(&["d2"]), |r| {
            std::fs::remove_file(r.join("d2/f3.txt")).unwrap()
        }),
        ("a file moved across", Some(&["d3", "d0"]), |r| {
            std::fs::rename(r.join("d3/f1.txt"), r.join("d0/moved.txt")).unwrap()
        }),
        ("everything stamped", None, |r| {
            write(r, "d1/f2.txt", "again\n")
        }),
        ("a directory made", Some(&["", "d4"]), |r| {
            write(r, "d4/x.txt", "x\n")
        }),
        ("a file in it", Some(&["d4"]), |r| {
            write(r, "d4/x.txt", "x again\n")
        }),
    ];
    let mut deltas_read = 0;
    for (what, dirs, change) in steps {
        let before = p.a.clone();
        let held =
            p.on.changes_live
                .lock()
                .unwrap()
                .last()
                .map(|l| l.name.clone());
        change(&root);
        p.watch.stamp(dirs);
        let (x, y) = p.next();
        assert_eq!(x.changes, y.changes, "{what}");
        // Another session, with the same state directory and key but nothing held, and
        // no watch: it reads the earlier token's snapshot back.
        let other = session(&root, &state, None).with_cursor_key(p.on.cursor_key.clone());
        let bytes = std::fs::read(state.join("changes").join(held.unwrap())).unwrap();
        deltas_read += usize::from(base_of(&bytes).is_some());
        let mut token = before;
        assert_eq!(call(&other, &mut token), x.changes, "{what}: read back");
    }
    // The session that made the tokens still holds its newest snapshot.
    assert!(!p.on.changes_live.lock().unwrap().is_empty());
    // Positive controls: tokens named deltas, and the stamps answered.
    assert!(deltas_read >= 3, "{deltas_read}");
    assert!(answered(&p.on) >= 1);
    let kept = stored(&state.join("changes"));
    assert!(kept.iter().any(|(_, delta)| *delta), "{kept:?}");
}
