//! The `host-fs` import: permission bits for atomic replaces, and the batched reads that
//! spare the component one WASI call per directory entry or per read.
//!
//! The batched reads open relative to the repository's directory with `openat2` and
//! `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS` (or, where the kernel
//! lacks `openat2`, one component at a time with `O_NOFOLLOW`): a symlink *anywhere* in the
//! path is refused, so the object read is exactly the one the component classified by
//! those names. Opens are non-blocking and never take a terminal; only regular files are
//! read and only directories listed, judged on the opened descriptor.

use std::ffi::CStr;
use std::io::Read;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path};

use cap_std::fs::Dir;
use rustix::fs::{Mode, OFlags, ResolveFlags};

use crate::bindings::agent::file_tools::host_fs::{DirEntry, DirEntryStat, Host};
use crate::imports::state::HostState;

pub(crate) mod handles;
#[cfg(all(feature = "watch", target_os = "linux"))]
mod kept;
pub(crate) mod read_ahead;
mod resources;

/// A logical path as a relative path with normal components only (`.` for the root).
fn relative(path: &str) -> Result<&Path, String> {
    let p = Path::new(if path.is_empty() { "." } else { path });
    let plain = p
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if p.is_absolute() || !plain {
        return Err(format!("'{path}' is not a plain relative path"));
    }
    Ok(p)
}

/// An open refused with `O_NOFOLLOW` on a final symlink says so; other errors as they are.
fn open_error(e: &std::io::Error, path: &str, wanted: &str) -> String {
    if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) {
        format!("'{path}' is or goes through a symlink, not {wanted}")
    } else {
        e.to_string()
    }
}

/// Opens `rel` beneath `dir` without following a symlink anywhere on the way.
pub(crate) fn open_beneath<D: AsFd>(
    dir: &D,
    rel: &Path,
    flags: OFlags,
) -> std::io::Result<OwnedFd> {
    let flags = flags | OFlags::CLOEXEC | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY;
    let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    match rustix::fs::openat2(dir, rel, flags, Mode::empty(), resolve) {
        Err(rustix::io::Errno::NOSYS) => {}
        other => return other.map_err(Into::into),
    }
    // No openat2 (an old kernel, or a filter that hides it): one name at a time.
    let mut names: Vec<&std::ffi::OsStr> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n),
            _ => None,
        })
        .collect();
    let last = names.pop();
    let dir_flags =
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::NOFOLLOW | OFlags::NONBLOCK;
    let mut cur: OwnedFd = rustix::fs::openat(dir, ".", dir_flags, Mode::empty())?;
    for n in names {
        cur = rustix::fs::openat(&cur, n, dir_flags, Mode::empty())?;
    }
    match last {
        Some(n) => Ok(rustix::fs::openat(&cur, n, flags, Mode::empty())?),
        None => Ok(rustix::fs::openat(&cur, ".", flags, Mode::empty())?),
    }
}

/// Copies the permission bits of the regular file `from` onto the regular file `to`, both
/// opened beneath `dir` without following a symlink anywhere; the bits are read from and
/// set on the opened descriptors, so a path swapped for a link between the look and the
/// change reaches nothing outside; a target with other names (hard links) is left alone.
fn copy_mode(dir: &Dir, from: &str, to: &str) -> Result<(), String> {
    let regular = |path: &str, flags: OFlags| -> Result<(OwnedFd, rustix::fs::Stat), String> {
        let fd = open_beneath(dir, relative(path)?, flags).map_err(|e| e.to_string())?;
        let st = rustix::fs::fstat(&fd).map_err(|e| e.to_string())?;
        if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile {
            return Err(format!("'{path}' is not a regular file"));
        }
        Ok((fd, st))
    };
    let (_, from_st) = regular(from, OFlags::RDONLY)?;
    let (target, to_st) = regular(to, OFlags::RDONLY)?;
    // A target with another name may be a file outside the repository (a hard link).
    if to_st.st_nlink != 1 {
        return Err(format!("'{to}' has other names"));
    }
    rustix::fs::fchmod(&target, Mode::from_raw_mode(from_st.st_mode & 0o7777))
        .map_err(|e| e.to_string())
}

/// The entries of the directory `path` (with their types: from the listing, else one look
/// each), refused (`read_ahead::PAST_BOUND`) past `max`.
fn read_dir(dir: &Dir, path: &str, max: usize) -> Result<Vec<DirEntry>, String> {
    let mut out = Vec::new();
    each_entry(dir, path, max, |fd, name, ty| {
        out.push(DirEntry {
            name: name.to_str().ok().map(str::to_string),
            kind: resources::listed_kind(fd, name, ty),
        });
    })?;
    out.sort_unstable_by(|a, b| listing_order(&a.name, &b.name));
    Ok(out)
}

/// Calls `each(directory, name, type)` for every entry of the directory `path` but `.` and
/// `..`, refused (`read_ahead::PAST_BOUND`) past `max` entries. The directory is opened
/// beneath `dir` without following a link anywhere (a FIFO or file swapped in fails at
/// once, `O_DIRECTORY`) and read through that one descriptor: no second open of `.`.
fn each_entry(
    dir: &Dir,
    path: &str,
    max: usize,
    mut each: impl FnMut(BorrowedFd<'_>, &CStr, rustix::fs::FileType),
) -> Result<(), String> {
    let rel = relative(path)?;
    let fd = open_beneath(dir, rel, OFlags::RDONLY | OFlags::DIRECTORY)
        .map_err(|e| open_error(&e, path, "a directory"))?;
    let io = |e: rustix::io::Errno| std::io::Error::from(e).to_string();
    let mut listing = rustix::fs::Dir::new(fd).map_err(io)?;
    let mut count = 0;
    while let Some(entry) = listing.read() {
        let entry = entry.map_err(io)?;
        let name = entry.file_name();
        if name == c"." || name == c".." {
            continue;
        }
        if count == max {
            return Err(read_ahead::PAST_BOUND.to_string());
        }
        count += 1;
        each(listing.fd().map_err(io)?, name, entry.file_type());
    }
    Ok(())
}

/// The order the component's walk sorts a listing in: names by their bytes, the names that
/// are not UTF-8 (`None`) last. Sorted here, natively, the component's own sort of the
/// listing finds it in order at once (in the component a name comparison is wasi-libc's
/// byte-at-a-time `memcmp`).
fn listing_order(a: &Option<String>, b: &Option<String>) -> std::cmp::Ordering {
    match (a, b) {
        (Some(x), Some(y)) => x.cmp(y),
        _ => a.is_none().cmp(&b.is_none()),
    }
}

/// The entries of the directory `path` with their metadata, refused
/// (`read_ahead::PAST_BOUND`) past `max`.
fn read_dir_stat(dir: &Dir, path: &str, max: usize) -> Result<Vec<DirEntryStat>, String> {
    let mut out = Vec::new();
    each_entry(dir, path, max, |fd, name, _| {
        // Relative to the held descriptor, never following a link; gone meanwhile: left out.
        if let Ok(st) = rustix::fs::statat(fd, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW) {
            out.push(DirEntryStat {
                name: name.to_str().ok().map(str::to_string),
                stat: resources::entry_stat(&st),
            });
        }
    })?;
    out.sort_unstable_by(|a, b| listing_order(&a.name, &b.name));
    Ok(out)
}

fn read_file(dir: &Dir, path: &str, max: u64, allow_hardlinks: bool) -> Result<Vec<u8>, String> {
    let rel = relative(path)?;
    // One open, then one fstat: anything but a regular file is refused from the open
    // descriptor's own metadata.
    let fd = open_beneath(dir, rel, OFlags::RDONLY)
        .map_err(|e| open_error(&e, path, "a regular file"))?;
    // fstat, not std's metadata (statx): measurably cheaper per file.
    let st = rustix::fs::fstat(&fd).map_err(|e| std::io::Error::from(e).to_string())?;
    if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile {
        return Err(format!("'{path}' is not a regular file"));
    }
    // Another name of it may be outside the repository.
    if st.st_nlink > 1 && !allow_hardlinks {
        return Err(format!("'{path}' has more than one hard link"));
    }
    let f = std::fs::File::from(fd);
    let meta_len = st.st_size.max(0) as u64;
    // The size fstat reported is read straight into the vector's spare room (no zero fill),
    // and no read past it to see the end: the answer is the file as of the fstat, up to
    // `max`. A file that reports no size (some special filesystems do) is read to its end.
    let size = meta_len.min(max) as usize;
    let mut buf: Vec<u8> = Vec::with_capacity(size);
    while buf.len() < size {
        match rustix::io::read(&f, rustix::buffer::spare_capacity(&mut buf)) {
            Ok(0) => break,
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(std::io::Error::from(e).to_string()),
        }
    }
    if meta_len == 0 {
        f.take(max)
            .read_to_end(&mut buf)
            .map_err(|e| e.to_string())?;
    }
    Ok(buf)
}

impl Host for HostState {
    fn copy_mode(&mut self, from: String, to: String) -> bool {
        let Some(dir) = self.repo_dir.as_ref() else {
            return false;
        };
        copy_mode(dir, &from, &to).is_ok()
    }

    fn read_dir(&mut self, path: String) -> Option<Result<Vec<DirEntry>, String>> {
        let dir = self.repo_dir.clone()?;
        #[cfg(all(feature = "watch", target_os = "linux"))]
        return Some(self.listing(&dir, &path, kept::PLAIN));
        #[cfg(not(all(feature = "watch", target_os = "linux")))]
        Some(self.call.listings.plain.list(&dir, &path, read_dir))
    }

    fn tree_changes(&mut self) -> Option<u64> {
        #[cfg(all(feature = "watch", target_os = "linux"))]
        return self.sync_watch();
        #[cfg(not(all(feature = "watch", target_os = "linux")))]
        None
    }

    fn tree_changed_dirs(&mut self, since: u64, start: String) -> Option<Vec<String>> {
        #[cfg(all(feature = "watch", target_os = "linux"))]
        return self.changed_dirs(since, &start);
        #[cfg(not(all(feature = "watch", target_os = "linux")))]
        {
            let _ = (since, start);
            None
        }
    }

    fn read_dir_stat(&mut self, path: String) -> Option<Result<Vec<DirEntryStat>, String>> {
        let dir = self.repo_dir.clone()?;
        #[cfg(all(feature = "watch", target_os = "linux"))]
        return Some(self.listing(&dir, &path, kept::WITH_STAT));
        #[cfg(not(all(feature = "watch", target_os = "linux")))]
        Some(
            self.call
                .listings
                .with_stat
                .list(&dir, &path, read_dir_stat),
        )
    }

    fn sha256(&mut self, data: Vec<u8>) -> Option<Vec<u8>> {
        use sha2::Digest as _;
        Some(sha2::Sha256::digest(&data).to_vec())
    }

    fn read_file(&mut self, path: String, max_bytes: u64) -> Option<Result<Vec<u8>, String>> {
        let dir = self.repo_dir.as_ref()?;
        Some(read_file(dir, &path, max_bytes, self.allow_hardlinks))
    }

    fn root(
        &mut self,
    ) -> Option<wasmtime::component::Resource<crate::imports::host_fs::handles::OpenDir>> {
        let dir = crate::imports::host_fs::handles::OpenDir::root(self.repo_dir.as_ref()?)?;
        self.table.push(dir).ok()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::bindings::agent::file_tools::types::EntryType;

    fn repo() -> (tempfile::TempDir, Dir) {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("repo/sub")).unwrap();
        std::fs::write(t.path().join("repo/sub/a.txt"), "inside\n").unwrap();
        std::fs::write(t.path().join("outside.txt"), "outside\n").unwrap();
        std::os::unix::fs::symlink("../outside.txt", t.path().join("repo/up")).unwrap();
        std::os::unix::fs::symlink("sub/a.txt", t.path().join("repo/alias")).unwrap();
        std::os::unix::fs::symlink("/etc", t.path().join("repo/etc")).unwrap();
        let dir =
            Dir::open_ambient_dir(t.path().join("repo"), cap_std::ambient_authority()).unwrap();
        (t, dir)
    }

    #[test]
    fn reads_stay_beneath_the_repository_and_never_follow_a_final_symlink() {
        let (t, dir) = repo();
        assert_eq!(
            read_file(&dir, "sub/a.txt", 100, false).unwrap(),
            b"inside\n"
        );
        assert_eq!(read_file(&dir, "sub/a.txt", 3, false).unwrap(), b"ins");
        std::fs::write(t.path().join("repo/sub/empty"), "").unwrap();
        assert_eq!(read_file(&dir, "sub/empty", 100, false).unwrap(), b"");
        let big: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(t.path().join("repo/sub/big"), &big).unwrap();
        assert_eq!(read_file(&dir, "sub/big", 1 << 20, false).unwrap(), big);
        assert_eq!(
            read_file(&dir, "sub/big", 1000, false).unwrap(),
            &big[..1000]
        );
        for path in [
            "up",
            "alias",
            "etc/passwd",
            "../outside.txt",
            "/etc/passwd",
            "sub/../../outside.txt",
            "sub",
            "",
        ] {
            let r = read_file(&dir, path, 100, false);
            assert!(r.is_err(), "{path}: {r:?}");
        }
        for path in ["etc", "up", "..", "/", "sub/a.txt"] {
            assert!(read_dir(&dir, path, usize::MAX).is_err(), "{path}");
        }
        // A symlink in the middle of a path is refused too, even one that stays inside.
        std::os::unix::fs::symlink(".", t.path().join("repo/sub/same")).unwrap();
        assert!(read_file(&dir, "sub/same/a.txt", 100, false).is_err());
        assert!(read_dir(&dir, "sub/same", usize::MAX).is_err());
        assert!(read_dir(&dir, "sub", usize::MAX).is_ok());
        let mut names: Vec<(Option<String>, EntryType)> = read_dir(&dir, "", usize::MAX)
            .unwrap()
            .into_iter()
            .map(|e| (e.name, e.kind))
            .collect();
        names.sort_by(|a, b| a.0.cmp(&b.0));
        let kinds: Vec<(&str, EntryType)> = names
            .iter()
            .map(|(n, k)| (n.as_deref().unwrap(), *k))
            .collect();
        assert_eq!(
            kinds,
            [
                ("alias", EntryType::Symlink),
                ("etc", EntryType::Symlink),
                ("sub", EntryType::Dir),
                ("up", EntryType::Symlink)
            ]
        );
        assert_eq!(
            std::fs::read_to_string(t.path().join("outside.txt")).unwrap(),
            "outside\n"
        );
    }

    /// Both listings come in the walk's order: names by their bytes (upper case before
    /// lower, `a-b` before `a.b` before `a/`), a name that is not UTF-8 last.
    #[test]
    fn listings_come_sorted_as_the_walk_sorts_them() {
        use std::os::unix::ffi::OsStrExt;
        let (t, dir) = repo();
        let base = t.path().join("repo/sub");
        for n in ["b", "a.b", "Z", "a-b", "a", "\u{e9}"] {
            std::fs::write(base.join(n), "").unwrap();
        }
        std::fs::write(base.join(std::ffi::OsStr::from_bytes(b"\xff")), "").unwrap();
        let want: Vec<Option<&str>> = ["Z", "a", "a-b", "a.b", "a.txt", "b", "\u{e9}"]
            .into_iter()
            .map(Some)
            .chain([None])
            .collect();
        let plain = read_dir(&dir, "sub", usize::MAX).unwrap();
        let plain: Vec<Option<&str>> = plain.iter().map(|e| e.name.as_deref()).collect();
        assert_eq!(plain, want);
        let stat = read_dir_stat(&dir, "sub", usize::MAX).unwrap();
        let stat: Vec<Option<&str>> = stat.iter().map(|e| e.name.as_deref()).collect();
        assert_eq!(stat, want);
    }

    #[test]
    fn fifos_are_refused_without_blocking() {
        let (t, dir) = repo();
        let fifo = t.path().join("repo/pipe");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success(), "mkfifo");
        assert!(read_file(&dir, "pipe", 10, false).is_err());
    }

    #[test]
    fn copy_mode_changes_only_the_regular_file_inside_even_while_a_link_is_swapped_in() {
        use std::os::unix::fs::PermissionsExt;
        let (t, dir) = repo();
        let mode = |p: &std::path::Path| {
            std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o7777
        };
        let root = t.path().join("repo");
        std::fs::write(root.join("src.txt"), "s\n").unwrap();
        std::fs::set_permissions(root.join("src.txt"), PermissionsExt::from_mode(0o751)).unwrap();
        std::fs::write(root.join("dst.txt"), "d\n").unwrap();
        let outside = t.path().join("outside.txt");
        std::fs::set_permissions(&outside, PermissionsExt::from_mode(0o600)).unwrap();
        // Positive control: the bits are copied between two files inside.
        copy_mode(&dir, "src.txt", "dst.txt").unwrap();
        assert_eq!(mode(&root.join("dst.txt")), 0o751);
        // A link, as source or target, anywhere on the way, is refused.
        assert!(copy_mode(&dir, "src.txt", "up").is_err());
        assert!(copy_mode(&dir, "up", "dst.txt").is_err());
        assert!(copy_mode(&dir, "src.txt", "../outside.txt").is_err());
        // A hard link to a file outside is that file: left alone.
        std::fs::hard_link(&outside, root.join("hard")).unwrap();
        assert!(copy_mode(&dir, "src.txt", "hard").is_err());
        std::fs::remove_file(root.join("hard")).unwrap();
        assert_eq!(mode(&outside), 0o600);

        // A second process swaps the target between a file and a link out, 3,000 times,
        // while the component copies bits onto it as fast as it can.
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flipper = {
            let (root, done) = (root.clone(), done.clone());
            std::thread::spawn(move || {
                for _ in 0..3000 {
                    let _ = std::fs::remove_file(root.join("flip"));
                    let _ = std::fs::write(root.join("flip"), "f\n");
                    let _ = std::fs::remove_file(root.join("flip"));
                    let _ = std::os::unix::fs::symlink("../outside.txt", root.join("flip"));
                }
                done.store(true, std::sync::atomic::Ordering::Relaxed);
            })
        };
        let (mut copied, mut tries) = (0, 0);
        while !done.load(std::sync::atomic::Ordering::Relaxed) {
            copied += usize::from(copy_mode(&dir, "src.txt", "flip").is_ok());
            tries += 1;
        }
        flipper.join().unwrap();
        assert!(
            copied > 0,
            "the file was never there to change in {tries} tries"
        );
        assert_eq!(
            mode(&outside),
            0o600,
            "a file outside the repository was changed"
        );
    }
}
