#![allow(clippy::unwrap_used)]

use super::events::{watch_tree, Batch};
use super::*;
use rustix::fs::{AtFlags, OFlags};

/// A tree of `n` directories of ten subdirectories each below `at` (made elsewhere,
/// then moved in whole: the watch must walk it before the count moves).
fn tree(at: &Path, n: usize) {
    for i in 0..n {
        for j in 0..10 {
            std::fs::create_dir_all(at.join(format!("d{i}/e{j}"))).unwrap();
        }
    }
}

fn moves_in_and_counts(plant_foreign_cookie: bool) {
    let (_one, tmp, repo, state) = fresh();
    let held = std::fs::File::open(&repo).unwrap();
    let w = TreeWatch::start(&held, &state).unwrap();
    let other = TreeWatch::start(&held, &state).unwrap();
    if plant_foreign_cookie {
        // Another watch over the same state directory (two MCP servers on the same
        // repository and session name) reads its count often: its cookies run ahead.
        for _ in 0..50 {
            other.count().unwrap();
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let mut last = w.count().unwrap();
    for round in 0..5 {
        let outside = tmp.path().join(format!("outside{round}"));
        tree(&outside, 40);
        std::fs::rename(&outside, repo.join(format!("in{round}"))).unwrap();
        // The move completed before this read: the count must have moved.
        let now = w.count().unwrap();
        assert!(
            now > last,
            "round {round}: a move-in before the read was not counted"
        );
        last = now;
    }
}

/// The tests here run one at a time: one counts the process's watch threads.
static SERIAL: Mutex<()> = Mutex::new(());

/// One such test at a time (they count the watch threads), with an empty repository
/// and a state directory in a fresh temporary directory.
fn fresh() -> (
    std::sync::MutexGuard<'static, ()>,
    tempfile::TempDir,
    std::path::PathBuf,
    std::path::PathBuf,
) {
    let one = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let tmp = tempfile::tempdir().unwrap();
    let (repo, state) = (tmp.path().join("repo"), tmp.path().join("state"));
    std::fs::create_dir_all(&repo).unwrap();
    (one, tmp, repo, state)
}

fn watch_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .flatten()
        .filter(|t| {
            std::fs::read_to_string(t.path().join("comm"))
                .is_ok_and(|c| c.starts_with("file-tools-tree"))
        })
        .count()
}

/// More events than the kernel queues while the thread cannot take them: the count is
/// no longer exact, and says so, for good; dropping the watch ends its thread.
#[test]
fn an_overflowed_queue_makes_the_count_unknown_and_a_dropped_watch_ends_its_thread() {
    let (_one, _tmp, repo, state) = fresh();
    // The other tests' watches are dropped: their threads end at their next wake.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while watch_threads() > 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let before = watch_threads();
    let w = TreeWatch::start(&std::fs::File::open(&repo).unwrap(), &state).unwrap();
    // The thread names itself once it runs.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while watch_threads() == before && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(watch_threads(), before + 1);
    assert!(w.count().is_some(), "positive control: an exact count");
    let queued: usize = std::fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
        .map_or(16_384, |t| t.trim().parse().unwrap_or(16_384));
    {
        // The thread blocks on the count's lock after its next batch.
        let _held = w.shared.0.lock().unwrap();
        std::fs::write(repo.join("first"), b"x").unwrap();
        std::thread::sleep(Duration::from_millis(100));
        // Names of their own, so that no event merges with the one before.
        for i in 0..queued + 10 {
            std::fs::write(repo.join(format!("f{i}")), b"x").unwrap();
        }
    }
    assert_eq!(w.count(), None, "an overflowed count was taken for exact");
    assert_eq!(w.count(), None);
    drop(w);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while watch_threads() > before && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(watch_threads(), before, "the watch's thread outlived it");
}

/// Where a change lands: an edit stamps its directory only, a file made or removed
/// its parent too (the directory's own times are in the parent's listing); a
/// directory moved in or away stamps everything, and so does a second name for a file.
/// A directory not yet there is not watched (nothing kept for it answers); one moved
/// in is watched from then on. Each beside a directory left alone.
#[test]
fn a_change_stamps_the_listings_it_may_have_changed() {
    let (_one, tmp, repo, state) = fresh();
    for d in ["a/b/c", "z/y"] {
        std::fs::create_dir_all(repo.join(d)).unwrap();
    }
    std::fs::write(repo.join("a/b/c/f"), b"one").unwrap();
    let w = TreeWatch::start(&std::fs::File::open(&repo).unwrap(), &state).unwrap();
    let changed = |before: Synced| -> Vec<&str> {
        ["", "a", "a/b", "a/b/c", "z", "z/y", "n", "n/m"]
            .into_iter()
            .filter(|d| !w.unchanged_since(d, before.seq))
            .collect()
    };
    let s = w.sync().unwrap();
    assert_eq!(changed(s), ["n", "n/m"], "nothing changed yet");
    std::fs::write(repo.join("a/b/c/f"), b"two").unwrap();
    w.sync().unwrap();
    assert_eq!(changed(s), ["a/b/c", "n", "n/m"], "an edit");
    let s = w.sync().unwrap();
    std::fs::write(repo.join("a/b/c/g"), b"new").unwrap();
    w.sync().unwrap();
    assert_eq!(changed(s), ["a/b", "a/b/c", "n", "n/m"], "a file made");
    let s = w.sync().unwrap();
    let outside = tmp.path().join("n");
    std::fs::create_dir_all(outside.join("m")).unwrap();
    std::fs::rename(&outside, repo.join("n")).unwrap();
    w.sync().unwrap();
    assert_eq!(changed(s).len(), 8, "a subtree moved in: {:?}", changed(s));
    let s = w.sync().unwrap();
    assert!(changed(s).is_empty(), "then watched: {:?}", changed(s));
    std::fs::hard_link(repo.join("a/b/c/f"), repo.join("z/f2")).unwrap();
    w.sync().unwrap();
    assert_eq!(changed(s).len(), 8, "a second name: {:?}", changed(s));
    let s = w.sync().unwrap();
    std::fs::rename(repo.join("a/b"), repo.join("z/b")).unwrap();
    w.sync().unwrap();
    assert_eq!(
        changed(s).len(),
        8,
        "a directory moved away: {:?}",
        changed(s)
    );
}

/// A second name made for a file, used to rewrite it (same size, old time put back)
/// and then taken by another file before the watch's thread looks at it (removed and
/// made again, or renamed over): the look finds one link, but the change of the name
/// before the thread's own cookie stamps everything, so the first file's directory is
/// not trusted with its old times.
#[test]
fn a_second_name_taken_again_before_the_look_still_stamps_everything() {
    let removed = |g: &Path| {
        std::fs::remove_file(g).unwrap();
        std::fs::write(g, b"new one").unwrap();
    };
    let renamed_over = |g: &Path| {
        std::fs::rename(g.with_file_name("spare"), g).unwrap();
    };
    for (how, take) in [
        ("removed", &removed as &dyn Fn(&Path)),
        ("renamed over", &renamed_over),
    ] {
        let (_one, _tmp, repo, state) = fresh();
        for d in ["a", "b", "q"] {
            std::fs::create_dir_all(repo.join(d)).unwrap();
        }
        std::fs::write(repo.join("a/f"), b"first").unwrap();
        std::fs::write(repo.join("b/spare"), b"spare").unwrap();
        let w = TreeWatch::start(&std::fs::File::open(&repo).unwrap(), &state).unwrap();
        let s = w.sync().unwrap();
        {
            // The thread blocks on the count's lock after its next batch, so that all
            // of what follows waits in the queue for one look.
            let _held = w.shared.0.lock().unwrap();
            std::fs::write(repo.join("q/wake"), b"x").unwrap();
            std::thread::sleep(Duration::from_millis(100));
            let (f, g) = (repo.join("a/f"), repo.join("b/g"));
            let when = std::fs::metadata(&f).unwrap().modified().unwrap();
            std::fs::hard_link(&f, &g).unwrap();
            std::fs::write(&g, b"other").unwrap();
            let file = std::fs::File::options().write(true).open(&g).unwrap();
            file.set_modified(when).unwrap();
            take(&g);
        }
        w.sync().unwrap();
        assert!(
            !w.unchanged_since("a", s.seq),
            "{how}: the first file's directory was trusted"
        );
        // Positive control: a file made under a new name, with one link, stamps no
        // more than its directory and parent.
        let s = w.sync().unwrap();
        std::fs::write(repo.join("b/h"), b"single").unwrap();
        w.sync().unwrap();
        assert!(
            w.unchanged_since("a", s.seq) && !w.unchanged_since("b", s.seq),
            "{how}"
        );
    }
}

/// A directory reached through a symlink is never watched under the link's path.
#[test]
fn a_directory_is_never_watched_through_a_symlink() {
    let (_one, _tmp, repo, _state) = fresh();
    std::fs::create_dir_all(repo.join("real/x")).unwrap();
    std::os::unix::fs::symlink("real", repo.join("alias")).unwrap();
    let root = std::fs::File::open(&repo).unwrap();
    let inotify = Inotify::init().unwrap();
    let (mut watches, mut dirs, mut b) = (inotify.watches(), HashMap::new(), Batch::default());
    watch_tree(&mut watches, &mut dirs, &root, Path::new("alias/x"), &mut b).unwrap();
    watch_tree(&mut watches, &mut dirs, &root, Path::new("alias"), &mut b).unwrap();
    assert!(b.paths.is_empty() && dirs.is_empty(), "{:?}", b.paths);
    // Positive control: the directory itself, by its own path.
    watch_tree(&mut watches, &mut dirs, &root, Path::new("real"), &mut b).unwrap();
    let watched: Vec<_> = b.paths.iter().map(|(d, what)| (d.clone(), *what)).collect();
    assert_eq!(
        watched,
        [
            (PathBuf::from("real"), super::events::Watched::Now),
            (PathBuf::from("real/x"), super::events::Watched::Now)
        ]
    );
}

#[test]
fn a_change_before_the_read_is_counted() {
    moves_in_and_counts(false);
}

#[test]
fn another_watchs_cookie_in_the_same_state_directory_does_not_cut_the_wait_short() {
    moves_in_and_counts(true);
}

/// A write through a file opened without a name (`O_TMPFILE`) and then linked in: the
/// event names the directory it was opened in, not the one it is listed in, so it stamps
/// everything.
#[test]
fn a_write_through_a_file_made_without_a_name_stamps_everything() {
    let (_one, _tmp, repo, state) = fresh();
    for d in ["a", "b"] {
        std::fs::create_dir_all(repo.join(d)).unwrap();
    }
    let w = TreeWatch::start(&std::fs::File::open(&repo).unwrap(), &state).unwrap();
    let fd = rustix::fs::openat(
        rustix::fs::CWD,
        repo.join("b"),
        OFlags::WRONLY | OFlags::TMPFILE,
        rustix::fs::Mode::from_raw_mode(0o644),
    )
    .unwrap();
    rustix::fs::linkat(
        rustix::fs::CWD,
        format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&fd)),
        rustix::fs::CWD,
        repo.join("a/g"),
        AtFlags::SYMLINK_FOLLOW,
    )
    .unwrap();
    // The thread's own cookie has confirmed `a/g` once a second read of the count is done.
    w.sync().unwrap();
    w.sync().unwrap();
    let s = w.sync().unwrap();
    rustix::io::write(&fd, b"unnamed").unwrap();
    w.sync().unwrap();
    assert!(
        !w.unchanged_since("a", s.seq),
        "a write through a file made without a name"
    );
    // Positive control: a write through a name that is there stamps its directory only.
    std::fs::write(repo.join("b/plain"), b"x").unwrap();
    let s = w.sync().unwrap();
    std::fs::OpenOptions::new()
        .append(true)
        .open(repo.join("b/plain"))
        .and_then(|mut f| std::io::Write::write_all(&mut f, b"y"))
        .unwrap();
    w.sync().unwrap();
    assert!(w.unchanged_since("a", s.seq) && !w.unchanged_since("b", s.seq));
}

/// A file with a second name, open through that name, which is then removed: a write
/// through the descriptor is reported to the removed name's directory, not to the first
/// name's. Not seen (SECURITY.md, claim 26: a limit of the listings the host keeps);
/// ignored, it fails. Stamping every write to a name once removed would see it, but git
/// removes and makes its lock files again at every `git status`, and the cache would then
/// keep nothing.
#[test]
#[ignore = "shows a limit: a write through a removed second name is reported elsewhere"]
fn a_write_through_a_removed_second_name_is_seen() {
    use std::io::Write as _;
    let (_one, _tmp, repo, state) = fresh();
    for d in ["a", "b"] {
        std::fs::create_dir_all(repo.join(d)).unwrap();
    }
    std::fs::write(repo.join("a/f"), b"first").unwrap();
    std::fs::hard_link(repo.join("a/f"), repo.join("b/n")).unwrap();
    let w = TreeWatch::start(&std::fs::File::open(&repo).unwrap(), &state).unwrap();
    let mut held = std::fs::File::options()
        .append(true)
        .open(repo.join("b/n"))
        .unwrap();
    std::fs::remove_file(repo.join("b/n")).unwrap();
    let s = w.sync().unwrap();
    held.write_all(b" more").unwrap();
    w.sync().unwrap();
    assert!(
        !w.unchanged_since("a", s.seq),
        "a write through a removed name"
    );
}

/// A directory moved away is no longer watched under its path, nor is anything below it
/// (on a directory that folds case, another directory made there would answer to the old
/// spelling, and no stamp would name it); one renamed back and forth in one go ends
/// watched under its last name only.
#[test]
fn a_directory_moved_away_is_watched_under_its_path_no_more() {
    let (_one, tmp, repo, state) = fresh();
    std::fs::create_dir_all(repo.join("src/deep")).unwrap();
    std::fs::create_dir_all(repo.join("keep")).unwrap();
    let held = std::fs::File::open(&repo).unwrap();
    let w = TreeWatch::start(&held, &state).unwrap();
    let now = w.sync().unwrap().count;
    for d in ["", "src", "src/deep", "keep"] {
        assert!(w.changed_dirs(now, d).is_some(), "positive control: {d}");
    }
    std::fs::rename(repo.join("src"), tmp.path().join("out")).unwrap();
    for i in 0..3 {
        std::fs::rename(repo.join("keep"), repo.join("kept")).unwrap();
        std::fs::rename(repo.join("kept"), repo.join("keep")).unwrap();
        std::fs::rename(repo.join("keep"), repo.join(format!("k{i}"))).unwrap();
        std::fs::rename(repo.join(format!("k{i}")), repo.join("keep")).unwrap();
    }
    std::fs::rename(repo.join("keep"), repo.join("last")).unwrap();
    let now = w.sync().unwrap().count;
    let c = w.shared.0.lock().unwrap();
    let watched: std::collections::BTreeSet<_> = c.watched.iter().cloned().collect();
    assert_eq!(
        watched,
        ["", "last"].into_iter().map(PathBuf::from).collect(),
        "watched after the moves"
    );
    drop(c);
    // Everything was stamped since the first count; from the new one, the root answers.
    assert!(w.changed_dirs(now, "").is_some());
    assert!(w.changed_dirs(now, "src").is_none());
}
