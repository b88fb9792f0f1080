//! A count of the changes below the repository, exact at the moment it is read, for the
//! component's search index: when the count has not moved since the index's last walk,
//! nothing below the repository changed, and the index needs no look at any file.
//!
//! One inotify instance watches every directory of the repository (never through a
//! symlink) and a `cookies/` directory in the session's state directory. Every event below
//! the repository moves the count; a directory created or moved in is watched, with all its
//! subdirectories, before the count moves, so a file made in it before its watch existed
//! is still covered by that move. To read the count, a caller creates a cookie file and
//! waits until the watch thread has seen the cookie's own event: inotify queues the
//! events of one instance in order, so every change completed before the cookie was made
//! has been counted by then (Watchman's cookie files, kept out of the repository here).
//!
//! When the queue overflows, a watch cannot be added (the system's limit), or the thread
//! ends, the count is no longer exact and [`TreeWatch::count`] answers `None` from then on:
//! the index then looks at every file, as without a watch.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask, Watches};

/// How long a read of the count waits for its cookie before giving up (answering `None`).
const COOKIE_WAIT: Duration = Duration::from_secs(2);

#[derive(Debug, Default)]
struct Count {
    changes: u64,
    /// The newest cookie the thread has seen.
    cookie: u64,
    /// The count is no longer exact.
    broken: bool,
    /// The watch was dropped: the thread ends at its next wake.
    stop: bool,
}

/// The watch; dropping it ends the thread (its inotify descriptor closes with it).
#[derive(Debug)]
pub(crate) struct TreeWatch {
    shared: Arc<(Mutex<Count>, Condvar)>,
    cookies: PathBuf,
    /// The start of this watch's cookie names (see [`cookie_prefix`]).
    prefix: String,
    next_cookie: Mutex<u64>,
}

/// The names of one watch's cookies start with the process and the watch's address, so
/// that another watch over the same state directory (another process serving the same
/// repository, or another session) never has its cookies taken for this one's: a cookie
/// of another further ahead would end this watch's wait before its own cookie's event, and
/// with it the guarantee that every earlier change was counted.
fn cookie_prefix(shared: &Arc<(Mutex<Count>, Condvar)>) -> String {
    format!(
        "c{}-{:x}-",
        std::process::id(),
        Arc::as_ptr(shared) as usize
    )
}

fn repo_mask() -> WatchMask {
    WatchMask::CREATE
        | WatchMask::DELETE
        | WatchMask::MODIFY
        | WatchMask::ATTRIB
        | WatchMask::CLOSE_WRITE
        | WatchMask::MOVED_FROM
        | WatchMask::MOVED_TO
        | WatchMask::DELETE_SELF
        | WatchMask::MOVE_SELF
        | WatchMask::DONT_FOLLOW
        | WatchMask::ONLYDIR
}

/// Watches the directory `rel` below `base` and every directory below it (not through
/// symlinks), recording each watch's directory relative to `base`.
///
/// `base` is `/proc/self/fd/N` of the repository directory the session holds: a path
/// through it reaches that very directory however it, or a directory above it, was
/// renamed since (a stored absolute path would name nothing then, or another directory,
/// and a directory made later would go unwatched).
fn watch_tree(
    watches: &mut Watches,
    dirs: &mut HashMap<WatchDescriptor, PathBuf>,
    base: &Path,
    rel: &Path,
) -> std::io::Result<()> {
    let mut stack = vec![rel.to_path_buf()];
    while let Some(d) = stack.pop() {
        let full = base.join(&d);
        // The root is reached through the descriptor's link, which must be followed.
        let mask = if d.as_os_str().is_empty() {
            repo_mask() & !WatchMask::DONT_FOLLOW
        } else {
            repo_mask()
        };
        match watches.add(&full, mask) {
            Ok(wd) => {
                dirs.insert(wd, d.clone());
            }
            // Gone or replaced by a non-directory since it was seen: its parent's event
            // covers it.
            Err(e) if matches!(e.raw_os_error(), Some(2 | 20)) => continue,
            Err(e) => return Err(e),
        }
        let Ok(entries) = std::fs::read_dir(&full) else {
            continue;
        };
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(d.join(e.file_name()));
            }
        }
    }
    Ok(())
}

impl TreeWatch {
    /// Watches the repository directory `repo` (the session's own descriptor of it: the
    /// watch follows that directory, not its path), with its cookies in
    /// `state_dir/cookies`.
    ///
    /// # Errors
    /// The operating system's, when inotify or a watch cannot be set up, or the
    /// descriptor cannot be reached through `/proc/self/fd`.
    pub(crate) fn start(repo: &std::fs::File, state_dir: &Path) -> std::io::Result<TreeWatch> {
        use std::os::fd::AsRawFd as _;
        // Owned by the thread, so that the path through it lasts as long as the watch.
        let root = repo.try_clone()?;
        let base = PathBuf::from(format!("/proc/self/fd/{}", root.as_raw_fd()));
        if !std::fs::metadata(&base)?.is_dir() {
            return Err(std::io::ErrorKind::NotADirectory.into());
        }
        let cookies = state_dir.join("cookies");
        std::fs::create_dir_all(&cookies)?;
        for e in std::fs::read_dir(&cookies)?.flatten() {
            let _ = std::fs::remove_file(e.path());
        }
        let mut inotify = Inotify::init()?;
        let mut watches = inotify.watches();
        let cookie_wd = watches.add(&cookies, WatchMask::CREATE | WatchMask::ONLYDIR)?;
        let mut dirs = HashMap::new();
        watch_tree(&mut watches, &mut dirs, &base, Path::new(""))?;
        // The count starts at a random value, so that counts of two watches (two sessions,
        // two processes sharing a cursor key) are never taken for one another.
        let start = {
            use std::hash::{BuildHasher, Hasher};
            std::collections::hash_map::RandomState::new()
                .build_hasher()
                .finish()
        };
        let shared = Arc::new((
            Mutex::new(Count {
                changes: start,
                ..Count::default()
            }),
            Condvar::new(),
        ));
        let prefix = cookie_prefix(&shared);
        let thread_prefix = prefix.clone();
        let thread_shared = shared.clone();
        let mut thread_watches = inotify.watches();
        let thread_cookies = cookies.clone();
        std::thread::Builder::new()
            .name("file-tools-tree-watch".into())
            .spawn(move || {
                let _root = root;
                let mut buf = vec![0u8; 64 * 1024];
                loop {
                    let events = match inotify.read_events_blocking(&mut buf) {
                        Ok(ev) => ev,
                        Err(_) => break,
                    };
                    let mut moved = false;
                    let mut broken = false;
                    let mut newest_cookie = None;
                    for ev in events {
                        if ev.mask.contains(EventMask::Q_OVERFLOW) {
                            broken = true;
                            continue;
                        }
                        if ev.wd == cookie_wd {
                            let name = ev.name.and_then(|n| n.to_str());
                            let n = name
                                .and_then(|n| n.strip_prefix(thread_prefix.as_str()))
                                .and_then(|n| n.parse::<u64>().ok());
                            if let (Some(n), Some(name)) = (n, name) {
                                // Cookies may be made out of order by concurrent reads.
                                newest_cookie = Some(newest_cookie.unwrap_or(0).max(n));
                                let _ = std::fs::remove_file(thread_cookies.join(name));
                            }
                            continue;
                        }
                        moved = true;
                        if ev.mask.contains(EventMask::IGNORED) {
                            dirs.remove(&ev.wd);
                            continue;
                        }
                        let is_new_dir = ev.mask.contains(EventMask::ISDIR)
                            && (ev.mask.contains(EventMask::CREATE)
                                || ev.mask.contains(EventMask::MOVED_TO));
                        if is_new_dir {
                            let path = dirs.get(&ev.wd).zip(ev.name).map(|(d, n)| d.join(n));
                            if let Some(p) = path {
                                if watch_tree(&mut thread_watches, &mut dirs, &base, &p).is_err() {
                                    broken = true;
                                }
                            }
                        }
                    }
                    let (lock, cvar) = &*thread_shared;
                    let Ok(mut c) = lock.lock() else { break };
                    // The count moves after the new directories are watched.
                    c.changes = c.changes.wrapping_add(u64::from(moved));
                    c.broken |= broken;
                    if let Some(n) = newest_cookie {
                        c.cookie = c.cookie.max(n);
                    }
                    cvar.notify_all();
                    if c.stop {
                        // Dropping the inotify descriptor removes every watch.
                        break;
                    }
                }
                let (lock, cvar) = &*thread_shared;
                if let Ok(mut c) = lock.lock() {
                    c.broken = true;
                }
                cvar.notify_all();
            })?;
        drop(watches);
        Ok(TreeWatch {
            shared,
            cookies,
            prefix,
            next_cookie: Mutex::new(0),
        })
    }

    /// The count of changes seen below the repository (from a random start), counting
    /// every change completed before this call; `None` when the count is not exact.
    pub(crate) fn count(&self) -> Option<u64> {
        let n = {
            let mut next = self.next_cookie.lock().ok()?;
            *next += 1;
            *next
        };
        std::fs::File::create(self.cookies.join(format!("{}{n}", self.prefix))).ok()?;
        let (lock, cvar) = &*self.shared;
        let guard = lock.lock().ok()?;
        let (c, timeout) = cvar
            .wait_timeout_while(guard, COOKIE_WAIT, |c| c.cookie < n && !c.broken)
            .ok()?;
        if timeout.timed_out() || c.broken {
            return None;
        }
        Some(c.changes)
    }
}

impl Drop for TreeWatch {
    fn drop(&mut self) {
        // The thread owns the inotify descriptor: it is told to stop, then woken by one
        // more event in the cookie directory.
        if let Ok(mut c) = self.shared.0.lock() {
            c.stop = true;
        }
        let _ = std::fs::File::create(self.cookies.join("stop"));
        let _ = std::fs::remove_file(self.cookies.join("stop"));
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

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

    #[test]
    fn a_change_before_the_read_is_counted() {
        moves_in_and_counts(false);
    }

    #[test]
    fn another_watchs_cookie_in_the_same_state_directory_does_not_cut_the_wait_short() {
        moves_in_and_counts(true);
    }
}
