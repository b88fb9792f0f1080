//! The search index against the scan: random queries (literals in either case, regexes,
//! globs, small pages with cursors, every output) answered by a session with the index
//! and one without must agree in everything, while the tree is changed between queries —
//! files created, edited (also to the same size with the old modification time put
//! back), renamed, deleted, turned binary or secret-bearing. And the index must be used:
//! the indexed session reads far fewer bytes once its records are older than the
//! timestamp step.
#![allow(clippy::unwrap_used)]

use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};

use crate::api::{SearchOutput, SearchTextArgs, SearchTextResult};
use crate::audit::CallLog;
use crate::rules::fsx::Fs;
use crate::rules::policy::Policy;
use crate::tools::index::RACY_NS;
use crate::tools::session::Session;

const WORDS: &[&str] = &[
    "alpha",
    "Bravo",
    "charlie",
    "delta_echo",
    "Foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "LIMA",
    "mike",
    "november",
    "oscar",
    "papa",
    "quebec",
    "romeo",
    "sierra",
    "tango",
];

/// A seed from the clock (never 0), printed so that a failing run can be repeated.
pub(crate) fn clock_seed() -> u64 {
    let seed = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    eprintln!("seed {seed}");
    seed
}

/// Rewrites `victim` with `new` cut or padded to its old size and puts its modification
/// time back: a change that only the status change time and the content show.
pub(super) fn rewrite_keeping_size_and_mtime(victim: &Path, mut new: Vec<u8>) {
    let old = fs::read(victim).unwrap();
    let mtime = fs::metadata(victim).unwrap().modified().unwrap();
    new.resize(old.len(), b'\n');
    fs::write(victim, &new).unwrap();
    let f = fs::File::options().write(true).open(victim).unwrap();
    f.set_modified(mtime).unwrap();
}

/// A small deterministic generator (xorshift), so a failure repeats.
pub(super) struct Rng(pub(super) u64);

impl Rng {
    pub(super) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub(super) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// One of 57 words: a base word and one of three endings.
    pub(super) fn word(&mut self) -> String {
        let i = self.below(WORDS.len() * 3);
        format!(
            "{}{}",
            WORDS[i % WORDS.len()],
            ["xq", "zv", "jw"][i / WORDS.len()]
        )
    }
}

/// Lines drawn from five words of the vocabulary, so each word is in a few files only.
pub(super) fn text(r: &mut Rng, lines: usize) -> String {
    let mine: Vec<String> = (0..5).map(|_| r.word()).collect();
    (0..lines)
        .map(|_| {
            let (a, b) = (&mine[r.below(5)], &mine[r.below(5)]);
            format!("{a} {b} {}\n", r.below(1000))
        })
        .collect()
}

/// A policy with the index on (it is off by default).
pub(super) const ON: &str = r#"{"limits": {"max_index_bytes": 99999999}}"#;

pub(super) fn session(root: &Path, state: &Path, policy: &str) -> Session {
    let mut s = Session::new(Fs::open(root).unwrap(), Policy::from_json(policy).unwrap());
    s.state_dir = Some(state.to_path_buf());
    s
}

/// Listings with metadata natively, as the Rust host offers them (`read-dir-stat`), and
/// plain listings (`read-dir`), counted: a search that replays its last walk lists no
/// directory plainly.
#[derive(Debug)]
pub(crate) struct Listings {
    pub(crate) root: std::path::PathBuf,
    pub(crate) plain: std::sync::atomic::AtomicUsize,
}

fn entry_type(t: std::fs::FileType) -> crate::fs::port::EntryType {
    use crate::fs::port::EntryType;
    if t.is_symlink() {
        EntryType::Symlink
    } else if t.is_dir() {
        EntryType::Dir
    } else if t.is_file() {
        EntryType::File
    } else {
        EntryType::Other
    }
}

impl crate::rules::services::Services for Listings {
    fn read_dir(
        &self,
        dir: &crate::rules::path::LogicalPath,
    ) -> Option<std::io::Result<Vec<crate::fs::port::DirItem>>> {
        self.plain.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let rd = match fs::read_dir(self.root.join(dir.as_str())) {
            Ok(rd) => rd,
            Err(e) => return Some(Err(e)),
        };
        Some(Ok(rd
            .flatten()
            .map(|e| {
                let name = e.file_name().into_string().map_err(|_| ());
                (name, entry_type(e.file_type().unwrap()))
            })
            .collect()))
    }

    fn read_dir_stat(
        &self,
        dir: &crate::rules::path::LogicalPath,
    ) -> Option<std::io::Result<Vec<crate::rules::services::StatItem>>> {
        use std::os::unix::fs::MetadataExt;
        let rd = match fs::read_dir(self.root.join(dir.as_str())) {
            Ok(rd) => rd,
            Err(e) => return Some(Err(e)),
        };
        let ns = |s: i64, n: i64| {
            SystemTime::UNIX_EPOCH + Duration::from_secs(s as u64) + Duration::from_nanos(n as u64)
        };
        Some(Ok(rd
            .flatten()
            .filter_map(|e| {
                let m = fs::symlink_metadata(e.path()).ok()?;
                let st = crate::fs::port::Stat {
                    ty: entry_type(m.file_type()),
                    size: m.len(),
                    nlink: m.nlink(),
                    modified: Some(ns(m.mtime(), m.mtime_nsec())),
                    changed: Some(ns(m.ctime(), m.ctime_nsec())),
                    inode: Some(m.ino()),
                };
                Some((e.file_name().into_string().map_err(|_| ()), st))
            })
            .collect()))
    }
}

/// A session whose host lists with metadata; its count of plain listings.
fn listing_session(root: &Path, state: &Path, policy: &str) -> (Session, std::sync::Arc<Listings>) {
    let l = std::sync::Arc::new(Listings {
        root: root.to_path_buf(),
        plain: Default::default(),
    });
    let fs = Fs::open(root).unwrap().with_services(l.clone());
    let mut s = Session::new(fs, Policy::from_json(policy).unwrap());
    s.state_dir = Some(state.to_path_buf());
    (s, l)
}

/// Every page of a search, and the bytes it read.
pub(super) fn search(s: &Session, mut a: SearchTextArgs) -> (Vec<SearchTextResult>, u64) {
    let (mut pages, mut bytes) = (Vec::new(), 0);
    loop {
        let mut log = CallLog::default();
        let mut r = crate::tools::search::search_text(s, &mut log, &a).unwrap();
        bytes += log.bytes_read;
        let next = r.next_cursor.take();
        pages.push(r);
        match next {
            Some(c) if pages.len() < 50 => a.cursor = Some(c),
            _ => return (pages, bytes),
        }
    }
}

fn random_query(r: &mut Rng) -> SearchTextArgs {
    let w = r.word();
    let w = w.as_str();
    let (query, regex) = match r.below(9) {
        // Matches that may reach beyond ASCII: legacy and UTF-16 files are searched
        // decoded, and only the query's ASCII may narrow.
        6 => (format!("{}_?\\w+ \\d", &w[..4]), true),
        7 => ("Grüße aus".to_string(), false),
        8 => ("M\\w+chen".to_string(), true),
        0 => (w.to_string(), false),
        1 => (w[..3.min(w.len())].to_string(), false),
        2 => (format!("{w} \\w+ \\d+"), true),
        3 => (format!("(?:{w}|{})", r.word()), true),
        4 => ("zzz_absent".to_string(), false),
        _ => (format!("{} {}", w, r.word()), false),
    };
    SearchTextArgs {
        query,
        regex: Some(regex),
        case_insensitive: Some(r.below(3) == 0),
        max_matches: [None, Some(3), Some(40)][r.below(3)],
        output: Some(
            [
                SearchOutput::Matches,
                SearchOutput::Files,
                SearchOutput::Count,
            ][r.below(3)],
        ),
        include: if r.below(4) == 0 {
            vec!["d1/**".into()]
        } else {
            vec![]
        },
        ..Default::default()
    }
}

fn mutate(r: &mut Rng, root: &Path, step: usize) {
    let dir = root.join(format!("d{}", r.below(4)));
    let names: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    let victim = &names[r.below(names.len())];
    match r.below(9) {
        7 => {
            // The ignore file rewritten in place: its directory's times do not move.
            let gi = root.join("d3/.gitignore");
            let now = fs::read_to_string(&gi).unwrap_or_default();
            let next = if now.contains("f1") {
                "*.log\n"
            } else {
                "*.log\nf1*\n"
            };
            // (made again if an earlier change removed it).
            let mut f = fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .open(&gi)
                .unwrap();
            std::io::Write::write_all(&mut f, next.as_bytes()).unwrap();
        }
        8 => {
            let sub = dir.join(format!("sub{step}"));
            fs::create_dir(&sub).unwrap();
            fs::write(sub.join("x.txt"), text(r, 4)).unwrap();
        }
        0 => fs::write(dir.join(format!("new{step}.txt")), text(r, 5)).unwrap(),
        1 => {
            // Same size, new words, the old modification time put back.
            rewrite_keeping_size_and_mtime(victim, text(r, 40).into_bytes());
        }
        2 => {
            let to = root.join(format!("d{}/moved{step}.txt", r.below(4)));
            fs::rename(victim, to).unwrap();
        }
        3 => fs::remove_file(victim).unwrap(),
        4 => fs::write(victim, b"alpha\0binary now").unwrap(),
        5 => fs::write(
            victim,
            format!("alpha golf\nAKIA{}\n", "ABCDEFGHIJKLMNOP").as_bytes(),
        )
        .unwrap(),
        _ => {
            let mut f = fs::OpenOptions::new().append(true).open(victim).unwrap();
            std::io::Write::write_all(&mut f, text(r, 3).as_bytes()).unwrap();
        }
    }
}

pub(super) fn json(pages: &[SearchTextResult]) -> serde_json::Value {
    serde_json::to_value(pages).unwrap()
}

pub(super) fn settle() {
    std::thread::sleep(Duration::from_nanos(RACY_NS) + Duration::from_millis(150));
}

#[test]
fn indexed_searches_answer_exactly_what_scans_answer_while_the_tree_changes() {
    differential(false);
}

#[test]
fn replayed_walks_answer_exactly_what_scans_answer_while_the_tree_changes() {
    differential(true);
}

fn differential(listings: bool) {
    let seed = clock_seed();
    let mut r = Rng(seed);
    let repo = tempfile::tempdir().unwrap();
    let (st_on, st_off) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for d in 0..4 {
        fs::create_dir(repo.path().join(format!("d{d}"))).unwrap();
        for f in 0..30 {
            let lines = 20 + r.below(200);
            let body = text(&mut r, lines);
            fs::write(repo.path().join(format!("d{d}/f{f}.txt")), body).unwrap();
        }
    }
    fs::write(repo.path().join("d0/big.txt"), "alpha\n".repeat(40_000)).unwrap();
    fs::write(repo.path().join("d0/bin.dat"), b"alpha\0\x01\x02").unwrap();
    // Latin-1 and UTF-16 text: found by queries beyond ASCII, decoded.
    fs::create_dir(repo.path().join("enc")).unwrap();
    fs::write(
        repo.path().join("enc/latin1.c"),
        b"/* Gr\xfc\xdfe aus M\xfcnchen */\nalphaxq zvx 1\n",
    )
    .unwrap();
    let utf16: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain(
            "Grüße aus München\nmikejw 2\n"
                .encode_utf16()
                .flat_map(u16::to_le_bytes),
        )
        .collect();
    fs::write(repo.path().join("enc/wide.txt"), utf16).unwrap();
    let small_files =
        r#"{"limits": {"max_search_file_bytes": 100000, "max_index_bytes": 99999999}}"#;
    fs::write(repo.path().join("d3/.gitignore"), "*.log\n").unwrap();
    let (on, plain) = if listings {
        let (s, l) = listing_session(repo.path(), st_on.path(), small_files);
        (s, Some(l))
    } else {
        (session(repo.path(), st_on.path(), small_files), None)
    };
    let off = session(
        repo.path(),
        st_off.path(),
        r#"{"limits": {"max_search_file_bytes": 100000, "max_index_bytes": 0}}"#,
    );
    for round in 0..4 {
        settle();
        for q in 0..25 {
            let a = random_query(&mut r);
            let (mut got, _) = search(&on, a.clone());
            let (mut want, _) = search(&off, a.clone());
            for p in got.iter_mut().chain(want.iter_mut()) {
                p.next_cursor = None;
                p.summary = p.summary.replace(char::is_numeric, "");
            }
            assert_eq!(json(&got), json(&want), "round {round}, query {q}: {a:?}");
            if q % 5 == 4 {
                mutate(&mut r, repo.path(), round * 100 + q);
            }
        }
    }
    // Once the changes are older than the timestamp step, a query for a word (in a few
    // files each) reads only the files that may hold it.
    settle();
    let (mut read_on, mut read_off) = (0, 0);
    let mut plain_after_first = None;
    for _ in 0..10 {
        let a = SearchTextArgs {
            query: r.word(),
            ..Default::default()
        };
        let (got, b_on) = search(&on, a.clone());
        let (want, b_off) = search(&off, a);
        assert_eq!(json(&got), json(&want));
        read_on += b_on;
        read_off += b_off;
        if let Some(l) = &plain {
            let n = l.plain.load(std::sync::atomic::Ordering::SeqCst);
            // After the first search walks (the last changes were too recent to trust),
            // the others replay its walk: no directory is listed plainly again.
            assert_eq!(
                *plain_after_first.get_or_insert(n),
                n,
                "a search walked again"
            );
        }
    }
    // Positive control: the queries beyond ASCII find the encoded files, with the index
    // as without it.
    for (q, regex) in [("Grüße aus", false), ("M\\w+chen", true)] {
        let a = SearchTextArgs {
            query: q.into(),
            regex: Some(regex),
            ..Default::default()
        };
        let (got, _) = search(&on, a.clone());
        let (want, _) = search(&off, a);
        assert_eq!(json(&got), json(&want), "{q}");
        assert_eq!(got[0].files_matched, 2, "{q}: {:?}", got[0].files);
    }
    assert!(
        read_on * 3 < read_off,
        "the index saved too little: {read_on} bytes read against {read_off}"
    );
    // And it was saved for the next process.
    assert!(fs::read_dir(st_on.path().join("index")).unwrap().count() >= 1);
    assert!(!st_off.path().join("index").exists());
}

#[test]
fn a_new_session_uses_the_saved_index_and_refuses_a_damaged_one() {
    let repo = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let mut r = Rng(42);
    for f in 0..200 {
        let body = text(&mut r, 50);
        fs::write(repo.path().join(format!("f{f}.txt")), body).unwrap();
    }
    fs::write(repo.path().join("needle.txt"), "the rare_needle_here\n").unwrap();
    settle();
    let a = SearchTextArgs {
        query: "rare_needle_here".into(),
        ..Default::default()
    };
    let (first, full) = search(&session(repo.path(), state.path(), ON), a.clone());
    assert_eq!(first[0].total_matches, 1);
    // A new session (another process) loads the index the first one saved.
    let (again, narrow) = search(&session(repo.path(), state.path(), ON), a.clone());
    assert_eq!(again[0].total_matches, 1);
    assert!(narrow * 20 < full, "{narrow} bytes read against {full}");
    // A damaged index file is not trusted: the search reads everything again, and answers.
    let dir = state.path().join("index");
    let file = fs::read_dir(&dir).unwrap().next().unwrap().unwrap().path();
    let mut bytes = fs::read(&file).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 1;
    fs::write(&file, &bytes).unwrap();
    let (third, reread) = search(&session(repo.path(), state.path(), ON), a.clone());
    assert_eq!(third[0].total_matches, 1);
    assert_eq!(reread, full, "a damaged index must not spare a read");
    // A policy that differs gets an index of its own.
    let other = session(
        repo.path(),
        state.path(),
        r#"{"limits": {"max_read_lines": 99, "max_index_bytes": 99999999}}"#,
    );
    let (_, other_bytes) = search(&other, a);
    assert!(
        other_bytes * 2 > full,
        "another policy's search used this index"
    );
}

#[test]
fn a_secret_bearing_file_keeps_no_trigrams_and_changes_no_answer() {
    let repo = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let key = format!("AKIA{}", "QWERTYUIOPASDFGH");
    fs::write(
        repo.path().join("cfg.txt"),
        format!("key = {key}\nplain words\n"),
    )
    .unwrap();
    fs::write(repo.path().join("ok.txt"), "plain words\n").unwrap();
    settle();
    let s = session(repo.path(), state.path(), ON);
    for q in [key.as_str(), &key[..8], "plain words", "key = "] {
        let a = SearchTextArgs {
            query: q.into(),
            ..Default::default()
        };
        let (first, _) = search(&s, a.clone());
        let (second, _) = search(&s, a);
        assert_eq!(json(&first), json(&second), "{q}");
        assert!(first[0].files.iter().all(|f| f.path != "cfg.txt"), "{q}");
    }
    let ix = s.index.lock().unwrap();
    let ix = ix.as_ref().unwrap();
    let id = crate::tools::index::Identity::of(
        &s.fs
            .open_dir(&crate::rules::path::LogicalPath::parse_dir("").unwrap())
            .unwrap()
            .stat_at("cfg.txt")
            .unwrap()
            .unwrap(),
    );
    assert_eq!(
        ix.lookup("cfg.txt", &id),
        Some(&crate::tools::index::What::Secret)
    );
}

/// `list_dir` and `changes_since` take each entry's metadata from the host's listing with
/// metadata (no plain listing, no look per entry), and answer exactly as through the port.
#[test]
fn listings_with_metadata_answer_as_looks_through_the_port() {
    use crate::api::{ChangesSinceArgs, ListDirArgs};
    let repo = tempfile::tempdir().unwrap();
    let (st_a, st_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let root = repo.path();
    let write = |p: &Path, b: &[u8]| {
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, b).unwrap();
    };
    write(&root.join("src/a.rs"), b"fn a() {}\n");
    write(&root.join("src/deep/b.txt"), &b"words\n".repeat(300));
    write(&root.join(".env"), b"TOKEN=x\n");
    write(&root.join(".hidden/c.md"), b"# c\n");
    std::os::unix::fs::symlink("src/a.rs", root.join("link.rs")).unwrap();
    fs::hard_link(root.join("src/a.rs"), root.join("src/twin.rs")).unwrap();
    let (listed, l) = listing_session(root, st_a.path(), "{}");
    let mut plain = Session::new(Fs::open(root).unwrap(), Policy::from_json("{}").unwrap());
    plain.state_dir = Some(st_b.path().to_path_buf());
    let args = ListDirArgs {
        max_depth: Some(5),
        include_hidden: Some(true),
        ..Default::default()
    };
    let list =
        |s: &Session| crate::tools::list::list_dir(s, &mut CallLog::default(), &args).unwrap();
    let (a, b) = (list(&listed), list(&plain));
    let text = |r: &crate::api::ListDirResult| serde_json::to_string(&r.entries).unwrap();
    assert_eq!(text(&a), text(&b));
    assert!(a
        .entries
        .iter()
        .any(|e| e.path == "src/deep/b.txt" && e.size == 1800));
    assert_eq!(
        l.plain.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "a plain listing"
    );
    let changes = |s: &Session, token: Option<String>| {
        let a = ChangesSinceArgs {
            token,
            ..Default::default()
        };
        crate::tools::changes::changes_since(s, &mut CallLog::default(), &a).unwrap()
    };
    let (ta, tb) = (changes(&listed, None).token, changes(&plain, None).token);
    write(&root.join("src/deep/b.txt"), b"changed\n");
    write(&root.join("src/new.rs"), b"fn new() {}\n");
    let (ca, cb) = (changes(&listed, Some(ta)), changes(&plain, Some(tb)));
    let text = |r: &crate::api::ChangesSinceResult| serde_json::to_string(&r.changes).unwrap();
    assert_eq!(text(&ca), text(&cb));
    assert_eq!(ca.changes.len(), 2, "{:?}", ca.changes);
    assert_eq!(
        l.plain.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "a plain listing"
    );
}

/// A search of the whole tree forgets the records of files its walk no longer shows, and
/// only those: not the files a glob leaves unsearched, nor a record it replaced, and
/// nothing when it walks only a subdirectory or replays an unchanged walk (with the
/// host's listings, which let a search record its walk and replay it).
#[test]
fn a_whole_walk_forgets_deleted_files_and_keeps_every_file_it_showed() {
    for listings in [false, true] {
        forgets_what_the_walk_did_not_show(listings);
    }
}

fn forgets_what_the_walk_did_not_show(listings: bool) {
    let repo = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let root = repo.path();
    for (p, body) in [
        ("src/a.rs", "fn alpha() {}\n"),
        ("src/b.rs", "fn beta() {}\n"),
        ("docs/c.md", "fn in prose\n"),
        ("d.txt", "fn at the top\n"),
    ] {
        fs::create_dir_all(root.join(p).parent().unwrap()).unwrap();
        fs::write(root.join(p), body).unwrap();
    }
    settle();
    let (s, counted) = if listings {
        let (s, l) = listing_session(root, state.path(), ON);
        (s, Some(l))
    } else {
        (session(root, state.path(), ON), None)
    };
    let indexed = || {
        let ix = s.index.lock().unwrap();
        let mut paths: Vec<String> = ix
            .as_ref()
            .unwrap()
            .records()
            .map(|(p, _)| p.to_string())
            .collect();
        paths.sort();
        paths
    };
    let query = |q: &str, path: Option<&str>, include: &[&str]| SearchTextArgs {
        query: q.into(),
        path: path.map(str::to_string),
        include: include.iter().map(|g| g.to_string()).collect(),
        ..Default::default()
    };
    let all = ["d.txt", "docs/c.md", "src/a.rs", "src/b.rs"];
    let (r, _) = search(&s, query("fn ", None, &[]));
    assert_eq!(r[0].total_matches, 4);
    assert_eq!(indexed(), all);
    // Nothing moved: a second search keeps every record (replayed, with the listings: it
    // lists no directory plainly).
    let plain = || {
        counted
            .as_ref()
            .map(|l| l.plain.load(std::sync::atomic::Ordering::SeqCst))
    };
    let before = plain();
    search(&s, query("alpha", None, &[]));
    assert_eq!(indexed(), all);
    assert_eq!(plain(), before, "the unchanged walk was not replayed");
    // A walk of a subdirectory forgets nothing.
    fs::remove_file(root.join("src/b.rs")).unwrap();
    fs::remove_file(root.join("docs/c.md")).unwrap();
    let (r, _) = search(&s, query("fn ", Some("src"), &[]));
    assert_eq!(r[0].total_matches, 1);
    assert_eq!(indexed(), all, "a walk of a subdirectory forgot a record");
    // A glob narrows what is searched, not what the walk shows; a record replaced during
    // the walk is kept too.
    fs::write(root.join("src/a.rs"), "fn alpha() { changed }\n").unwrap();
    let (r, _) = search(&s, query("fn ", None, &["*.rs"]));
    assert_eq!(r[0].total_matches, 1);
    assert_eq!(indexed(), ["d.txt", "src/a.rs"]);
    let (r, _) = search(&s, query("changed", None, &[]));
    assert_eq!(r[0].total_matches, 1);
}

/// An index build saves every record it made, however few it added since its last save:
/// a new session then reads none of those files again (with the sixteenth-of-the-records
/// rule of other searches, the last files a checkpointed build recorded were left unsaved
/// and read again by every later process).
#[test]
fn an_index_build_saves_even_its_last_few_records() {
    let repo = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let mut r = Rng(7);
    // Text with many distinct trigrams, so that the index is past the size below which
    // any change is saved.
    let noise = |r: &mut Rng| -> String {
        (0..4000)
            .map(|i| {
                if i % 60 == 59 {
                    '\n'
                } else {
                    (b'a' + r.below(26) as u8) as char
                }
            })
            .collect()
    };
    for f in 0..600 {
        fs::write(repo.path().join(format!("f{f}.txt")), noise(&mut r)).unwrap();
    }
    settle();
    let probe = || SearchTextArgs {
        query: "no_file_holds_this_probe".into(),
        ..Default::default()
    };
    let mut builder = session(repo.path(), state.path(), ON);
    builder.index_builder = true;
    let (_, full) = search(&builder, probe());
    let weight = builder.index.lock().unwrap().as_ref().unwrap().weight();
    assert!(weight > 1 << 20, "the index weighs only {weight} bytes");
    // A few new files, fewer than any other search would save for.
    for f in 0..5 {
        fs::write(repo.path().join(format!("new{f}.txt")), noise(&mut r)).unwrap();
    }
    settle();
    let (_, added) = search(&builder, probe());
    assert!(added > 0 && added * 50 < full, "{added} of {full}");
    let (_, later) = search(&session(repo.path(), state.path(), ON), probe());
    assert_eq!(later, 0, "a new session read files the build had recorded");
    // The rule for other searches stands: their last few records are not saved.
    fs::write(repo.path().join("newest.txt"), noise(&mut r)).unwrap();
    settle();
    let (_, once) = search(&session(repo.path(), state.path(), ON), probe());
    let (_, again) = search(&session(repo.path(), state.path(), ON), probe());
    assert!(once > 0 && again == once, "{once} then {again}");
}
