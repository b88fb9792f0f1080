//! The search index through the component and the host's listing with metadata
//! (`host-fs.read-dir-stat`): a session with the index answers exactly what one without
//! it answers, before and after the tree changes (an edit to the same size with the old
//! modification time put back, a rename, a delete, a new file), reads far fewer bytes once
//! built, and keeps nothing of what the policy hides in its file.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use file_tools_host::{AuditEvent, Limits, Session};
use serde_json::{json, Value};

use crate::support::*;

const WORDS: &[&str] = &[
    "amber", "basil", "cedar", "dune", "ember", "fjord", "garnet", "heron", "iris", "jade",
];

fn open(repo: &Path, state: &Path, policy: Value, bytes: Arc<Mutex<u64>>) -> Session {
    Session::builder(runtime())
        .repo(repo)
        .state_dir(state)
        .policy(policy)
        .limits(Limits::default())
        .audit_sink(Arc::new(move |e: &AuditEvent| {
            *bytes.lock().expect("bytes") += e.bytes_read;
        }))
        .build()
        .expect("session")
}

/// The answer without what differs by session (the cursor is signed by each session).
fn answer(s: &mut Session, args: &Value) -> Value {
    let mut v = call(s, "search_text", args.clone()).expect("search");
    v.as_object_mut().expect("object").remove("next_cursor");
    v
}

fn settle() {
    // Records are trusted once the file's times are two seconds older than the look.
    std::thread::sleep(Duration::from_millis(2_200));
}

#[test]
fn indexed_search_answers_as_the_scan_and_reads_less() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let repo = tmp.path().join("repo");
    for d in 0..4 {
        for f in 0..10 {
            let (a, b) = (WORDS[(d * 10 + f) % 10], WORDS[(d + f * 3) % 10]);
            let body = format!("{a}_{d}{f} uses {b}\n").repeat(50);
            write(&repo.join(format!("d{d}/f{f}.txt")), body.as_bytes());
        }
    }
    write(
        &repo.join("private/plan.txt"),
        b"garnet private_plan_marker\n",
    );
    write(&repo.join(".env"), b"TOKEN=amber_secret_value\n");
    write(&repo.join("blob.bin"), b"amber\0\x01");
    let policy = json!({
        "read": { "block": ["private/**"] },
        "limits": { "max_index_bytes": 1 << 28 },
    });
    let mut off_policy = policy.clone();
    off_policy["limits"] = json!({ "max_index_bytes": 0 });
    let (st_on, st_off) = (tmp.path().join("state-on"), tmp.path().join("state-off"));
    let (b_on, b_off) = (Arc::new(Mutex::new(0)), Arc::new(Mutex::new(0)));
    let mut on = open(&repo, &st_on, policy, b_on.clone());
    let mut off = open(&repo, &st_off, off_policy, b_off.clone());
    settle();
    let queries: Vec<Value> = WORDS
        .iter()
        .map(|w| json!({ "query": format!("{w}_1") }))
        .chain([
            json!({ "query": "USES GARNET", "case_insensitive": true }),
            json!({ "query": r"heron_\d+ uses", "regex": true, "output": "files" }),
            json!({ "query": "private_plan_marker" }),
            json!({ "query": "amber_secret_value", "include_hidden": true }),
            json!({ "query": "amber", "max_matches": 7 }),
            json!({ "query": "jade", "output": "count", "path": "d2" }),
        ])
        .collect();
    let compare = |on: &mut Session, off: &mut Session, what: &str| {
        for q in &queries {
            assert_eq!(answer(on, q), answer(off, q), "{what}: {q}");
        }
    };
    compare(&mut on, &mut off, "first pass (builds the index)");
    let (on0, off0) = (*b_on.lock().unwrap(), *b_off.lock().unwrap());
    compare(&mut on, &mut off, "second pass");
    let (on1, off1) = (*b_on.lock().unwrap() - on0, *b_off.lock().unwrap() - off0);
    assert!(
        on1 * 3 < off1,
        "read {on1} bytes with the index, {off1} without"
    );

    // Same size, new words, the old modification time put back; a rename; a delete; a
    // new file.
    let victim = repo.join("d1/f1.txt");
    let old = std::fs::read(&victim).unwrap();
    let mtime = std::fs::metadata(&victim).unwrap().modified().unwrap();
    let mut new = b"garnet_1 swapped in\n".repeat(old.len() / 20 + 1);
    new.truncate(old.len());
    std::fs::write(&victim, &new).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&victim)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    std::fs::rename(repo.join("d2/f2.txt"), repo.join("d3/moved.txt")).unwrap();
    std::fs::remove_file(repo.join("d0/f0.txt")).unwrap();
    write(&repo.join("d0/new.txt"), b"iris_1 arrives\n");
    compare(&mut on, &mut off, "right after the changes");
    settle();
    compare(&mut on, &mut off, "after the changes settled");

    // The index file holds nothing of the blocked directory or the secret.
    let dir = st_on.join("index");
    let mut seen = 0;
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let bytes = std::fs::read(e.path()).unwrap();
        seen += 1;
        for hidden in [&b"private/"[..], b".env", b"amber_secret"] {
            assert!(
                !bytes.windows(hidden.len()).any(|w| w == hidden),
                "{} holds {}",
                e.path().display(),
                String::from_utf8_lossy(hidden)
            );
        }
        assert!(
            bytes.windows(9).any(|w| w == b"d1/f1.txt"),
            "positive control"
        );
    }
    assert_eq!(seen, 1);
    let off_files = std::fs::read_dir(st_off.join("index")).map_or(0, |d| d.count());
    assert_eq!(off_files, 0, "a session without the index saved one");
}

/// With the host's watch, a search right after a change (no pause) answers as a scan
/// does: the watch's count is exact when read, so a replay that trusts its records only
/// while the count stays the same never misses a change, however soon it follows.
#[test]
fn with_a_watch_a_change_just_before_a_search_is_never_missed() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let repo = tmp.path().join("repo");
    for d in 0..3 {
        for f in 0..8 {
            let body = format!("{} steady text {d}{f}\n", WORDS[(d + f) % 10]).repeat(20);
            write(&repo.join(format!("d{d}/f{f}.txt")), body.as_bytes());
        }
    }
    let policy = json!({ "limits": { "max_index_bytes": 1 << 28 } });
    let mut off_policy = policy.clone();
    off_policy["limits"]["max_index_bytes"] = json!(0);
    let open_watched = |state: &Path, policy: Value| {
        Session::builder(runtime())
            .repo(&repo)
            .state_dir(state)
            .policy(policy)
            .watch_tree(true)
            .build()
            .expect("session")
    };
    let mut on = open_watched(&tmp.path().join("state-on"), policy);
    let mut off = open_watched(&tmp.path().join("state-off"), off_policy);
    settle();
    let q = |w: &str| json!({ "query": w, "output": "files" });
    for w in ["amber", "steady text 1", "marker"] {
        assert_eq!(answer(&mut on, &q(w)), answer(&mut off, &q(w)), "{w}");
    }
    for round in 0..40 {
        let marker = format!("marker{round}");
        match round % 5 {
            // Same size, the old modification time put back (a file an earlier round
            // removed is made again).
            0 => match std::fs::read(repo.join(format!("d{}/f{}.txt", round % 3, round % 8))) {
                Err(_) => write(
                    &repo.join(format!("d{}/f{}.txt", round % 3, round % 8)),
                    marker.as_bytes(),
                ),
                Ok(old) => {
                    let p = repo.join(format!("d{}/f{}.txt", round % 3, round % 8));
                    let mtime = std::fs::metadata(&p).unwrap().modified().unwrap();
                    let mut new = format!("{marker} ").into_bytes().repeat(old.len());
                    new.truncate(old.len());
                    std::fs::write(&p, &new).unwrap();
                    std::fs::File::options()
                        .write(true)
                        .open(&p)
                        .unwrap()
                        .set_modified(mtime)
                        .unwrap();
                }
            },
            1 => write(
                &repo.join(format!("new{round}/deeper/x.txt")),
                marker.as_bytes(),
            ),
            2 => std::fs::rename(
                repo.join(format!("d{}/f{}.txt", round % 3, (round + 1) % 8)),
                repo.join(format!("d{}/{marker}.txt", (round + 1) % 3)),
            )
            .unwrap_or(()),
            3 => {
                let _ =
                    std::fs::remove_file(repo.join(format!("d{}/f{}.txt", round % 3, round % 8)));
            }
            _ => {
                let mut f = std::fs::OpenOptions::new()
                    .append(true)
                    .open(repo.join("d0/f0.txt"))
                    .unwrap();
                std::io::Write::write_all(&mut f, marker.as_bytes()).unwrap();
            }
        }
        // No pause: the search follows the change at once.
        for w in [marker.as_str(), "marker", "steady"] {
            assert_eq!(
                answer(&mut on, &q(w)),
                answer(&mut off, &q(w)),
                "round {round}: {w}"
            );
        }
        if round % 10 == 9 {
            settle();
        }
    }
}

/// With the host's watch, `find_files` over the whole tree replays the last whole walk a
/// search recorded while the watch counts no change (far less work than a walk: the fuel
/// shows it), and walks again after any change, each time answering as a session without
/// the index answers: pages, hidden files and ignore rules included.
#[test]
fn with_a_watch_find_files_replays_the_last_walk_and_misses_nothing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let repo = tmp.path().join("repo");
    for d in 0..12 {
        for f in 0..25 {
            write(
                &repo.join(format!("d{d:02}/f{f:02}.txt")),
                format!("{} text\n", WORDS[(d + f) % 10]).as_bytes(),
            );
        }
    }
    write(&repo.join(".gitignore"), b"*.log\n");
    write(&repo.join("d00/skip.log"), b"ignored\n");
    write(&repo.join(".hidden/h.txt"), b"hidden\n");
    let fuel = Arc::new(Mutex::new(0u64));
    let open_watched = |state: &str, index: u64| {
        let fuel = fuel.clone();
        Session::builder(runtime())
            .repo(&repo)
            .state_dir(tmp.path().join(state))
            .policy(json!({ "limits": { "max_index_bytes": index } }))
            .watch_tree(true)
            .observer(Arc::new(move |r: &file_tools_host::CallRecord| {
                *fuel.lock().expect("fuel") = r.fuel;
            }))
            .build()
            .expect("session")
    };
    let mut on = open_watched("state-on", 1 << 28);
    let mut off = open_watched("state-off", 0);
    let finds = [
        json!({ "patterns": ["*"] }),
        json!({ "patterns": ["*.txt"], "include_hidden": true }),
        json!({ "patterns": ["d0*/f1*"], "max_results": 7 }),
    ];
    let walked = compare(&mut on, &mut off, &fuel, &finds, "before any search");
    // A search of the whole tree records the walk (both choices of hidden entries).
    for hidden in [false, true] {
        let q = json!({ "query": "amber", "output": "count", "include_hidden": hidden });
        call(&mut on, "search_text", q).expect("search");
    }
    let replayed = compare(&mut on, &mut off, &fuel, &finds, "after the searches");
    // The two finds over the whole tree (the pages of the third stop early either way).
    for (w, r) in walked.iter().zip(&replayed).take(2) {
        assert!(
            r * 2 < *w,
            "a replay uses far less fuel: {replayed:?} against {walked:?}"
        );
    }
    // Each change is seen by the very next call.
    let changes: [&dyn Fn(); 5] = [
        &|| write(&repo.join("d03/new.txt"), b"new\n"),
        &|| std::fs::remove_file(repo.join("d04/f04.txt")).expect("rm"),
        &|| std::fs::rename(repo.join("d05"), repo.join("d05-moved")).expect("mv"),
        &|| write(&repo.join(".gitignore"), b"*.log\nf0*\n"),
        &|| write(&repo.join(".hidden/g.txt"), b"more\n"),
    ];
    for (i, change) in changes.iter().enumerate() {
        change();
        compare(
            &mut on,
            &mut off,
            &fuel,
            &finds,
            &format!("after change {i}"),
        );
    }
}

/// `find_files` with each of `finds`, page by page, in both sessions: the same answers.
/// The fuel session `on` used for each call.
fn compare(
    on: &mut Session,
    off: &mut Session,
    fuel: &Mutex<u64>,
    finds: &[Value],
    what: &str,
) -> Vec<u64> {
    let mut used = Vec::new();
    for args in finds {
        let (mut a, mut b) = (args.clone(), args.clone());
        for page in 0..3 {
            let got = call(on, "find_files", a.clone()).expect("find");
            used.push(*fuel.lock().expect("fuel"));
            let want = call(off, "find_files", b.clone()).expect("find");
            assert_eq!(got["paths"], want["paths"], "{what}: {args} page {page}");
            assert_eq!(
                got["skipped"], want["skipped"],
                "{what}: {args} page {page}"
            );
            assert_eq!(got["truncated"], want["truncated"], "{what}: {args}");
            match (got["next_cursor"].as_str(), want["next_cursor"].as_str()) {
                (Some(x), Some(y)) => {
                    a["cursor"] = json!(x);
                    b["cursor"] = json!(y);
                }
                (None, None) => break,
                other => panic!("{what}: {args}: cursors {other:?}"),
            }
        }
    }
    used
}

/// With the host's watch, `changes_since` on a token taken at the watch's present count
/// answers without a scan, and a change made just before the call is still reported, as a
/// session without a watch reports it.
#[test]
fn with_a_watch_changes_since_answers_at_once_and_misses_nothing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let repo = tmp.path().join("repo");
    for f in 0..20 {
        write(&repo.join(format!("d{}/f{f}.txt", f % 3)), b"steady\n");
    }
    let policy = json!({ "limits": { "max_index_bytes": 1 << 28 } });
    let open = |state: &str, watch: bool| {
        Session::builder(runtime())
            .repo(&repo)
            .state_dir(tmp.path().join(state))
            .policy(policy.clone())
            .watch_tree(watch)
            .build()
            .expect("session")
    };
    let (mut watched, mut plain) = (open("w", true), open("p", false));
    let token = |s: &mut Session, t: &Option<String>| {
        let args = match t {
            Some(t) => json!({ "token": t }),
            None => json!({}),
        };
        let v = call(s, "changes_since", args).expect("changes_since");
        let mut changes: Vec<String> = v["changes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| format!("{} {}", c["change"], c["path"]))
            .collect();
        changes.sort();
        (v["token"].as_str().unwrap().to_string(), changes)
    };
    let (mut tw, _) = token(&mut watched, &None);
    let (mut tp, _) = token(&mut plain, &None);
    for round in 0..30 {
        match round % 4 {
            0 => write(&repo.join(format!("new/n{round}.txt")), b"new\n"),
            1 => {
                let _ = std::fs::remove_file(repo.join(format!("d{}/f{round}.txt", round % 3)));
            }
            2 => write(
                &repo.join(format!("d{}/f{}.txt", round % 3, round % 20)),
                b"edited!\n",
            ),
            // Nothing changed: the watched answer comes from the count.
            _ => {}
        }
        let (nw, cw) = token(&mut watched, &Some(tw));
        let (np, cp) = token(&mut plain, &Some(tp));
        assert_eq!(cw, cp, "round {round}");
        if round % 4 == 3 {
            assert!(cw.is_empty(), "round {round}: {cw:?}");
        }
        (tw, tp) = (nw, np);
    }
}
