//! The `large` section: synthetic trees of 100,000 and 500,000 files (`synthetic.rs`;
//! other sizes with `FILE_TOOLS_BENCH_LARGE=100000,250000`), each through long-lived
//! sessions with the index on, one with the host's watch and one without: the index build,
//! a rare and a common search, `find_files` of the whole tree and `changes_since`, each
//! beside a peer measured in the same run (`rg -j1`, `rg --files -j1`, `git status`), and
//! how each figure grows from the smallest tree to the largest.
//! Calls over the default timeout or refused by a limit are listed (`limited.rs`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use file_tools_host::{index_build, Runtime, Session, ToolError};
use serde_json::{json, Value};

use super::index::{index_file_bytes, tree_bytes};
use super::limited::{timed, Limited};
use super::synthetic::{self, RARE};
use super::{gate, rg_count, rg_files, rss_kib};

const COMMON: &str = "return";
const CHANGED: usize = 100;

/// One figure of one tree: seconds or megabytes.
#[derive(Clone, Copy)]
enum Unit {
    Secs,
    Mb,
}

struct Row {
    name: String,
    ours: f64,
    peer: Option<(&'static str, f64)>,
    unit: Unit,
    gate: String,
}

fn show(v: f64, unit: Unit) -> String {
    match unit {
        Unit::Secs if v >= 10.0 => format!("{v:.1} s"),
        Unit::Secs if v >= 0.001 => format!("{:.1} ms", v * 1e3),
        Unit::Secs => format!("{:.1} µs", v * 1e6),
        Unit::Mb => format!("{v:.1} MB"),
    }
}

fn ratio(r: f64) -> String {
    if r < 0.001 {
        format!("{r:.1e}x")
    } else {
        format!("{r:.3}x")
    }
}

/// The rows of one tree, in the order they are printed.
#[derive(Default)]
struct Rows(Vec<Row>);

impl Rows {
    /// A time beside a peer's, and whether their answers agree.
    fn vs(&mut self, name: impl Into<String>, ours: f64, peer: (&'static str, f64), ok: bool) {
        let (name, gate) = (name.into(), format!(" {}", gate(ok)));
        let (peer, unit) = (Some(peer), Unit::Secs);
        self.0.push(Row {
            name,
            ours,
            peer,
            unit,
            gate,
        });
    }

    /// A figure without a peer.
    fn alone(&mut self, name: impl Into<String>, ours: f64, unit: Unit) {
        let (name, gate) = (name.into(), String::new());
        self.0.push(Row {
            name,
            ours,
            peer: None,
            unit,
            gate,
        });
    }
}

fn search(q: &'static str) -> impl Fn(&mut Session) -> Result<Value, ToolError> {
    move |s| {
        s.call(
            "search_text",
            &json!({ "query": q, "output": "count" }).to_string(),
        )
    }
}

fn find_all(s: &mut Session) -> Result<Value, ToolError> {
    s.call("find_files", r#"{"patterns":["*"],"max_results":10000000}"#)
}

fn changes(token: Option<&str>) -> impl Fn(&mut Session) -> Result<Value, ToolError> + '_ {
    move |s| s.call("changes_since", &json!({ "token": token }).to_string())
}

fn n_of(v: &Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .or_else(|| v[key].as_array().map(|a| a.len() as u64))
        .unwrap_or(0)
}

fn git_status(git: &Path, root: &Path) -> (f64, u64) {
    timed(|| {
        let out = synthetic::git_cmd(git, root)
            .args(["-c", "git status --porcelain"])
            .output()
            .expect("git status runs");
        String::from_utf8_lossy(&out.stdout).lines().count() as u64
    })
}

fn measure(rt: &Runtime, corpus: &Path, n: usize) -> (Vec<Row>, Vec<String>) {
    let root = synthetic::tree(corpus, n);
    let git = synthetic::git_dir(corpus, &root, n);
    let state = corpus.join(format!("synthetic-{n}-state"));
    let _ = std::fs::remove_dir_all(&state);
    std::fs::create_dir_all(&state).expect("state directory");
    let mut rows = Rows::default();
    let matches = |v: &Value| n_of(v, "total_matches");

    // One scan first, so that the build reads from the page cache as the peer measured
    // after it does (a tree pushed out by the other tree's work made a build look 3x
    // dearer than it is).
    rg_count(&root, RARE, false, false, Some(1));
    let rss0 = rss_kib();
    let mut w = Limited::open(rt, &root, &state, true);
    let (t, built) = w.run("index build", |s| index_build::build(s, None));
    let rss = rss_kib().saturating_sub(rss0) as f64 / 1024.0;
    let (t_rg, (n_rare, _)) = timed(|| rg_count(&root, RARE, false, false, Some(1)));
    let rg = ("rg -j1", t_rg);
    let read = n_of(&built, "files_searched");
    rows.vs("index build (`index_build::build`)", t, rg, read > 0);
    let disk = index_file_bytes(&state) as f64 / 1e6;
    rows.alone("index on disk", disk, Unit::Mb);
    rows.alone(
        "bench process resident memory, growth over the build",
        rss,
        Unit::Mb,
    );
    let (t, v) = w.p50("rare search, watch", search(RARE));
    let name = format!("rare query `{RARE}`, with the watch, p50 of 3");
    rows.vs(name, t, rg, matches(&v) == n_rare);

    let mut u = Limited::open(rt, &root, &state, false);
    let (t, v) = u.run("first search, new session", search(RARE));
    let name = "new session + first rare search (index loaded, no watch)";
    rows.vs(name, t, rg, matches(&v) == n_rare);
    let (t, v) = u.p50("rare search, no watch", search(RARE));
    rows.vs(
        "rare query, without a watch, p50 of 3",
        t,
        rg,
        matches(&v) == n_rare,
    );

    let (t_rgc, (n_common, _)) = timed(|| rg_count(&root, COMMON, false, false, Some(1)));
    let (t, v) = w.p50("common search, watch", search(COMMON));
    let name = format!("common query `{COMMON}` (every text file), with the watch, p50 of 3");
    rows.vs(name, t, ("rg -j1", t_rgc), matches(&v) == n_common);

    let (t_rgf, n_files) = timed(|| rg_files(&root, Some(1)));
    let rgf = ("rg --files -j1", t_rgf);
    let (t, v) = w.p50("find_files, watch", find_all);
    let name = "find_files, whole tree, with the watch (replayed), p50 of 3";
    rows.vs(name, t, rgf, n_of(&v, "paths") == n_files);
    let (t, v) = u.p50("find_files, no watch", find_all);
    let name = "find_files, whole tree, without a watch, p50 of 3";
    rows.vs(name, t, rgf, n_of(&v, "paths") == n_files);

    // changes_since: a first token from each session, then the tree unchanged and with
    // 100 files changed (each call passes the newest token, as an agent would).
    let token = |v: &Value| v["token"].as_str().unwrap_or_default().to_string();
    let mut tokens = Vec::new();
    for (s, label) in [(&mut w, "with the watch"), (&mut u, "without a watch")] {
        let (t, v) = s.run("changes_since, first token", changes(None));
        let name = format!("changes_since, first token (every file hashed), {label}");
        rows.alone(name, t, Unit::Secs);
        tokens.push(token(&v));
    }
    // Past the racy window of the first snapshots, and git's index refreshed once.
    std::thread::sleep(Duration::from_millis(2100));
    let _ = git_status(&git, &root);
    let sessions = [(&mut w, "with the watch"), (&mut u, "without a watch")];
    for (i, (s, label)) in sessions.into_iter().enumerate() {
        let (t_git, n_git) = git_status(&git, &root);
        let (t, v) = s.p50("changes_since, unchanged", changes(Some(&tokens[i])));
        let name = format!("changes_since, unchanged, {label}, p50 of 3");
        rows.vs(name, t, ("git status", t_git), n_of(&v, "changes") == n_git);
        tokens[i] = token(&v);
    }
    let chosen = change_files(&root, n);
    let (t_git, n_git) = git_status(&git, &root);
    let sessions = [(&mut w, "with the watch"), (&mut u, "without a watch")];
    for (i, (s, label)) in sessions.into_iter().enumerate() {
        let (t, v) = s.run("changes_since, 100 changed", changes(Some(&tokens[i])));
        let name = format!("changes_since, {CHANGED} files changed, {label}");
        let ok = n_of(&v, "changes") == n_git && n_git == CHANGED as u64;
        rows.vs(name, t, ("git status", t_git), ok);
    }
    for (p, old) in chosen {
        std::fs::write(p, old).expect("restore");
    }

    let text = tree_bytes(&root) as f64 / 1e6;
    let mut facts = vec![format!(
        "{n}: {n_files} files listed by rg, {text:.1} MB of text, {} on disk",
        disk_use(&root)
    )];
    let hits = w.hits.into_iter().chain(u.hits);
    facts.extend(hits.map(|h| format!("{n}: {h}")));
    (rows.0, facts)
}

/// Appends a line to `CHANGED` text files spread over the tree; returns them with their
/// contents before.
fn change_files(root: &Path, n: usize) -> Vec<(PathBuf, Vec<u8>)> {
    let change = |p: PathBuf| {
        let old = std::fs::read(&p).expect("a generated file");
        let new = [&old[..], b"// changed by the benchmark\n"].concat();
        std::fs::write(&p, new).expect("write");
        (p, old)
    };
    (0..CHANGED)
        .map(|j| change(root.join(synthetic::path_of(j * (n / CHANGED) + 5))))
        .collect()
}

fn disk_use(dir: &Path) -> String {
    let out = std::process::Command::new("du")
        .arg("-sh")
        .arg(dir)
        .output();
    out.map_or("?".into(), |o| {
        String::from_utf8_lossy(&o.stdout)
            .split_whitespace()
            .next()
            .unwrap_or("?")
            .to_string()
    })
}

pub fn large_rows(rt: &Runtime, corpus: &Path) {
    let sizes: Vec<usize> = std::env::var("FILE_TOOLS_BENCH_LARGE")
        .unwrap_or_else(|_| "100000,500000".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let runs: Vec<(Vec<Row>, Vec<String>)> =
        sizes.iter().map(|&n| measure(rt, corpus, n)).collect();
    let (Some(first), Some(last)) = (sizes.first(), sizes.last()) else {
        return;
    };
    println!("\n## Large synthetic trees (default fuel and memory limits)\n");
    let mut head = String::from("| measure |");
    for n in &sizes {
        head.push_str(&format!(" {n} files | peer | ratio |"));
    }
    println!("{head} growth {last}/{first} | peer's growth |");
    println!("|---|{}---|---|", "---|---|---|".repeat(sizes.len()));
    for (i, r) in runs[0].0.iter().enumerate() {
        let mut line = format!("| {} |", r.name);
        for (rows, _) in &runs {
            let x = &rows[i];
            match x.peer {
                Some((name, p)) => line.push_str(&format!(
                    " {} | {name} {} | {}{} |",
                    show(x.ours, x.unit),
                    show(p, x.unit),
                    ratio(x.ours / p),
                    x.gate
                )),
                None => line.push_str(&format!(" {} | | {} |", show(x.ours, x.unit), x.gate)),
            }
        }
        let (a, b) = (&runs[0].0[i], &runs[runs.len() - 1].0[i]);
        let peer = a
            .peer
            .zip(b.peer)
            .map_or(String::new(), |(pa, pb)| format!("{:.2}x", pb.1 / pa.1));
        println!("{line} {:.2}x | {peer} |", b.ours / a.ours);
    }
    println!();
    for f in runs.iter().flat_map(|r| &r.1) {
        println!("- {f}");
    }
}
