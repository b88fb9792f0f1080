//! The host's `host-fs.dir` resource as a backend of the filesystem port (world
//! `file-tools` only). The host opens every name non-blocking and without following a
//! link, and checks what it opened on the descriptor, so a FIFO swapped in fails at once.

use std::io;
use std::time::{Duration, UNIX_EPOCH};

use super::agent::file_tools::host_fs::{self as h, EntryStat, FsError};
use super::Conv;
use crate::fs::port::{DirItem, DirOps, FileId, FileOps, Stat};

/// A directory the host holds open.
#[derive(Debug)]
pub struct HostDir(pub h::Dir);

/// A file the host opened for reading.
#[derive(Debug)]
pub struct HostFile(h::File);

fn err(e: FsError) -> io::Error {
    use io::ErrorKind as K;
    match e {
        FsError::NotFound => K::NotFound.into(),
        FsError::AlreadyExists => K::AlreadyExists.into(),
        FsError::NotADirectory => K::NotADirectory.into(),
        FsError::IsADirectory => K::IsADirectory.into(),
        FsError::NotPlain => io::Error::new(K::InvalidInput, "a symlink or special file"),
        FsError::NotEmpty => K::DirectoryNotEmpty.into(),
        FsError::Access => K::PermissionDenied.into(),
        FsError::Other(msg) => io::Error::other(msg),
    }
}

pub(super) fn stat_of(s: &EntryStat) -> Stat {
    Stat {
        ty: s.kind.conv(),
        size: s.size,
        nlink: s.link_count,
        modified: s
            .modified_ns
            .map(|ns| UNIX_EPOCH + Duration::from_nanos(ns)),
        changed: s.changed_ns.map(|ns| UNIX_EPOCH + Duration::from_nanos(ns)),
        inode: Some(s.inode),
    }
}

impl DirOps for HostDir {
    fn stat_at(&self, name: &str) -> io::Result<Stat> {
        self.0.stat_at(name).map(|s| stat_of(&s)).map_err(err)
    }

    fn stat(&self) -> io::Result<Stat> {
        self.0.stat().map(|s| stat_of(&s)).map_err(err)
    }

    fn id(&self) -> io::Result<FileId> {
        self.0
            .stat()
            .map(|s| FileId(s.device, s.inode))
            .map_err(err)
    }

    fn id_at(&self, name: &str) -> io::Result<FileId> {
        self.0
            .stat_at(name)
            .map(|s| FileId(s.device, s.inode))
            .map_err(err)
    }

    fn open_dir(&self, name: &str) -> io::Result<Box<dyn DirOps>> {
        self.0
            .open_dir(name)
            .map(|d| Box::new(HostDir(d)) as Box<dyn DirOps>)
            .map_err(err)
    }

    /// The host opens with `O_NOFOLLOW | O_DIRECTORY | O_NONBLOCK` and checks the type on
    /// the descriptor (`open_plain` in the host's `host_fs`).
    fn opens_only_directories(&self) -> bool {
        true
    }

    fn open_file(&self, name: &str) -> io::Result<Box<dyn FileOps>> {
        self.0
            .open_file(name)
            .map(|f| Box::new(HostFile(f)) as Box<dyn FileOps>)
            .map_err(err)
    }

    fn read_link(&self, name: &str) -> io::Result<String> {
        self.0.read_link(name).map_err(err)
    }

    fn entries(&self) -> io::Result<Vec<DirItem>> {
        let list = self.0.entries().map_err(err)?;
        Ok(list
            .into_iter()
            .map(|e| (e.name.ok_or(()), e.kind.conv()))
            .collect())
    }

    fn create_new(&self, name: &str, data: &[u8]) -> io::Result<()> {
        self.0.create_new(name, data).map_err(err)
    }

    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        self.0.rename(from, to).map_err(err)
    }

    fn unlink(&self, name: &str) -> io::Result<()> {
        self.0.unlink(name).map_err(err)
    }

    fn mkdir(&self, name: &str) -> io::Result<()> {
        self.0.mkdir(name).map_err(err)
    }

    fn rmdir(&self, name: &str) -> io::Result<()> {
        self.0.rmdir(name).map_err(err)
    }
}

impl FileOps for HostFile {
    fn stat(&self) -> io::Result<Stat> {
        self.0.stat().map(|s| stat_of(&s)).map_err(err)
    }

    fn read_at(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        self.0.read_at(offset, len as u64).map_err(err)
    }
}
