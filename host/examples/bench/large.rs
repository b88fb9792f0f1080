//! The `large` section: synthetic trees of 100,000 and 500,000 files (`synthetic.rs`;
//! other sizes with `FILE_TOOLS_BENCH_LARGE=100000,250000`), each through long-lived
//! sessions with the index on, one with the host's watch and one without: the index build,
//! a rare and a common search, `find_files` of the whole tree and `changes_since`, each
//! beside a peer measured in the same run (`rg -j1`, `rg --files -j1`, `git status`), and
//! how each figure grows from the smallest tree to the largest.
//!
//! The sessions keep the default fuel and memory limits but a long wall-clock limit, so
//! that a call past the default 60 s is measured to its end and reported as over the
//! limit; a call refused by another limit is reported and measured again in a session with
//! the benchmark's large limits.

use std::path::Path;
use std::time::{Duration, Instant};

use file_tools_host::{code_name, index_build, Limits, Runtime, Session, ToolError};
use serde_json::{json, Value};

use super::index::{index_file_bytes, tree_bytes};
use super::synthetic::{self, RARE};
use super::{big_limits, gate, policy, rg_count, rg_files, rss_kib};

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

fn timed<T>(f: impl FnOnce() -> T) -> (f64, T) {
    let t = Instant::now();
    let r = f();
    (t.elapsed().as_secs_f64(), r)
}

/// A long-lived session of one tree and what its calls ran into.
struct Tree<'a> {
    rt: &'a Runtime,
    root: &'a Path,
    state: &'a Path,
    watch: bool,
    s: Session,
    big: Option<Session>,
    hits: Vec<String>,
}

impl<'a> Tree<'a> {
    fn open(rt: &'a Runtime, root: &'a Path, state: &'a Path, watch: bool) -> Self {
        let limits = Limits {
            timeout: Duration::from_secs(3600),
            ..Limits::default()
        };
        let s = session(rt, root, state, watch, limits);
        Tree {
            rt,
            root,
            state,
            watch,
            s,
            big: None,
            hits: Vec::new(),
        }
    }

    /// Runs `f` in the session; past the default timeout, or refused by a limit (then run
    /// again with large limits), it is noted. The time is the answering run's.
    fn run(
        &mut self,
        what: &str,
        f: impl Fn(&mut Session) -> Result<Value, ToolError>,
    ) -> (f64, Value) {
        let (t, r) = timed(|| f(&mut self.s));
        let default = Limits::default().timeout.as_secs_f64();
        if t > default {
            self.hits.push(format!(
                "{what}: {t:.1} s, over the default {default:.0} s call timeout"
            ));
        }
        match r {
            Ok(v) => (t, v),
            Err(e) => {
                self.hits.push(format!(
                    "{what}: {} after {t:.1} s ({}); measured again with large limits",
                    code_name(e.code),
                    e.message
                ));
                let (rt, root, state, watch) = (self.rt, self.root, self.state, self.watch);
                let big = self
                    .big
                    .get_or_insert_with(|| session(rt, root, state, watch, big_limits()));
                let (t, r) = timed(|| f(big));
                (t, r.unwrap_or_else(|e| panic!("{what}: {}", e.message)))
            }
        }
    }

    /// The middle time of three runs, and the last answer.
    fn p50(
        &mut self,
        what: &str,
        f: impl Fn(&mut Session) -> Result<Value, ToolError>,
    ) -> (f64, Value) {
        let mut times = Vec::new();
        let mut last = Value::Null;
        for _ in 0..3 {
            let (t, v) = self.run(what, &f);
            times.push(t);
            last = v;
        }
        times.sort_by(f64::total_cmp);
        (times[1], last)
    }
}

fn session(rt: &Runtime, root: &Path, state: &Path, watch: bool, limits: Limits) -> Session {
    let mut p = policy();
    p["limits"]["max_index_bytes"] = json!(1u64 << 30);
    Session::builder(rt)
        .repo(root)
        .policy(p)
        .limits(limits)
        .state_dir(state)
        .watch_tree(watch)
        .index_builder(watch)
        .build()
        .expect("session")
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
    let mut rows = Vec::new();
    let mut row =
        |name: &str, ours: f64, peer: Option<(&'static str, f64)>, unit, ok: Option<bool>| {
            let g = ok.map_or(String::new(), |ok| format!(" {}", gate(ok)));
            rows.push(Row {
                name: name.into(),
                ours,
                peer,
                unit,
                gate: g,
            });
        };
    let secs = Unit::Secs;

    let rss0 = rss_kib();
    let mut w = Tree::open(rt, &root, &state, true);
    let (t_build, built) = w.run("index build", |s| index_build::build(s, None));
    let rss = rss_kib().saturating_sub(rss0) as f64 / 1024.0;
    let (t_rg, (n_rare, _)) = timed(|| rg_count(&root, RARE, false, false, Some(1)));
    row(
        "index build (`index_build::build`)",
        t_build,
        Some(("rg -j1", t_rg)),
        secs,
        Some(n_of(&built, "files_searched") > 0),
    );
    row(
        "index on disk",
        index_file_bytes(&state) as f64 / 1e6,
        None,
        Unit::Mb,
        None,
    );
    row(
        "bench process resident memory, growth over the build",
        rss,
        None,
        Unit::Mb,
        None,
    );
    let (t, v) = w.p50("rare search, watch", search(RARE));
    row(
        &format!("rare query `{RARE}`, with the watch, p50 of 3"),
        t,
        Some(("rg -j1", t_rg)),
        secs,
        Some(n_of(&v, "total_matches") == n_rare),
    );

    let mut u = Tree::open(rt, &root, &state, false);
    let (t, v) = u.run("first search, new session", search(RARE));
    row(
        "new session + first rare search (index loaded, no watch)",
        t,
        Some(("rg -j1", t_rg)),
        secs,
        Some(n_of(&v, "total_matches") == n_rare),
    );
    let (t, v) = u.p50("rare search, no watch", search(RARE));
    row(
        "rare query, without a watch, p50 of 3",
        t,
        Some(("rg -j1", t_rg)),
        secs,
        Some(n_of(&v, "total_matches") == n_rare),
    );

    let (t_rgc, (n_common, _)) = timed(|| rg_count(&root, COMMON, false, false, Some(1)));
    let (t, v) = w.p50("common search, watch", search(COMMON));
    row(
        &format!("common query `{COMMON}` (every text file), with the watch, p50 of 3"),
        t,
        Some(("rg -j1", t_rgc)),
        secs,
        Some(n_of(&v, "total_matches") == n_common),
    );

    let (t_rgf, n_files) = timed(|| rg_files(&root, Some(1)));
    let (t, v) = w.p50("find_files, watch", find_all);
    row(
        "find_files, whole tree, with the watch (replayed), p50 of 3",
        t,
        Some(("rg --files -j1", t_rgf)),
        secs,
        Some(n_of(&v, "paths") == n_files),
    );
    let (t, v) = u.p50("find_files, no watch", find_all);
    row(
        "find_files, whole tree, without a watch, p50 of 3",
        t,
        Some(("rg --files -j1", t_rgf)),
        secs,
        Some(n_of(&v, "paths") == n_files),
    );

    // changes_since: a first token from each session, then the tree unchanged and with
    // 100 files changed (each call passes the newest token, as an agent would).
    let mut tokens = Vec::new();
    for (tree, label) in [(&mut w, "with the watch"), (&mut u, "without a watch")] {
        let (t, v) = tree.run("changes_since, first token", changes(None));
        row(
            &format!("changes_since, first token (every file hashed), {label}"),
            t,
            None,
            secs,
            None,
        );
        tokens.push(v["token"].as_str().unwrap_or_default().to_string());
    }
    std::thread::sleep(Duration::from_millis(2100));
    let _ = git_status(&git, &root);
    for (i, (tree, label)) in [(&mut w, "with the watch"), (&mut u, "without a watch")]
        .into_iter()
        .enumerate()
    {
        let (t_git, n_git) = git_status(&git, &root);
        let (t, v) = tree.p50("changes_since, unchanged", changes(Some(&tokens[i])));
        row(
            &format!("changes_since, unchanged, {label}, p50 of 3"),
            t,
            Some(("git status", t_git)),
            secs,
            Some(n_of(&v, "changes") == n_git),
        );
        tokens[i] = v["token"].as_str().unwrap_or_default().to_string();
    }
    let chosen: Vec<(std::path::PathBuf, Vec<u8>)> = (0..CHANGED)
        .map(|j| root.join(synthetic::path_of(j * (n / CHANGED) + 5)))
        .map(|p| {
            let old = std::fs::read(&p).expect("a generated file");
            let mut new = old.clone();
            new.extend_from_slice(b"// changed by the benchmark\n");
            std::fs::write(&p, new).expect("write");
            (p, old)
        })
        .collect();
    let (t_git, n_git) = git_status(&git, &root);
    for (i, (tree, label)) in [(&mut w, "with the watch"), (&mut u, "without a watch")]
        .into_iter()
        .enumerate()
    {
        let (t, v) = tree.run("changes_since, 100 changed", changes(Some(&tokens[i])));
        row(
            &format!("changes_since, {CHANGED} files changed, {label}"),
            t,
            Some(("git status", t_git)),
            secs,
            Some(n_of(&v, "changes") == n_git && n_git == CHANGED as u64),
        );
    }
    for (p, old) in chosen {
        std::fs::write(p, old).expect("restore");
    }

    let mut facts = vec![format!(
        "{n}: {n_files} files listed by rg, {:.1} MB of text, {} on disk",
        tree_bytes(&root) as f64 / 1e6,
        disk_use(&root)
    )];
    facts.extend(
        w.hits
            .into_iter()
            .chain(u.hits)
            .map(|h| format!("{n}: {h}")),
    );
    (rows, facts)
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
