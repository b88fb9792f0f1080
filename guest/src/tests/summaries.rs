//! Summaries say what was really counted and which cap stopped a result, the same way in
//! every output mode, on a tree whose true counts are known.
#![allow(clippy::unwrap_used)]

use std::fs;

use crate::api::{
    FindFilesArgs, ListDirArgs, SearchOutput, SearchTextArgs, SearchTextResult, Stop,
};
use crate::audit::CallLog;
use crate::rules::fsx::Fs;
use crate::rules::policy::Policy;
use crate::tools::session::Session;

/// 30 files `f00.txt` .. `f29.txt`; file `fNN` holds NN+1 lines "hit", so 465 matching
/// lines in 30 files.
fn tree(policy: &str) -> (tempfile::TempDir, Session) {
    let t = tempfile::tempdir().unwrap();
    for i in 0..30 {
        fs::write(t.path().join(format!("f{i:02}.txt")), "hit\n".repeat(i + 1)).unwrap();
    }
    let s = Session::new(
        Fs::open(t.path()).unwrap(),
        Policy::from_json(policy).unwrap(),
    );
    (t, s)
}

fn search(s: &Session, output: SearchOutput, max: Option<u32>) -> SearchTextResult {
    let a = SearchTextArgs {
        query: "hit".into(),
        output: Some(output),
        max_matches: max,
        ..Default::default()
    };
    crate::tools::search::search_text(s, &mut CallLog::default(), &a).unwrap()
}

#[test]
fn every_search_output_counts_the_same_files_and_lines() {
    let (_t, s) = tree("");
    for output in [
        SearchOutput::Matches,
        SearchOutput::Files,
        SearchOutput::Count,
    ] {
        let r = search(&s, output, Some(10_000));
        assert_eq!((r.total_matches, r.files_matched), (465, 30), "{output:?}");
        assert!(r.stopped_by.is_none() && !r.truncated, "{output:?}");
        assert!(
            r.summary
                .starts_with("465 matching lines in 30 files (30 files searched"),
            "{output:?}: {}",
            r.summary
        );
    }
}

#[test]
fn the_match_cap_is_named_with_its_value_and_the_counts_stay_true() {
    let (_t, s) = tree("");
    let r = search(&s, SearchOutput::Matches, Some(20));
    assert_eq!(r.matches.len(), 20);
    assert_eq!(r.stopped_by, Some(Stop::new("max_matches", 20u64)));
    // Files are searched in path order until the cap: f00..f04 hold 1+2+3+4+5 = 15 lines,
    // f05 holds 6 more, and it is counted whole.
    assert_eq!(
        (r.total_matches, r.files_matched, r.files_searched),
        (21, 6, 6)
    );
    assert!(
        r.summary
            .contains("21 matching lines in 6 files (6 files searched; 20 lines shown)"),
        "{}",
        r.summary
    );
    assert!(
        r.summary.contains("stopped at max_matches = 20"),
        "{}",
        r.summary
    );
}

#[test]
fn the_file_list_cap_is_not_called_a_match_cap() {
    let (_t, s) = tree(r#"{"limits": {"max_search_files": 7}}"#);
    let r = search(&s, SearchOutput::Files, None);
    assert_eq!(r.files.len(), 7);
    assert_eq!((r.total_matches, r.files_matched), (465, 30));
    assert_eq!(r.stopped_by, Some(Stop::new("max_search_files", 7u64)));
    assert!(
        r.summary.contains("465 matching lines in 30 files"),
        "{}",
        r.summary
    );
    assert!(
        r.summary.contains("stopped at max_search_files = 7"),
        "{}",
        r.summary
    );
    assert!(!r.summary.contains("max_matches"), "{}", r.summary);
    // Counting lists no files, so nothing is cut.
    let r = search(&s, SearchOutput::Count, None);
    assert!(r.files.is_empty() && r.stopped_by.is_none());
    assert_eq!((r.total_matches, r.files_matched), (465, 30));
}

#[test]
fn walks_that_run_out_of_budget_say_so_in_every_tool() {
    let (_t, s) = tree(r#"{"limits": {"max_walk_entries": 5}}"#);
    let want = Some(Stop::new("max_walk_entries", 5u64));
    let r = search(&s, SearchOutput::Count, None);
    assert_eq!(r.stopped_by, want);
    assert_eq!(r.files_searched, 5);
    let l =
        crate::tools::list::list_dir(&s, &mut CallLog::default(), &ListDirArgs::default()).unwrap();
    assert_eq!((l.entries.len(), l.truncated), (5, true));
    assert_eq!(l.stopped_by, want);
    assert!(
        l.summary.contains("stopped at max_walk_entries = 5"),
        "{}",
        l.summary
    );
    let f = FindFilesArgs {
        patterns: vec!["*.txt".into()],
        ..Default::default()
    };
    let f = crate::tools::list::find_files(&s, &mut CallLog::default(), &f).unwrap();
    assert_eq!((f.paths.len(), f.stopped_by), (5, want));
}

#[test]
fn listing_caps_name_their_argument() {
    let (_t, s) = tree("");
    let a = ListDirArgs {
        max_entries: Some(4),
        ..Default::default()
    };
    let l = crate::tools::list::list_dir(&s, &mut CallLog::default(), &a).unwrap();
    assert_eq!(l.entries.len(), 4);
    assert_eq!(l.stopped_by, Some(Stop::new("max_entries", 4u64)));
    let a = FindFilesArgs {
        patterns: vec!["*.txt".into()],
        max_results: Some(3),
        ..Default::default()
    };
    let f = crate::tools::list::find_files(&s, &mut CallLog::default(), &a).unwrap();
    assert_eq!(f.paths.len(), 3);
    assert_eq!(f.stopped_by, Some(Stop::new("max_results", 3u64)));
    assert!(
        f.summary
            .contains("3 files match *.txt; stopped at max_results = 3"),
        "{}",
        f.summary
    );
    // Positive control: a cap that is not reached is not reported.
    let a = FindFilesArgs {
        patterns: vec!["*.txt".into()],
        max_results: Some(30),
        ..Default::default()
    };
    let f = crate::tools::list::find_files(&s, &mut CallLog::default(), &a).unwrap();
    assert_eq!(
        (f.paths.len(), f.stopped_by, f.truncated),
        (30, None, false)
    );
}

#[test]
fn a_file_holding_a_secret_answers_the_same_whatever_the_query_meets() {
    // Regression: the skip reason `secret_content` appeared only when the query matched
    // the token's line, so queries could spell the token out prefix by prefix.
    let t = tempfile::tempdir().unwrap();
    let token = "ghp_Zq7xxxxxxxxxxK9maaaaaaaaaaaaaaaaaaaa";
    fs::write(
        t.path().join("config.py"),
        format!("NAME = 'app'\nGITHUB = '{token}'\n"),
    )
    .unwrap();
    fs::write(t.path().join("plain.py"), "NAME = 'other'\n").unwrap();
    let s = Session::new(Fs::open(t.path()).unwrap(), Policy::from_json("").unwrap());
    let run = |q: &str, regex: bool, output| {
        let a = SearchTextArgs {
            query: q.into(),
            regex: Some(regex),
            output: Some(output),
            ..Default::default()
        };
        let r = crate::tools::search::search_text(&s, &mut CallLog::default(), &a).unwrap();
        (
            r.total_matches,
            r.files_matched,
            r.skipped,
            r.matches.len(),
            r.files,
        )
    };
    for output in [
        SearchOutput::Matches,
        SearchOutput::Files,
        SearchOutput::Count,
    ] {
        let right = run("ghp_Zq7", false, output);
        let wrong = run("ghp_Zq8", false, output);
        assert_eq!(right, wrong, "{output:?}");
        // Matching another line of the same file, alone or beside the token, tells nothing.
        let other = run("NAME = 'app'|ghp_Zq7", true, output);
        let other_wrong = run("NAME = 'app'|ghp_Zq8", true, output);
        assert_eq!(other, other_wrong, "{output:?}");
        assert_eq!(other.0, 0, "{output:?}");
    }
    // Positive control: the same search finds a file without a secret.
    let plain = run("NAME =", false, SearchOutput::Matches);
    assert_eq!((plain.0, plain.1), (1, 1));
    assert_eq!(plain.4[0].path, "plain.py");
}
