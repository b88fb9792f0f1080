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
//! The watch also says *where* things changed, for the host's listing cache
//! ([`crate::listing_cache`]): each directory whose listing an event may have changed
//! (its entries, their metadata, or, for an entry made, removed or renamed, the
//! directory's own times in its parent's listing) is stamped with the batch of events
//! that said so. What cannot be placed stamps everything: a directory moved away (no event
//! names its old paths), a directory made or moved in (what happened in it before its watch
//! was added is unseen), a file made or moved in with other names (their link counts and
//! times moved unseen; see `Thread::came` for a name that changed again before the look).
//! Every directory is opened beneath the repository without following a symlink and
//! watched through its descriptor, so a watch's path is that of the directory it watches;
//! a listing is answered only for a path that is watched.
//!
//! When the queue overflows, a watch cannot be added (the system's limit), or the thread
//! ends, the count is no longer exact and [`TreeWatch::count`] answers `None` from then on:
//! the index then looks at every file, as without a watch, and no listing is trusted.

use std::collections::{HashMap, HashSet};
use std::os::fd::{AsRawFd as _, OwnedFd};
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask, Watches};
use rustix::fs::{AtFlags, FileType, OFlags};

use crate::imports::host_fs::open_beneath;

/// How long a read of the count waits for its cookie before giving up (answering `None`).
const COOKIE_WAIT: Duration = Duration::from_secs(2);

#[derive(Debug, Default)]
struct Count {
    /// The batches of events seen; a caller sees the count `start + seq`.
    seq: u64,
    /// Where the count a caller sees starts (random).
    start: u64,
    /// The newest cookie the thread has seen.
    cookie: u64,
    /// The count is no longer exact.
    broken: bool,
    /// The watch was dropped: the thread ends at its next wake.
    stop: bool,
    /// For each directory (relative to the repository) whose listing an event may have
    /// changed, the `seq` of the last batch that said so.
    touched: HashMap<PathBuf, u64>,
    /// The last batch that may have changed any listing (see the module's comment).
    all_since: u64,
    /// The directories watched, by the path of each watch: a listing asked for by another
    /// spelling (a directory that folds case) or of a directory not watched is not kept.
    watched: HashSet<PathBuf>,
}

/// What one batch of events tells.
#[derive(Debug, Default)]
struct Batch {
    /// An event below the repository (the count moves).
    moved: bool,
    broken: bool,
    newest_cookie: Option<u64>,
    /// Directories whose listings may have changed.
    touched: Vec<PathBuf>,
    /// Any listing may have changed.
    all: bool,
    /// Directories watched from now on, and no longer (by path).
    watched: Vec<PathBuf>,
    unwatched: Vec<PathBuf>,
}

/// The state of a repository when a caller synchronised with the watch
/// ([`TreeWatch::sync`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Synced {
    /// The count of changes, as [`TreeWatch::count`] answers it.
    pub(crate) count: u64,
    /// The batches seen: a listing made after this synchronisation holds until a later
    /// batch touches its directory ([`TreeWatch::unchanged_since`]).
    pub(crate) seq: u64,
}

/// The watch; dropping it ends the thread (its inotify descriptor closes with it).
#[derive(Debug)]
pub(crate) struct TreeWatch {
    shared: Arc<(Mutex<Count>, Condvar)>,
    cookies: PathBuf,
    /// The start of this watch's cookie names (see [`cookie_prefix`]).
    prefix: String,
    next_cookie: Mutex<u64>,
    /// The listings the host keeps while this watch runs.
    pub(crate) listings: crate::listing_cache::ListingCache,
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
        | WatchMask::ONLYDIR
}

/// Opens the directory `rel` of the repository `root` without following a symlink
/// anywhere on the way (`""` is the repository itself).
fn open_dir(root: &std::fs::File, rel: &Path) -> std::io::Result<OwnedFd> {
    let rel = if rel.as_os_str().is_empty() {
        Path::new(".")
    } else {
        rel
    };
    open_beneath(root, rel, OFlags::RDONLY | OFlags::DIRECTORY)
}

/// Watches the directory `rel` of the repository `root` and every directory below it.
/// Each is opened beneath `root` without following a symlink anywhere on the way and
/// watched through its descriptor, so that a watch's recorded path is always that of the
/// directory it watches; each is recorded in `dirs` and in `b`. A directory already
/// watched under another path (one moved) stamps everything.
fn watch_tree(
    watches: &mut Watches,
    dirs: &mut HashMap<WatchDescriptor, PathBuf>,
    root: &std::fs::File,
    rel: &Path,
    b: &mut Batch,
) -> std::io::Result<()> {
    let mut stack = vec![rel.to_path_buf()];
    while let Some(d) = stack.pop() {
        let fd = match open_dir(root, &d) {
            Ok(fd) => fd,
            // Gone, or replaced by a link or a non-directory since it was seen: its
            // parent's event covers it.
            Err(e) if matches!(e.raw_os_error(), Some(2 | 20 | 40 | 18)) => continue,
            Err(e) => return Err(e),
        };
        let wd = watches.add(format!("/proc/self/fd/{}", fd.as_raw_fd()), repo_mask())?;
        if let Some(old) = dirs.insert(wd, d.clone()) {
            if old != d {
                b.all = true;
                b.unwatched.push(old);
            }
        }
        b.watched.push(d.clone());
        let mut listing = rustix::fs::Dir::new(fd)?;
        while let Some(entry) = listing.read() {
            let Ok(entry) = entry else { break };
            let name = entry.file_name();
            if name == c"." || name == c".." {
                continue;
            }
            let is_dir = match entry.file_type() {
                FileType::Directory => true,
                FileType::Unknown => listing.fd().is_ok_and(|fd| {
                    rustix::fs::statat(fd, name, AtFlags::SYMLINK_NOFOLLOW)
                        .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Directory)
                }),
                _ => false,
            };
            if is_dir {
                stack.push(d.join(std::ffi::OsStr::from_bytes(name.to_bytes())));
            }
        }
    }
    Ok(())
}

/// Names judged to have one link, at most, before they are confirmed (past that, the
/// watch stamps everything and starts again).
const MAX_JUDGED: usize = 65_536;
/// Directories stamped, at most (past that, everything is stamped and the map emptied).
const MAX_TOUCHED: usize = 65_536;

/// What the watch's thread holds besides the inotify descriptor.
struct Thread {
    watches: Watches,
    /// Each watch's directory, relative to the repository.
    dirs: HashMap<WatchDescriptor, PathBuf>,
    /// The repository (the session's descriptor of it, held by the thread).
    root: std::fs::File,
    cookie_wd: WatchDescriptor,
    prefix: String,
    cookies: PathBuf,
    /// The files made or moved in that a look found with one link, each with the number
    /// of the thread's own cookie, made after that look, which confirms it (see
    /// [`Thread::came`]).
    judged: HashMap<PathBuf, u64>,
    /// The number of the thread's next own cookie.
    next_check: u64,
}

impl Thread {
    /// Reads one batch of events: watches the directories made or moved in, and tells what
    /// the batch changed.
    fn batch<'a>(
        &mut self,
        events: impl Iterator<Item = inotify::Event<&'a std::ffi::OsStr>>,
    ) -> Batch {
        let mut b = Batch::default();
        // Files moved away from a judged name, by the move's cookie, until the move's
        // other half is seen.
        let mut moving = Vec::new();
        let mut judged_now = false;
        for ev in events {
            if ev.mask.contains(EventMask::Q_OVERFLOW) {
                b.broken = true;
                continue;
            }
            if ev.wd == self.cookie_wd {
                self.cookie(ev.name, &mut b);
                continue;
            }
            b.moved = true;
            if ev.mask.contains(EventMask::IGNORED) {
                // The watch is gone with its directory (removed).
                match self.dirs.remove(&ev.wd) {
                    Some(dir) => {
                        b.touched.push(dir.clone());
                        b.unwatched.push(dir);
                    }
                    None => b.all = true,
                }
                continue;
            }
            let Some(dir) = self.dirs.get(&ev.wd).cloned() else {
                b.all = true;
                continue;
            };
            let Some(name) = ev.name else {
                // The directory itself: its metadata moved, or it went away (its parent's
                // event tells where it went).
                b.touched.push(dir);
                continue;
            };
            let is_dir = ev.mask.contains(EventMask::ISDIR);
            let came = ev.mask.intersects(EventMask::CREATE | EventMask::MOVED_TO);
            let went = ev
                .mask
                .intersects(EventMask::DELETE | EventMask::MOVED_FROM);
            if came || went {
                // The directory's own times and size, in its parent's listing.
                if let Some(parent) = dir.parent() {
                    b.touched.push(parent.to_path_buf());
                }
            }
            let path = dir.join(name);
            b.touched.push(dir.clone());
            if is_dir {
                // A subtree moved away: its old paths must not answer listings, and no
                // event names them. One made or moved in: what happened in it before its
                // watch was added is unseen (a second name made there for a file
                // elsewhere, and removed again, moved that file's link count and times).
                // (One removed was emptied first, each directory with events of its own.)
                b.all |= ev.mask.contains(EventMask::MOVED_FROM) || came;
                if came
                    && watch_tree(&mut self.watches, &mut self.dirs, &self.root, &path, &mut b)
                        .is_err()
                {
                    b.broken = true;
                }
            } else if came {
                if ev.mask.contains(EventMask::MOVED_TO) {
                    moving.retain(|c| *c != ev.cookie);
                }
                judged_now |= self.came(&dir, name, path, &mut b);
            } else if went && self.judged.remove(&path).is_some() {
                // The look at this name may have found what replaced the file made there:
                // a removed one is lost, a moved one is looked at where it lands.
                if ev.mask.contains(EventMask::MOVED_FROM) {
                    moving.push(ev.cookie);
                } else {
                    b.all = true;
                }
            }
        }
        // Moved out of the repository, or the move's other half is in a later batch.
        b.all |= !moving.is_empty();
        if b.all || self.judged.len() > MAX_JUDGED {
            b.all = true;
            self.judged.clear();
        } else if judged_now {
            // Made after every look of this batch: once the thread sees it, no event before
            // those looks is still to come.
            let name = format!("{}v{}", self.prefix, self.next_check);
            if std::fs::File::create(self.cookies.join(name)).is_ok() {
                self.next_check += 1;
            }
        }
        b
    }

    /// A file (or link, FIFO, ...) `name` made or moved into `dir` (at `path`). Its other
    /// names' link counts and times move where no event tells, so a file with more than
    /// one link (or one that cannot be looked at) stamps everything. The look comes after
    /// the event: the name may by then hold something else, the file first made there
    /// having been removed or moved away again. Such a change of the name comes as an
    /// event before the thread's next own cookie, so the name stays judged until then:
    /// its removal then stamps everything (see [`Thread::batch`]), as does a file made or
    /// moved onto a name still judged. Returns whether the name was judged.
    fn came(&mut self, dir: &Path, name: &std::ffi::OsStr, path: PathBuf, b: &mut Batch) -> bool {
        if self.judged.remove(&path).is_some() {
            b.all = true;
        }
        let single = open_dir(&self.root, dir).is_ok_and(|fd| {
            rustix::fs::statat(&fd, name, AtFlags::SYMLINK_NOFOLLOW)
                .is_ok_and(|st| st.st_nlink <= 1)
        });
        if !single {
            b.all = true;
            return false;
        }
        self.judged.insert(path, self.next_check);
        true
    }

    /// A cookie's event: a caller's (its number: every change before it has been seen), or
    /// the thread's own (every name judged before it is confirmed).
    fn cookie(&mut self, name: Option<&std::ffi::OsStr>, b: &mut Batch) {
        let Some(name) = name.and_then(|n| n.to_str()) else {
            return;
        };
        let Some(rest) = name.strip_prefix(self.prefix.as_str()) else {
            return;
        };
        if let Some(n) = rest.strip_prefix('v').and_then(|n| n.parse::<u64>().ok()) {
            self.judged.retain(|_, check| *check > n);
        } else if let Ok(n) = rest.parse::<u64>() {
            // Cookies may be made out of order by concurrent reads.
            b.newest_cookie = Some(b.newest_cookie.unwrap_or(0).max(n));
        } else {
            return;
        }
        let _ = std::fs::remove_file(self.cookies.join(name));
    }
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
        // Owned by the thread: every directory is opened beneath it.
        let root = repo.try_clone()?;
        if !root.metadata()?.is_dir() {
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
        let mut first = Batch::default();
        watch_tree(&mut watches, &mut dirs, &root, Path::new(""), &mut first)?;
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
                start,
                watched: first.watched.into_iter().collect(),
                ..Count::default()
            }),
            Condvar::new(),
        ));
        let mut thread = Thread {
            watches: inotify.watches(),
            dirs,
            root,
            cookie_wd,
            prefix: cookie_prefix(&shared),
            cookies: cookies.clone(),
            judged: HashMap::new(),
            next_check: 0,
        };
        let prefix = thread.prefix.clone();
        let thread_shared = shared.clone();
        std::thread::Builder::new()
            .name("file-tools-tree-watch".into())
            .spawn(move || {
                let mut buf = vec![0u8; 64 * 1024];
                loop {
                    let batch = match inotify.read_events_blocking(&mut buf) {
                        Ok(events) => thread.batch(events),
                        Err(_) => break,
                    };
                    let (lock, cvar) = &*thread_shared;
                    let Ok(mut c) = lock.lock() else { break };
                    // The count moves after the new directories are watched.
                    if batch.moved {
                        c.seq += 1;
                        let seq = c.seq;
                        for d in batch.unwatched {
                            c.watched.remove(&d);
                        }
                        c.watched.extend(batch.watched);
                        if batch.all || c.touched.len() + batch.touched.len() > MAX_TOUCHED {
                            c.all_since = seq;
                            c.touched.clear();
                        } else {
                            for d in batch.touched {
                                c.touched.insert(d, seq);
                            }
                        }
                    }
                    c.broken |= batch.broken;
                    if let Some(n) = batch.newest_cookie {
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
            listings: Default::default(),
        })
    }

    /// The count of changes seen below the repository (from a random start), counting
    /// every change completed before this call; `None` when the count is not exact.
    #[cfg(test)]
    pub(crate) fn count(&self) -> Option<u64> {
        self.sync().map(|s| s.count)
    }

    /// Waits until the watch has seen every change completed before this call; `None`
    /// when the count is not exact.
    pub(crate) fn sync(&self) -> Option<Synced> {
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
        Some(Synced {
            count: c.start.wrapping_add(c.seq),
            seq: c.seq,
        })
    }

    /// Whether no batch after `seq` (of a [`Synced`]) may have changed the listing of the
    /// directory `dir` (relative to the repository, `""` for the root), while the count
    /// stays exact. What the caller learns is only as new as its last [`TreeWatch::sync`].
    pub(crate) fn unchanged_since(&self, dir: &str, seq: u64) -> bool {
        let Ok(c) = self.shared.0.lock() else {
            return false;
        };
        let dir = Path::new(dir);
        !c.broken
            && c.all_since <= seq
            && c.watched.contains(dir)
            && c.touched.get(dir).is_none_or(|t| *t <= seq)
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
        assert!(b.watched.is_empty() && dirs.is_empty(), "{:?}", b.watched);
        // Positive control: the directory itself, by its own path.
        watch_tree(&mut watches, &mut dirs, &root, Path::new("real"), &mut b).unwrap();
        assert_eq!(b.watched, [PathBuf::from("real"), PathBuf::from("real/x")]);
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
