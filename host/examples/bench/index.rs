//! The `index` section: `search_text` through one long-lived session whose index is built,
//! against ripgrep (`rg -j1`) and against the same session's scan (the index turned off by
//! the policy), on the Linux tree; the build against one full scan; a new session loading
//! the index from the state directory; a search after 100 files were rewritten; the
//! index's size on disk against the text it covers.

use std::path::Path;
use std::time::{Duration, Instant};

use file_tools_host::{Runtime, Session};
use serde_json::json;

use super::{big_limits, gate, ms, policy, rg_count, rg_files, rss_kib, search_args};

/// From rare identifiers to common words; literals, case-insensitive, regexes with
/// literals, and one regex without any (which the index cannot narrow).
const QUERIES: &[(&str, bool, bool)] = &[
    ("xhci_hub_control", false, false),
    ("ext4_fill_super", false, false),
    ("btrfs_commit_transaction", false, false),
    ("tcp_v4_connect", false, false),
    ("kvm_vcpu_ioctl", false, false),
    ("nf_conntrack_in", false, false),
    ("drm_gem_object_put", false, false),
    ("usb_register_driver", false, false),
    ("sched_clock_register", false, false),
    ("Linus Torvalds", false, false),
    ("copy_from_user", false, false),
    ("spin_lock_irqsave", false, false),
    ("rcu_read_lock", false, false),
    ("container_of", false, false),
    ("MODULE_LICENSE", false, false),
    ("EXPORT_SYMBOL_GPL", false, false),
    ("kmalloc", false, false),
    ("return 0;", false, false),
    ("linux foundation", false, true),
    ("mutex_lock", false, true),
    (r"ext4_\w+_inode", true, false),
    (r"static\s+int\s+\w+_probe", true, false),
    (r"spin_lock\(&\w+->lock\)", true, false),
    (r"[A-Z]{4}_[0-9]{3}", true, false),
];

fn indexed_policy(on: bool) -> serde_json::Value {
    let mut p = policy();
    p["limits"]["max_index_bytes"] = json!(if on { 1u64 << 30 } else { 0 });
    p
}

fn open(rt: &Runtime, linux: &Path, state: &Path, on: bool) -> Session {
    open_with(rt, linux, state, on, false)
}

fn open_with(rt: &Runtime, linux: &Path, state: &Path, on: bool, watch: bool) -> Session {
    Session::builder(rt)
        .repo(linux)
        .policy(indexed_policy(on))
        .limits(big_limits())
        .state_dir(state)
        .watch_tree(watch)
        .build()
        .expect("session")
}

fn count(s: &mut Session, q: &str, regex: bool, ci: bool) -> u64 {
    s.search_text(&search_args(q, regex, ci))
        .expect("search")
        .total_matches
}

/// The middle time of three runs of the query, and its count.
fn median_of_3(s: &mut Session, q: &str, regex: bool, ci: bool) -> (Duration, u64) {
    let mut times = Vec::new();
    let mut n = 0;
    for _ in 0..3 {
        let (t, c) = timed(|| count(s, q, regex, ci));
        times.push(t);
        n = c;
    }
    times.sort();
    (times[1], n)
}

fn timed<T>(f: impl FnOnce() -> T) -> (Duration, T) {
    let t = Instant::now();
    let r = f();
    (t.elapsed(), r)
}

fn rg_timed(linux: &Path, q: &str, regex: bool, ci: bool) -> (Duration, (u64, u64)) {
    timed(|| rg_count(linux, q, regex, ci, Some(1)))
}

/// Bytes of the regular files below `dir` (what a full scan reads, roughly).
pub fn tree_bytes(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(e.path()),
                Ok(t) if t.is_file() => total += e.metadata().map_or(0, |m| m.len()),
                _ => {}
            }
        }
    }
    total
}

pub fn index_file_bytes(state: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![state.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.parent().and_then(|p| p.file_name()) == Some("index".as_ref()) {
                total += e.metadata().map_or(0, |m| m.len());
            }
        }
    }
    total
}

pub fn index_rows(rt: &Runtime, linux: &Path, corpus: &Path) {
    println!("\n## Search index (the Linux tree, one long-lived session)\n");
    let state = corpus.join("index-state");
    let _ = std::fs::remove_dir_all(&state);
    std::fs::create_dir_all(&state).expect("state directory");
    let rss0 = rss_kib();

    // Build: the first search reads every file, as a scan does, and records it.
    let mut s = open(rt, linux, &state, true);
    let (t_build, n_build) = timed(|| count(&mut s, "xhci_hub_control", false, false));
    let (t_rg, (n_rg, _)) = rg_timed(linux, "xhci_hub_control", false, false);
    let disk = index_file_bytes(&state);
    let text = tree_bytes(linux);
    println!("| measure | file-tools | peer | ratio |");
    println!("|---|---|---|---|");
    println!(
        "| build (first search, every file read and recorded, index saved) | {} | rg -j1 {} | {:.2}x {} |",
        ms(t_build),
        ms(t_rg),
        t_build.as_secs_f64() / t_rg.as_secs_f64(),
        gate(n_build == n_rg)
    );
    println!(
        "| index on disk against the tree's bytes | {:.1} MB | {:.1} MB | {:.3} |",
        disk as f64 / 1e6,
        text as f64 / 1e6,
        disk as f64 / text as f64
    );
    println!(
        "| bench process resident memory, growth over the build | {:.1} MB | | |",
        rss_kib().saturating_sub(rss0) as f64 / 1024.0
    );

    // A new session (what another process or the next CLI call sees): loads the index.
    let (t_new, n_new) = timed(|| {
        let mut fresh = open(rt, linux, &state, true);
        count(&mut fresh, "btrfs_commit_transaction", false, false)
    });
    let (t_rg2, (n_rg2, _)) = rg_timed(linux, "btrfs_commit_transaction", false, false);
    println!(
        "| new session + first search (index loaded from the state directory) | {} | rg -j1 {} | {:.2}x {} |",
        ms(t_new),
        ms(t_rg2),
        t_new.as_secs_f64() / t_rg2.as_secs_f64(),
        gate(n_new == n_rg2)
    );

    // Warm queries: without a watch (every directory and file looked at, the walk
    // replayed), and with the host's watch (nothing looked at while nothing changed).
    let mut scan = open(rt, linux, &state, false);
    let mut watched = open_with(rt, linux, &state, true, true);
    let _ = count(&mut watched, "xhci_hub_control", false, false);
    println!("\n| query | files matching (rg) | indexed p50 of 3 | with a watch, p50 of 3 | scan | rg -j1 | indexed / rg -j1 | watched / rg -j1 | indexed / scan | gate |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let mut watched_ratios = Vec::new();
    let mut watched_rare = Vec::new();
    let mut ratios = Vec::new();
    let mut rare = Vec::new();
    for &(q, regex, ci) in QUERIES {
        let (t_ix, n_ix) = median_of_3(&mut s, q, regex, ci);
        let (t_w, n_w) = median_of_3(&mut watched, q, regex, ci);
        let (t_scan, n_scan) = timed(|| count(&mut scan, q, regex, ci));
        let (t_rg, (n_rg, f_rg)) = rg_timed(linux, q, regex, ci);
        let r = t_ix.as_secs_f64() / t_rg.as_secs_f64();
        let rw = t_w.as_secs_f64() / t_rg.as_secs_f64();
        ratios.push(r);
        watched_ratios.push(rw);
        if f_rg < 780 {
            rare.push(t_ix);
            watched_rare.push(t_w);
        }
        println!(
            "| `{q}`{}{} | {f_rg} | {} | {} | {} | {} | {r:.3}x | {rw:.3}x | {:.2}x | {} |",
            if regex { " (regex)" } else { "" },
            if ci { " (-i)" } else { "" },
            ms(t_ix),
            ms(t_w),
            ms(t_scan),
            ms(t_rg),
            t_ix.as_secs_f64() / t_scan.as_secs_f64(),
            gate(n_ix == n_rg && n_scan == n_rg && n_w == n_rg)
        );
    }
    ratios.sort_by(f64::total_cmp);
    watched_ratios.sort_by(f64::total_cmp);
    rare.sort();
    watched_rare.sort();
    println!(
        "\nMedian over the {} queries, indexed / rg -j1: {:.3}x without a watch, {:.3}x with one; p50 of the {} queries matching under 1% of the files: {} without a watch, {} with one.",
        ratios.len(),
        ratios[ratios.len() / 2],
        watched_ratios[watched_ratios.len() / 2],
        rare.len(),
        rare.get(rare.len() / 2).map_or("-".into(), |t| ms(*t)),
        watched_rare.get(watched_rare.len() / 2).map_or("-".into(), |t| ms(*t))
    );

    // find_files over the whole tree: with the watch, the last whole walk (the searches
    // above recorded it) is replayed; without one, the tree is walked.
    let find = json!({ "patterns": ["*"], "max_results": 10_000_000 }).to_string();
    let files = |s: &mut Session| {
        let mut times = Vec::new();
        let mut n = 0;
        for _ in 0..3 {
            let (t, v) = timed(|| s.call("find_files", &find).expect("find"));
            times.push(t);
            n = v["paths"].as_array().map_or(0, |a| a.len());
        }
        times.sort();
        (times[1], n)
    };
    let (t_fw, n_fw) = files(&mut watched);
    let (t_fs, n_fs) = files(&mut s);
    let (t_rgf, _) = timed(|| rg_files(linux, Some(1)));
    println!(
        "\n| find_files, whole tree, with a watch (the last walk replayed), p50 of 3 | {} | rg --files -j1 {} | {:.3}x (walked: {}, {:.3}x) {} |",
        ms(t_fw),
        ms(t_rgf),
        t_fw.as_secs_f64() / t_rgf.as_secs_f64(),
        ms(t_fs),
        t_fs.as_secs_f64() / t_rgf.as_secs_f64(),
        gate(n_fw == n_fs && n_fw > 0)
    );

    // 100 files rewritten (same content: only their metadata moves, so the tree and the
    // other rows' answers stay the same): the next search reads and records them again.
    let mut changed = Vec::new();
    let mut stack = vec![linux.join("drivers/net")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if changed.len() < 100 && p.extension().is_some_and(|x| x == "c") {
                changed.push(p);
            }
        }
    }
    for p in &changed {
        if let Ok(b) = std::fs::read(p) {
            let _ = std::fs::write(p, b);
        }
    }
    let (t_after, n_after) = timed(|| count(&mut s, "tcp_v4_connect", false, false));
    let (t_w_after, n_w_after) = timed(|| count(&mut watched, "tcp_v4_connect", false, false));
    let (t_rg3, (n_rg3, _)) = rg_timed(linux, "tcp_v4_connect", false, false);
    println!(
        "\n| after 100 files rewritten: the next search (reads and records them again) | {} | rg -j1 {} | {:.3}x {} |",
        ms(t_after),
        ms(t_rg3),
        t_after.as_secs_f64() / t_rg3.as_secs_f64(),
        gate(n_after == n_rg3)
    );
    println!(
        "| the same with a watch (its count moved: the directories the changes touched listed again, the others kept by the host) | {} | rg -j1 {} | {:.3}x {} |",
        ms(t_w_after),
        ms(t_rg3),
        t_w_after.as_secs_f64() / t_rg3.as_secs_f64(),
        gate(n_w_after == n_rg3)
    );
}
