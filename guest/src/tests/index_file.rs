//! The index file in the state directory as an attacker could leave it: one forged with a
//! good checksum and the right binding (anyone who can write the state directory can
//! compute both) but larger than the policy lets an index grow, and a FIFO in its place.
//! Either must be passed over: no memory past the bound, no search that blocks.
#![allow(clippy::unwrap_used)]

use std::fs;
use std::time::Duration;

use super::index::{search, session, settle};
use crate::api::SearchTextArgs;
use crate::tools::index::{file, Identity, Index, Rec, What};

const SMALL: &str = r#"{"limits": {"max_index_bytes": 4000}}"#;

fn ask() -> SearchTextArgs {
    SearchTextArgs {
        query: "needle".into(),
        ..Default::default()
    }
}

/// The binding a session's index gets (what a forger computes from public facts).
fn binding(s: &crate::tools::session::Session) -> String {
    Index::binding(
        crate::tools::list::root_id(s).unwrap(),
        &s.policy.search_fingerprint(),
    )
}

fn forged(binding: String, records: usize) -> Index {
    let mut ix = Index::new(binding);
    for i in 0..records {
        let rec = Rec {
            id: Identity {
                size: 1,
                mtime: Some(1),
                ctime: Some(1),
                inode: Some(1),
            },
            taken: 1,
            what: What::Text(crate::text::trigram::Filter::from_words(vec![0; 64])),
            generation: 0,
        };
        ix.record(&format!("gone/{i}.txt"), rec, u64::MAX);
    }
    ix
}

fn plant(state: &std::path::Path, ix: &Index) {
    let dir = state.join(file_tools_contract::INDEX_DIR_NAME);
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        file::path_in(&dir, ix.bound_to()),
        file::encode(ix, &crate::rules::services::NoServices),
    )
    .unwrap();
}

/// The weight of the session's index after one search (with `records` planted).
fn weight_after_planting(records: usize) -> (u64, usize) {
    let repo = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    fs::write(repo.path().join("a.txt"), "plain words\n").unwrap();
    let s = session(repo.path(), state.path(), SMALL);
    let ix = forged(binding(&s), records);
    plant(state.path(), &ix);
    // A search below the root: it forgets no record, so what was loaded stays.
    fs::create_dir(repo.path().join("sub")).unwrap();
    fs::write(repo.path().join("sub/b.txt"), "plain words\n").unwrap();
    let a = SearchTextArgs {
        path: Some("sub".into()),
        ..ask()
    };
    let (r, _) = search(&s, a);
    assert_eq!(r[0].files_searched, 1);
    let guard = s.index.lock().unwrap();
    let loaded = guard.as_ref().unwrap();
    (loaded.weight(), loaded.len())
}

#[test]
fn a_forged_index_within_the_bound_is_loaded() {
    // The positive control: the planted file is read when it could be the session's own.
    let (w, n) = weight_after_planting(3);
    assert!(n >= 3, "{n} records");
    assert!(w <= 4000);
}

#[test]
fn a_forged_index_over_the_policys_bound_is_not_loaded() {
    let (w, n) = weight_after_planting(2000);
    assert!(
        w <= 4000,
        "the session holds an index of {w} bytes ({n} records) under a bound of 4000"
    );
}

#[test]
fn a_fifo_in_place_of_the_index_file_does_not_block_a_search() {
    let repo = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    fs::write(repo.path().join("a.txt"), "plain words and a needle\n").unwrap();
    settle();
    let s = session(repo.path(), state.path(), SMALL);
    let place = file::path_in(&s.index_dir().unwrap(), &binding(&s));
    fs::create_dir_all(place.parent().unwrap()).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(&place)
        .status()
        .unwrap();
    assert!(made.success());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let (r, _) = search(&s, ask());
        let _ = tx.send(r[0].files_matched);
    });
    let got = rx.recv_timeout(Duration::from_secs(20));
    assert_eq!(got, Ok(1), "the search blocked on the FIFO");
}

/// A host that announces a build of the index under way (a fresh `index/building`): a
/// search that finds no index to load scans, and records nothing beside the build; once
/// the announcement is old (a builder that died), searches build the index again.
#[test]
fn a_build_announced_by_the_host_is_not_done_twice() {
    let repo = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    fs::write(repo.path().join("a.txt"), "plain words and a needle\n").unwrap();
    fs::write(repo.path().join("b.txt"), "other words\n").unwrap();
    settle();
    let s = session(repo.path(), state.path(), SMALL);
    let marker = s
        .index_dir()
        .unwrap()
        .join(file_tools_contract::INDEX_BUILDING);
    fs::create_dir_all(marker.parent().unwrap()).unwrap();
    fs::write(&marker, "").unwrap();
    let index_files = || {
        fs::read_dir(state.path().join("index"))
            .unwrap()
            .filter(|e| e.as_ref().unwrap().file_name().len() == 64)
            .count()
    };
    for _ in 0..2 {
        let (r, bytes) = search(&s, ask());
        assert_eq!(r[0].files_matched, 1, "the scan answers");
        assert!(bytes > 0, "nothing to spare the reads");
        assert!(
            s.index.lock().unwrap().is_none(),
            "recorded beside the build"
        );
        assert_eq!(index_files(), 0);
    }
    // The announced builder itself records.
    let mut builder = session(repo.path(), state.path(), SMALL);
    builder.index_builder = true;
    let _ = search(&builder, ask());
    assert!(
        builder.index.lock().unwrap().is_some(),
        "the builder did not record"
    );
    assert_eq!(index_files(), 1);
    fs::remove_dir_all(state.path().join("index")).unwrap();
    fs::create_dir_all(marker.parent().unwrap()).unwrap();
    fs::write(&marker, "").unwrap();
    // The announcement goes stale: the next search records, and the one after reads only
    // the file with the needle.
    let old = std::time::SystemTime::now()
        - Duration::from_secs(file_tools_contract::INDEX_BUILDING_FRESH_SECS + 5);
    fs::File::options()
        .write(true)
        .open(&marker)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let (r, _) = search(&s, ask());
    assert_eq!(r[0].files_matched, 1);
    assert!(
        s.index.lock().unwrap().is_some(),
        "a stale announcement stopped the index"
    );
    assert_eq!(index_files(), 1);
    let (r, bytes) = search(&s, ask());
    let needle_file = fs::metadata(repo.path().join("a.txt")).unwrap().len();
    assert_eq!((r[0].files_matched, bytes), (1, needle_file));
}

/// A folder the host mounts for the index (shared by the sessions of a repository) holds
/// it instead of the state directory: a session with a state directory of its own loads
/// what another saved there, and reads only the file that matches.
#[test]
fn sessions_with_a_shared_index_folder_use_one_index() {
    const ON: &str = r#"{"limits": {"max_index_bytes": 1048576}}"#;
    let repo = twenty_files_and_a_needle();
    let (first_state, second_state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let shared = tempfile::tempdir().unwrap();
    let mut first = session(repo.path(), first_state.path(), ON);
    first.shared_index_dir = Some(shared.path().to_path_buf());
    let (r, _) = search(&first, ask());
    assert_eq!(r[0].files_matched, 1);
    let in_shared = file::path_in(shared.path(), &binding(&first));
    assert!(in_shared.is_file(), "not saved in the shared folder");
    assert!(
        !first_state
            .path()
            .join(file_tools_contract::INDEX_DIR_NAME)
            .exists(),
        "saved in the session's own state directory"
    );
    let mut second = session(repo.path(), second_state.path(), ON);
    second.shared_index_dir = Some(shared.path().to_path_buf());
    let (r, bytes) = search(&second, ask());
    assert_eq!(r[0].files_matched, 1);
    assert_eq!(
        bytes,
        "a needle here\n".len() as u64,
        "the shared index spared no read"
    );
    // Control: a session without the shared folder has no index to load, and reads all.
    let third_state = tempfile::tempdir().unwrap();
    let third = session(repo.path(), third_state.path(), ON);
    let (_, bytes) = search(&third, ask());
    assert!(bytes > 20 * 50, "{bytes}");
}

/// Twenty files of 600 bytes without the needle, and one 14-byte file with it.
fn twenty_files_and_a_needle() -> tempfile::TempDir {
    let repo = tempfile::tempdir().unwrap();
    for i in 0..20 {
        fs::write(
            repo.path().join(format!("f{i}.txt")),
            "plain words\n".repeat(50),
        )
        .unwrap();
    }
    fs::write(repo.path().join("n.txt"), "a needle here\n").unwrap();
    settle();
    repo
}

/// Bytes a session under `policy`, with `shared` as its index folder, reads to find the
/// needle (after checking that it found it).
fn bytes_to_find_the_needle(repo: &std::path::Path, shared: &std::path::Path, policy: &str) -> u64 {
    let state = tempfile::tempdir().unwrap();
    let mut s = session(repo, state.path(), policy);
    s.shared_index_dir = Some(shared.to_path_buf());
    let (r, bytes) = search(&s, ask());
    assert_eq!(r[0].files_matched, 1, "{policy}");
    bytes
}

#[test]
fn sessions_differing_only_in_what_they_may_change_share_one_index() {
    const BUILT_BY: &str = r#"{"limits": {"max_index_bytes": 1048576}}"#;
    let repo = twenty_files_and_a_needle();
    let shared = tempfile::tempdir().unwrap();
    let needle = "a needle here\n".len() as u64;
    // A writable session builds and saves the index; every read before was a full scan.
    assert!(bytes_to_find_the_needle(repo.path(), shared.path(), BUILT_BY) > 20 * 600);
    // Read-only, or with other write rules, patch budget, approval and blind writes: the
    // same files are seen and read, so the saved index serves (only the needle is read).
    for same_reads in [
        r#"{"read_only": true, "limits": {"max_index_bytes": 1048576}}"#,
        r#"{"write": {"block": ["**"]}, "allow_move": true,
            "require_expected_sha256": true, "blind_writes": [".env"],
            "patch": {"max_files": 1}, "limits": {"max_index_bytes": 1048576}}"#,
    ] {
        assert_eq!(
            bytes_to_find_the_needle(repo.path(), shared.path(), same_reads),
            needle,
            "{same_reads}"
        );
    }
    // Control: a rule on what may be read, or letting files with several names be read,
    // binds another index, so the search scans.
    for other_reads in [
        r#"{"read": {"block": ["f1.txt"]}, "limits": {"max_index_bytes": 1048576}}"#,
        r#"{"allow_hardlinks": true, "limits": {"max_index_bytes": 1048576}}"#,
    ] {
        assert!(
            bytes_to_find_the_needle(repo.path(), shared.path(), other_reads) > 19 * 600,
            "{other_reads}"
        );
    }
}
