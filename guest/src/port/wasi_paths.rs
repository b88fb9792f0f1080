//! The port over WASI hosts whose directory descriptors are path strings (jco's
//! preview2-shim on Node, which has no `openat`): there a descriptor other than the
//! preopen stores the path it was opened at and resolves it again, with `realpath`, on
//! every use. A subdirectory held while it is renamed away and replaced by a link leading
//! out of the repository would then lead out too. So this backend never works through a
//! held subdirectory: every operation names its path from the preopen (whose walk the host
//! does one component at a time, refusing links that climb out or are absolute), and each
//! directory remembers the inode it had when it was opened. After every operation (before
//! it too, for changes) the path is looked at again: a directory that is no longer the one
//! that was opened fails the call with `Interrupted`, and a file opened for reading must
//! be the object its path names. Such checks narrow the window; they cannot close it (a
//! swap and a swap back between two calls is not seen), which SECURITY.md states.
//!
//! Identities here are inodes alone: the shim's metadata hash mixes in the modification
//! time, which changes whenever a directory's entries do.

use std::io;
use std::sync::Arc;

use wasip2::filesystem::types::{Descriptor, DescriptorFlags, OpenFlags, PathFlags};

use super::wasi::{err, stat_of, File};
use super::{DirItem, DirOps, FileId, FileOps, Stat};

/// A directory named by its path below the preopen.
#[derive(Debug)]
pub struct PathDir {
    root: Arc<Descriptor>,
    /// The path below the root, `""` for the root itself.
    rel: String,
    /// The directory's inode when it was opened (`None` for the root).
    ino: Option<u64>,
}

fn changed(rel: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::Interrupted,
        format!("'{rel}' changed while it was being used"),
    )
}

impl PathDir {
    /// The preopen itself.
    pub fn root(d: Descriptor) -> PathDir {
        PathDir {
            root: Arc::new(d),
            rel: String::new(),
            ino: None,
        }
    }

    /// `name` below this directory, as a path from the root.
    fn path(&self, name: &str) -> String {
        if self.rel.is_empty() {
            name.to_string()
        } else {
            format!("{}/{name}", self.rel)
        }
    }

    /// The inode of whatever `path` names now, without following a final link.
    fn ino_at(&self, path: &str) -> io::Result<u64> {
        self.root
            .metadata_hash_at(PathFlags::empty(), path)
            .map(|h| h.lower)
            .map_err(err)
    }

    /// Fails unless this directory's path still names the directory that was opened.
    fn verify(&self) -> io::Result<()> {
        let Some(ino) = self.ino else { return Ok(()) };
        match self.ino_at(&self.rel) {
            Ok(now) if now == ino => Ok(()),
            _ => Err(changed(&self.rel)),
        }
    }

    /// Runs `op` and keeps its answer only if the directory was still the one opened
    /// afterwards.
    fn checked<T>(&self, op: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
        let r = op();
        self.verify()?;
        r
    }

    /// Runs a change: the directory is checked before (so that a swap already in place
    /// changes nothing) and after.
    fn change(&self, op: impl FnOnce() -> io::Result<()>) -> io::Result<()> {
        self.verify()?;
        self.checked(op)
    }

    /// This directory opened as a descriptor (for what only a descriptor answers).
    fn open_self(&self) -> io::Result<Descriptor> {
        let path = if self.rel.is_empty() { "." } else { &self.rel };
        let d = self
            .root
            .open_at(
                PathFlags::empty(),
                path,
                OpenFlags::DIRECTORY,
                DescriptorFlags::READ,
            )
            .map_err(err)?;
        if let Some(ino) = self.ino {
            let now = d.metadata_hash().map_err(err)?.lower;
            if now != ino {
                return Err(changed(&self.rel));
            }
        }
        Ok(d)
    }
}

impl DirOps for PathDir {
    fn stat_at(&self, name: &str) -> io::Result<Stat> {
        let p = self.path(name);
        self.checked(|| {
            self.root
                .stat_at(PathFlags::empty(), &p)
                .map(|s| stat_of(&s))
                .map_err(err)
        })
    }

    fn stat(&self) -> io::Result<Stat> {
        let d = self.open_self()?;
        d.stat().map(|s| stat_of(&s)).map_err(err)
    }

    fn id(&self) -> io::Result<FileId> {
        match self.ino {
            Some(ino) => Ok(FileId(0, ino)),
            None => Ok(FileId(
                0,
                self.open_self()?.metadata_hash().map_err(err)?.lower,
            )),
        }
    }

    fn id_at(&self, name: &str) -> io::Result<FileId> {
        let p = self.path(name);
        self.checked(|| self.ino_at(&p).map(|ino| FileId(0, ino)))
    }

    fn open_dir(&self, name: &str) -> io::Result<Box<dyn DirOps>> {
        let p = self.path(name);
        let d = self.checked(|| {
            self.root
                .open_at(
                    PathFlags::empty(),
                    &p,
                    OpenFlags::DIRECTORY,
                    DescriptorFlags::READ,
                )
                .map_err(err)
        })?;
        // The inode of what was opened, which must be what the path names.
        let ino = d.metadata_hash().map_err(err)?.lower;
        if self.ino_at(&p)? != ino {
            return Err(changed(&p));
        }
        Ok(Box::new(PathDir {
            root: self.root.clone(),
            rel: p,
            ino: Some(ino),
        }))
    }

    fn open_file(&self, name: &str) -> io::Result<Box<dyn FileOps>> {
        let p = self.path(name);
        let f = self.checked(|| {
            self.root
                .open_at(
                    PathFlags::empty(),
                    &p,
                    OpenFlags::empty(),
                    DescriptorFlags::READ,
                )
                .map_err(err)
        })?;
        let ino = f.metadata_hash().map_err(err)?.lower;
        if self.ino_at(&p)? != ino {
            return Err(changed(&p));
        }
        Ok(Box::new(File::new(f)))
    }

    fn read_link(&self, name: &str) -> io::Result<String> {
        let p = self.path(name);
        self.checked(|| self.root.readlink_at(&p).map_err(err))
    }

    fn entries(&self) -> io::Result<Vec<DirItem>> {
        self.checked(|| super::wasi::entries_of(&self.open_self()?))
    }

    fn create_new(&self, name: &str, data: &[u8]) -> io::Result<()> {
        let p = self.path(name);
        self.change(|| super::wasi::create_new_at(&self.root, &p, data))
    }

    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        let (from, to) = (self.path(from), self.path(to));
        self.change(|| self.root.rename_at(&from, &self.root, &to).map_err(err))
    }

    fn unlink(&self, name: &str) -> io::Result<()> {
        let p = self.path(name);
        self.change(|| self.root.unlink_file_at(&p).map_err(err))
    }

    fn mkdir(&self, name: &str) -> io::Result<()> {
        let p = self.path(name);
        self.change(|| self.root.create_directory_at(&p).map_err(err))
    }

    fn rmdir(&self, name: &str) -> io::Result<()> {
        let p = self.path(name);
        self.change(|| self.root.remove_directory_at(&p).map_err(err))
    }
}
