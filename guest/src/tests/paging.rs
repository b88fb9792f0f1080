//! Paging with cursors: every page continues exactly where the last stopped, so that the
//! pages of a large tree add up to the unpaged result, with no duplicate and no gap; a
//! cursor from another call, an altered one, or one the tree no longer matches is refused.
#![allow(clippy::unwrap_used)]

use std::fs;

use crate::api::{FindFilesArgs, ListDirArgs, SearchOutput, SearchTextArgs};
use crate::audit::CallLog;
use crate::rules::fsx::Fs;
use crate::rules::policy::Policy;
use crate::tools::session::Session;

/// 7 directories of 13 files each; file `dD/fNN.txt` holds NN+1 lines, "hit" on each.
fn tree() -> (tempfile::TempDir, Session) {
    tree_with("")
}

fn tree_with(policy: &str) -> (tempfile::TempDir, Session) {
    let t = tempfile::tempdir().unwrap();
    for d in 0..7 {
        let dir = t.path().join(format!("d{d}"));
        fs::create_dir(&dir).unwrap();
        for f in 0..13 {
            fs::write(dir.join(format!("f{f:02}.txt")), "hit\n".repeat(f + 1)).unwrap();
        }
    }
    let s = Session::new(
        Fs::open(t.path()).unwrap(),
        Policy::from_json(policy).unwrap(),
    );
    (t, s)
}

fn list(s: &Session, cursor: Option<String>, max: u32) -> crate::api::ListDirResult {
    let a = ListDirArgs {
        max_depth: Some(3),
        max_entries: Some(max),
        cursor,
        ..Default::default()
    };
    crate::tools::list::list_dir(s, &mut CallLog::default(), &a).unwrap()
}

#[test]
fn list_pages_add_up_to_the_unpaged_listing() {
    let (_t, s) = tree();
    let whole: Vec<String> = list(&s, None, 1000)
        .entries
        .into_iter()
        .map(|e| e.path)
        .collect();
    assert_eq!(whole.len(), 7 + 7 * 13);
    for page in [1, 6, 13, 50] {
        let (mut got, mut cursor, mut pages) = (Vec::new(), None, 0);
        loop {
            let r = list(&s, cursor.take(), page);
            pages += 1;
            got.extend(r.entries.into_iter().map(|e| e.path));
            match r.next_cursor {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
        assert_eq!(got, whole, "page size {page}");
        assert_eq!(
            pages,
            whole.len().div_ceil(page as usize).max(1),
            "page size {page}"
        );
    }
}

#[test]
fn find_and_search_pages_add_up_too() {
    // Room for the whole search in one page, to compare with.
    let (_t, s) = tree_with(r#"{"limits": {"max_search_matches": 1000}}"#);
    let find = |cursor: Option<String>, max: u32| {
        let a = FindFilesArgs {
            patterns: vec!["*.txt".into()],
            max_results: Some(max),
            cursor,
            ..Default::default()
        };
        crate::tools::list::find_files(&s, &mut CallLog::default(), &a).unwrap()
    };
    let whole = find(None, 1000).paths;
    let (mut got, mut cursor) = (Vec::new(), None);
    loop {
        let r = find(cursor.take(), 10);
        got.extend(r.paths);
        let Some(c) = r.next_cursor else { break };
        cursor = Some(c);
    }
    assert_eq!(got, whole);

    let search = |cursor: Option<String>, max: u32, output| {
        let a = SearchTextArgs {
            query: "hit".into(),
            max_matches: Some(max),
            output: Some(output),
            cursor,
            ..Default::default()
        };
        crate::tools::search::search_text(&s, &mut CallLog::default(), &a).unwrap()
    };
    let key = |m: &crate::api::SearchMatch| (m.path.clone(), m.line);
    let whole: Vec<_> = search(None, 10_000, SearchOutput::Matches)
        .matches
        .iter()
        .map(key)
        .collect();
    assert_eq!(whole.len(), 7 * (1..=13).sum::<usize>());
    // Pages cut inside files and at file boundaries alike.
    for page in [1, 7, 13, 100] {
        let (mut got, mut cursor) = (Vec::new(), None);
        let last_total = loop {
            let r = search(cursor.take(), page, SearchOutput::Matches);
            got.extend(r.matches.iter().map(key));
            let Some(c) = r.next_cursor else {
                break r.total_matches;
            };
            cursor = Some(c);
        };
        assert_eq!(got, whole, "page size {page}");
        // The last page's counts cover the whole search.
        assert_eq!(last_total, whole.len() as u64, "page size {page}");
    }
}

#[test]
fn files_output_pages_by_the_policy_cap() {
    let t = tempfile::tempdir().unwrap();
    for f in 0..25 {
        fs::write(t.path().join(format!("f{f:02}.txt")), "hit\n").unwrap();
    }
    let policy = Policy::from_json(r#"{"limits": {"max_search_files": 10}}"#).unwrap();
    let s = Session::new(Fs::open(t.path()).unwrap(), policy);
    let (mut got, mut cursor) = (Vec::new(), None);
    loop {
        let a = SearchTextArgs {
            query: "hit".into(),
            output: Some(SearchOutput::Files),
            cursor: cursor.take(),
            ..Default::default()
        };
        let r = crate::tools::search::search_text(&s, &mut CallLog::default(), &a).unwrap();
        assert_eq!(r.files_matched, 25);
        got.extend(r.files.into_iter().map(|f| f.path));
        let Some(c) = r.next_cursor else { break };
        cursor = Some(c);
    }
    let want: Vec<String> = (0..25).map(|f| format!("f{f:02}.txt")).collect();
    assert_eq!(got, want);
}

#[test]
fn cursors_from_other_calls_or_changed_trees_are_refused() {
    let (t, s) = tree();
    let first = list(&s, None, 5);
    let cursor = first.next_cursor.clone().unwrap();
    // Positive control: the cursor continues.
    assert_eq!(
        list(&s, Some(cursor.clone()), 5).entries[0].path,
        "d0/f04.txt"
    );
    // Other arguments than the page size: refused.
    let a = ListDirArgs {
        max_depth: Some(2),
        cursor: Some(cursor.clone()),
        ..Default::default()
    };
    let e = crate::tools::list::list_dir(&s, &mut CallLog::default(), &a).unwrap_err();
    assert_eq!(e.reason.as_deref(), Some("cursor"), "{}", e.message);
    // Another tool: refused.
    let a = FindFilesArgs {
        patterns: vec!["*".into()],
        cursor: Some(cursor.clone()),
        ..Default::default()
    };
    let e = crate::tools::list::find_files(&s, &mut CallLog::default(), &a).unwrap_err();
    assert_eq!(e.reason.as_deref(), Some("cursor"));
    // Another session's key (another host, or a forger): refused.
    let other = Session::new(Fs::open(t.path()).unwrap(), Policy::from_json("").unwrap());
    let a = ListDirArgs {
        max_depth: Some(3),
        cursor: Some(cursor.clone()),
        ..Default::default()
    };
    let e = crate::tools::list::list_dir(&other, &mut CallLog::default(), &a).unwrap_err();
    assert_eq!(e.reason.as_deref(), Some("cursor"));
    // The last entry of the page moved: the tree changed, and it is said.
    fs::rename(t.path().join("d0/f03.txt"), t.path().join("d6/moved.txt")).unwrap();
    let a = ListDirArgs {
        max_depth: Some(3),
        cursor: Some(cursor),
        ..Default::default()
    };
    let e = crate::tools::list::list_dir(&s, &mut CallLog::default(), &a).unwrap_err();
    assert_eq!(e.reason.as_deref(), Some("tree_changed"), "{}", e.message);
    // A cursor with counting output or a shard is refused as input.
    let a = SearchTextArgs {
        query: "hit".into(),
        output: Some(SearchOutput::Count),
        cursor: Some("ft1.00.00".into()),
        ..Default::default()
    };
    assert!(crate::tools::search::search_text(&s, &mut CallLog::default(), &a).is_err());
}
