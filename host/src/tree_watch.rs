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
//! times moved unseen; see `events::Thread::came` for a name that changed again before the look).
//! Every directory is opened beneath the repository without following a symlink and
//! watched through its descriptor, so a watch's path is that of the directory it watches;
//! a listing is answered only for a path that is watched.
//!
//! When the queue overflows, a watch cannot be added (the system's limit), or the thread
//! ends, the count is no longer exact and [`TreeWatch::count`] answers `None` from then on:
//! the index then looks at every file, as without a watch, and no listing is trusted.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use inotify::{Inotify, WatchMask};

mod events;
use events::{watch_tree, Batch, Thread, Watched, MAX_TOUCHED};

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
                watched: first.paths.into_iter().map(|(d, _)| d).collect(),
                ..Count::default()
            }),
            Condvar::new(),
        ));
        let prefix = cookie_prefix(&shared);
        let mut thread = Thread::new(
            inotify.watches(),
            dirs,
            root,
            (cookie_wd, cookies.clone(), prefix.clone()),
        );
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
                        for (d, what) in batch.paths {
                            match what {
                                Watched::Now => {
                                    c.watched.insert(d);
                                }
                                Watched::Gone => {
                                    c.watched.remove(&d);
                                }
                                Watched::Moved => c.watched.retain(|p| !p.starts_with(&d)),
                            }
                        }
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

    /// The directories (relative to the repository, `""` for the root) that a batch after
    /// the count `since` (one of [`Synced::count`]) may have changed, as far as the watch
    /// has seen; `None` when the count is not exact, when `since` is not one of this
    /// watch's counts, when a batch since then could not say where it landed, or when
    /// `start` is not a watched directory under exactly that path (another spelling of a
    /// directory that folds case is named by no stamp). What the caller learns is only as
    /// new as its last [`TreeWatch::sync`].
    pub(crate) fn changed_dirs(&self, since: u64, start: &str) -> Option<Vec<PathBuf>> {
        let c = self.shared.0.lock().ok()?;
        let seq = since.wrapping_sub(c.start);
        if c.broken || seq > c.seq || c.all_since > seq || !c.watched.contains(Path::new(start)) {
            return None;
        }
        Some(
            c.touched
                .iter()
                .filter(|(_, t)| **t > seq)
                .map(|(d, _)| d.clone())
                .collect(),
        )
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
mod tests;
