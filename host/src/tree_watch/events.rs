//! The watch's thread: reads each batch of inotify events, watches the directories made or
//! moved in, and tells what the batch changed (see the parent module).

use std::collections::HashMap;
use std::os::fd::{AsRawFd as _, OwnedFd};
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};

use inotify::{EventMask, WatchDescriptor, WatchMask, Watches};
use rustix::fs::{AtFlags, FileType, OFlags};

use crate::imports::host_fs::open_beneath;

/// What one batch of events tells.
#[derive(Debug, Default)]
pub(super) struct Batch {
    /// An event below the repository (the count moves).
    pub(super) moved: bool,
    pub(super) broken: bool,
    pub(super) newest_cookie: Option<u64>,
    /// Directories whose listings may have changed.
    pub(super) touched: Vec<PathBuf>,
    /// Any listing may have changed.
    pub(super) all: bool,
    /// Directories watched from now on, and no longer (by path), in the order the
    /// events said so.
    pub(super) paths: Vec<(PathBuf, Watched)>,
}

/// What became of the directory at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Watched {
    /// Watched under this path from now on.
    Now,
    /// Removed: no longer watched.
    Gone,
    /// Moved away, with everything below it: no directory is watched under these paths
    /// any more (another directory there, one that folds case answering to the old
    /// spelling, is watched under its own).
    Moved,
}

/// What a watch on a directory of the repository reports.
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

/// What opening a directory answers when it is gone or is no longer a directory beneath
/// the repository reached without a symlink.
const GONE: [rustix::io::Errno; 4] = [
    rustix::io::Errno::NOENT,
    rustix::io::Errno::NOTDIR,
    rustix::io::Errno::LOOP,
    rustix::io::Errno::XDEV,
];

/// Watches the directory `rel` of the repository `root` and every directory below it.
/// Each is opened beneath `root` without following a symlink anywhere on the way and
/// watched through its descriptor, so that a watch's recorded path is always that of the
/// directory it watches; each is recorded in `dirs` and in `b`. A directory already
/// watched under another path (one moved) stamps everything.
pub(super) fn watch_tree(
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
            Err(e)
                if GONE
                    .iter()
                    .any(|g| e.raw_os_error() == Some(g.raw_os_error())) =>
            {
                continue
            }
            Err(e) => return Err(e),
        };
        let wd = watches.add(format!("/proc/self/fd/{}", fd.as_raw_fd()), repo_mask())?;
        if let Some(old) = dirs.insert(wd, d.clone()) {
            if old != d {
                b.all = true;
                b.paths.push((old, Watched::Moved));
            }
        }
        b.paths.push((d.clone(), Watched::Now));
        // A directory below that cannot be read or looked at would go unwatched: the watch
        // is then no longer exact (an error), rather than silently partial.
        let mut listing = rustix::fs::Dir::new(fd)?;
        while let Some(entry) = listing.read() {
            let entry = entry?;
            let name = entry.file_name();
            if name == c"." || name == c".." {
                continue;
            }
            let is_dir = match entry.file_type() {
                FileType::Directory => true,
                FileType::Unknown => {
                    match rustix::fs::statat(listing.fd()?, name, AtFlags::SYMLINK_NOFOLLOW) {
                        Ok(st) => FileType::from_raw_mode(st.st_mode) == FileType::Directory,
                        Err(rustix::io::Errno::NOENT) => false,
                        Err(e) => return Err(e.into()),
                    }
                }
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

/// Whether `name` is the one Linux gives a file opened without a name (`O_TMPFILE`):
/// `#` and its inode number.
fn anonymous(name: &std::ffi::OsStr) -> bool {
    let b = name.as_bytes();
    b.len() > 1 && b[0] == b'#' && b[1..].iter().all(u8::is_ascii_digit)
}

/// Directories stamped, at most (past that, everything is stamped and the map emptied).
pub(super) const MAX_TOUCHED: usize = 65_536;

/// What the watch's thread holds besides the inotify descriptor.
pub(super) struct Thread {
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
    /// Fence names used so far (each look up is of a name never used before).
    fences: u64,
}

impl Thread {
    /// The thread's state over the watches made so far (`dirs`, each watch's directory) of
    /// the repository `root`, with its cookies: the cookie directory's watch, the
    /// directory, and the start of this watch's cookie names.
    pub(super) fn new(
        watches: Watches,
        dirs: HashMap<WatchDescriptor, PathBuf>,
        root: std::fs::File,
        (cookie_wd, cookies, prefix): (WatchDescriptor, PathBuf, String),
    ) -> Thread {
        Thread {
            watches,
            dirs,
            root,
            cookie_wd,
            prefix,
            cookies,
            judged: HashMap::new(),
            next_check: 0,
            fences: 0,
        }
    }

    /// Reads one batch of events: watches the directories made or moved in, and tells what
    /// the batch changed.
    pub(super) fn batch<'a>(
        &mut self,
        events: impl Iterator<Item = inotify::Event<&'a std::ffi::OsStr>>,
    ) -> Batch {
        let mut b = Batch::default();
        // Files moved away from a judged name, by the move's cookie, until the move's
        // other half is seen.
        let mut moving = Vec::new();
        // The directories in which a name was judged.
        let mut looked: Vec<PathBuf> = Vec::new();
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
                        b.paths.push((dir, Watched::Gone));
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
                if ev.mask.contains(EventMask::MOVED_FROM) {
                    b.paths.push((path.clone(), Watched::Moved));
                }
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
                if self.came(&dir, name, path, &mut b) {
                    looked.push(dir);
                }
            } else if went && self.judged.remove(&path).is_some() {
                // The look at this name may have found what replaced the file made there:
                // a removed one is lost, a moved one is looked at where it lands.
                if ev.mask.contains(EventMask::MOVED_FROM) {
                    moving.push(ev.cookie);
                } else {
                    b.all = true;
                }
            } else if anonymous(name) {
                // A write or a change of metadata of a file made without a name: it may
                // have been given one since, in a directory this event does not name.
                b.all = true;
            }
        }
        // Moved out of the repository, or the move's other half is in a later batch.
        b.all |= !moving.is_empty();
        if b.all || self.judged.len() > MAX_JUDGED {
            b.all = true;
            self.judged.clear();
        } else if !looked.is_empty() {
            // Made after every look of this batch: once the thread sees it, no event before
            // those looks is still to come. A change of a name that the look already saw
            // may have its event queued a moment later, while its directory stays locked:
            // a look up of a name never used before in each such directory waits for that.
            looked.sort();
            looked.dedup();
            for dir in &looked {
                self.fences += 1;
                let fence = format!(".file-tools-fence-{}-{}", std::process::id(), self.fences);
                if let Ok(fd) = open_dir(&self.root, dir) {
                    let _ = rustix::fs::statat(&fd, fence.as_str(), AtFlags::SYMLINK_NOFOLLOW);
                }
            }
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
