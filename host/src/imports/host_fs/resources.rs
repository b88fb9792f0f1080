//! The `host-fs.dir` and `host-fs.file` resources: the repository held open by the host,
//! one name per operation. Every open is `openat` relative to a held descriptor with
//! `O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC` (plus `O_DIRECTORY` for directories, `O_NOCTTY`
//! for files) and is checked with `fstat`, so a symlink is never followed and a FIFO or
//! device swapped in is refused at once instead of blocking the call. In a read-only
//! session every change is refused.

use std::ffi::CStr;
use std::io::Write as _;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use wasmtime::component::Resource;

use crate::bindings::agent::file_tools::host_fs::{
    DirEntry, EntryStat, FsError, HostDir as DirMethods, HostFile as FileMethods,
};
use crate::bindings::agent::file_tools::types::EntryType;
use crate::imports::host_fs::handles::{OpenDir, OpenFile};
use crate::imports::state::HostState;

fn fs_err(e: rustix::io::Errno) -> FsError {
    use rustix::io::Errno;
    match e {
        Errno::NOENT => FsError::NotFound,
        Errno::EXIST => FsError::AlreadyExists,
        Errno::NOTDIR => FsError::NotADirectory,
        Errno::ISDIR => FsError::IsADirectory,
        Errno::LOOP | Errno::NXIO | Errno::OPNOTSUPP => FsError::NotPlain,
        Errno::NOTEMPTY => FsError::NotEmpty,
        Errno::ACCESS | Errno::PERM | Errno::ROFS => FsError::Access,
        other => FsError::Other(std::io::Error::from(other).to_string()),
    }
}

/// Refuses anything but one plain name.
fn name_ok(name: &str) -> Result<(), FsError> {
    if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\0']) {
        return Err(FsError::Other(format!(
            "'{name}' is not a single path component"
        )));
    }
    Ok(())
}

/// The entry type of a `st_mode`.
fn kind_of_mode(mode: u32) -> EntryType {
    kind(FileType::from_raw_mode(mode))
}

/// The entry type of the entry `name` of the directory `fd` that a listing gave `ty`: a
/// listing that does not say (some file systems) is answered by a look at the entry,
/// without following a link (`other` when it is gone).
pub(crate) fn listed_kind(fd: impl AsFd, name: &CStr, ty: FileType) -> EntryType {
    match ty {
        FileType::Unknown => rustix::fs::statat(fd, name, AtFlags::SYMLINK_NOFOLLOW)
            .map_or(EntryType::Other, |s| kind_of_mode(s.st_mode)),
        t => kind(t),
    }
}

/// A file type as the interface's entry type.
fn kind(ty: FileType) -> EntryType {
    match ty {
        FileType::RegularFile => EntryType::File,
        FileType::Directory => EntryType::Dir,
        FileType::Symlink => EntryType::Symlink,
        _ => EntryType::Other,
    }
}

pub(crate) fn entry_stat(st: &rustix::fs::Stat) -> EntryStat {
    // Nanoseconds since the epoch; unknown before it or past what a u64 holds (2554).
    let ns = |secs: Option<u64>, nsec: u64| secs?.checked_mul(1_000_000_000)?.checked_add(nsec);
    let (ns, changed) = (
        ns(u64::try_from(st.st_mtime).ok(), st.st_mtime_nsec),
        ns(u64::try_from(st.st_ctime).ok(), st.st_ctime_nsec),
    );
    EntryStat {
        kind: kind_of_mode(st.st_mode),
        size: st.st_size.max(0) as u64,
        link_count: st.st_nlink,
        modified_ns: ns,
        changed_ns: changed,
        device: st.st_dev,
        inode: st.st_ino,
    }
}

const OPEN: OFlags = OFlags::CLOEXEC
    .union(OFlags::NOFOLLOW)
    .union(OFlags::NONBLOCK);

/// Opens `name` in `dir` without following a link and without blocking, and checks on
/// the descriptor that it is a directory (`want_dir`) or a regular file.
fn open_plain(dir: &OwnedFd, name: &str, want_dir: bool) -> Result<OwnedFd, FsError> {
    name_ok(name)?;
    let (flags, want) = if want_dir {
        (
            OPEN | OFlags::RDONLY | OFlags::DIRECTORY,
            FileType::Directory,
        )
    } else {
        (
            OPEN | OFlags::RDONLY | OFlags::NOCTTY,
            FileType::RegularFile,
        )
    };
    let fd = rustix::fs::openat(dir, name, flags, Mode::empty()).map_err(fs_err)?;
    let st = rustix::fs::fstat(&fd).map_err(fs_err)?;
    if FileType::from_raw_mode(st.st_mode) != want {
        return Err(FsError::NotPlain);
    }
    Ok(fd)
}

impl HostState {
    fn dir(&self, d: &Resource<OpenDir>) -> Result<Arc<OwnedFd>, FsError> {
        self.table
            .get(d)
            .map(|d| d.fd.clone())
            .map_err(|e| FsError::Other(e.to_string()))
    }

    /// The directory for a change of `name` in it. The first change of a call is its point
    /// of no return: from here on a cancel no longer stops it (see [`crate::call`]).
    fn change(&mut self, d: &Resource<OpenDir>, name: &str) -> Result<Arc<OwnedFd>, FsError> {
        if self.read_only {
            return Err(FsError::Access);
        }
        name_ok(name)?;
        if self.call.stops_for_cancel() {
            // A cancel that came between two epoch ticks (during an approval, say) still
            // stops the call here, before its first change.
            return Err(FsError::Other("the call was cancelled".to_string()));
        }
        self.call.changing = true;
        self.call.listings.stop();
        self.dir(d)
    }
}

impl DirMethods for HostState {
    fn stat(&mut self, d: Resource<OpenDir>) -> Result<EntryStat, FsError> {
        let fd = self.dir(&d)?;
        rustix::fs::fstat(&*fd)
            .map(|s| entry_stat(&s))
            .map_err(fs_err)
    }

    fn stat_at(&mut self, d: Resource<OpenDir>, name: String) -> Result<EntryStat, FsError> {
        name_ok(&name)?;
        let fd = self.dir(&d)?;
        rustix::fs::statat(&*fd, name.as_str(), AtFlags::SYMLINK_NOFOLLOW)
            .map(|s| entry_stat(&s))
            .map_err(fs_err)
    }

    fn open_dir(
        &mut self,
        d: Resource<OpenDir>,
        name: String,
    ) -> Result<Resource<OpenDir>, FsError> {
        let fd = self.dir(&d)?;
        let sub = open_plain(&fd, &name, true)?;
        self.table
            .push(OpenDir { fd: Arc::new(sub) })
            .map_err(|e| FsError::Other(e.to_string()))
    }

    fn open_file(
        &mut self,
        d: Resource<OpenDir>,
        name: String,
    ) -> Result<Resource<OpenFile>, FsError> {
        let fd = self.dir(&d)?;
        let f = open_plain(&fd, &name, false)?;
        self.table
            .push(OpenFile { fd: f })
            .map_err(|e| FsError::Other(e.to_string()))
    }

    fn read_link(&mut self, d: Resource<OpenDir>, name: String) -> Result<String, FsError> {
        name_ok(&name)?;
        let fd = self.dir(&d)?;
        let text = rustix::fs::readlinkat(&*fd, name.as_str(), Vec::new()).map_err(fs_err)?;
        text.into_string()
            .map_err(|_| FsError::Other("the link's text is not UTF-8".into()))
    }

    fn entries(&mut self, d: Resource<OpenDir>) -> Result<Vec<DirEntry>, FsError> {
        let fd = self.dir(&d)?;
        let mut out = Vec::new();
        let mut dir = rustix::fs::Dir::read_from(&*fd).map_err(fs_err)?;
        while let Some(e) = dir.read() {
            let e = e.map_err(fs_err)?;
            let raw = e.file_name().to_bytes();
            if raw == b"." || raw == b".." {
                continue;
            }
            let name = std::str::from_utf8(raw).ok().map(str::to_string);
            let kind = listed_kind(&*fd, e.file_name(), e.file_type());
            out.push(DirEntry { name, kind });
        }
        Ok(out)
    }

    fn create_new(
        &mut self,
        d: Resource<OpenDir>,
        name: String,
        data: Vec<u8>,
    ) -> Result<(), FsError> {
        let fd = self.change(&d, &name)?;
        let flags = OPEN | OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL;
        let f = rustix::fs::openat(&*fd, name.as_str(), flags, Mode::from_raw_mode(0o666))
            .map_err(fs_err)?;
        let mut f = std::fs::File::from(f);
        let written = f.write_all(&data).and_then(|()| f.sync_all());
        if let Err(e) = written {
            let _ = rustix::fs::unlinkat(&*fd, name.as_str(), AtFlags::empty());
            return Err(FsError::Other(e.to_string()));
        }
        Ok(())
    }

    fn rename(&mut self, d: Resource<OpenDir>, from: String, to: String) -> Result<(), FsError> {
        let fd = self.change(&d, &from)?;
        name_ok(&to)?;
        rustix::fs::renameat(&*fd, from.as_str(), &*fd, to.as_str()).map_err(fs_err)
    }

    fn unlink(&mut self, d: Resource<OpenDir>, name: String) -> Result<(), FsError> {
        let fd = self.change(&d, &name)?;
        rustix::fs::unlinkat(&*fd, name.as_str(), AtFlags::empty()).map_err(fs_err)
    }

    fn mkdir(&mut self, d: Resource<OpenDir>, name: String) -> Result<(), FsError> {
        let fd = self.change(&d, &name)?;
        rustix::fs::mkdirat(&*fd, name.as_str(), Mode::from_raw_mode(0o777)).map_err(fs_err)
    }

    fn rmdir(&mut self, d: Resource<OpenDir>, name: String) -> Result<(), FsError> {
        let fd = self.change(&d, &name)?;
        rustix::fs::unlinkat(&*fd, name.as_str(), AtFlags::REMOVEDIR).map_err(fs_err)
    }

    fn drop(&mut self, d: Resource<OpenDir>) -> wasmtime::Result<()> {
        self.table.delete(d)?;
        Ok(())
    }
}

impl FileMethods for HostState {
    fn stat(&mut self, f: Resource<OpenFile>) -> Result<EntryStat, FsError> {
        let file = self
            .table
            .get(&f)
            .map_err(|e| FsError::Other(e.to_string()))?;
        rustix::fs::fstat(&file.fd)
            .map(|s| entry_stat(&s))
            .map_err(fs_err)
    }

    fn read_at(
        &mut self,
        f: Resource<OpenFile>,
        offset: u64,
        len: u64,
    ) -> Result<Vec<u8>, FsError> {
        let file = self
            .table
            .get(&f)
            .map_err(|e| FsError::Other(e.to_string()))?;
        // Bounded by what one call may carry; the component asks for at most 1 MiB.
        let len = len.min(16 << 20) as usize;
        let mut buf: Vec<u8> = Vec::with_capacity(len);
        while buf.len() < len {
            let at = offset + buf.len() as u64;
            match rustix::io::pread(&file.fd, rustix::buffer::spare_capacity(&mut buf), at) {
                Ok(0) => break,
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(fs_err(e)),
            }
        }
        Ok(buf)
    }

    fn drop(&mut self, f: Resource<OpenFile>) -> wasmtime::Result<()> {
        self.table.delete(f)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A FIFO is refused at once (a blocking open would wait here for a writer forever), a
    /// symlink is never followed, and a plain file and directory open.
    #[test]
    fn opens_refuse_fifos_and_links_without_blocking() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir(t.path().join("sub")).unwrap();
        std::fs::write(t.path().join("file"), "x").unwrap();
        std::os::unix::fs::symlink("file", t.path().join("link")).unwrap();
        std::os::unix::fs::symlink("sub", t.path().join("dirlink")).unwrap();
        let dir =
            rustix::fs::open(t.path(), OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()).unwrap();
        rustix::fs::mknodat(&dir, "pipe", FileType::Fifo, Mode::from_raw_mode(0o644), 0).unwrap();
        let refused = |name: &str, want_dir: bool| open_plain(&dir, name, want_dir).unwrap_err();
        assert!(matches!(refused("pipe", false), FsError::NotPlain));
        assert!(matches!(refused("pipe", true), FsError::NotADirectory));
        assert!(matches!(refused("link", false), FsError::NotPlain));
        assert!(matches!(
            refused("dirlink", true),
            FsError::NotADirectory | FsError::NotPlain
        ));
        assert!(matches!(refused("sub", false), FsError::NotPlain));
        assert!(matches!(refused("../file", false), FsError::Other(_)));
        assert!(open_plain(&dir, "file", false).is_ok());
        assert!(open_plain(&dir, "sub", true).is_ok());
    }
}
