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
//! The shim also reads every `\` in a path as `/` (on Linux too) and resolves `..` by
//! text, so a name holding a backslash (`x\..\.env`, a link's text, a directory called
//! `d\..`) would be judged as one name here and opened as another there: such names are
//! refused in every operation, left unnamed in listings (walks count them as unreadable)
//! and refused in link texts.
//!
//! Identities: a directory's is its inode (the shim's metadata hash mixes in the
//! modification time, which changes whenever a directory's entries do); a file's is its
//! inode and modification time. Neither carries the device, which the shim does not give.
//! The root's own inode is taken when the session starts, so a repository renamed away and
//! replaced by a link is noticed too.

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
    /// The directory's inode when it was opened (for the root: when the session started).
    ino: u64,
}

/// Refuses a name that the shim would read as a path (a backslash is a separator there).
fn plain(name: &str) -> io::Result<&str> {
    if name.contains('\\') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("'{name}' holds a backslash, which this host reads as a path separator"),
        ));
    }
    Ok(name)
}

fn changed(rel: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::Interrupted,
        format!("'{rel}' changed while it was being used"),
    )
}

impl PathDir {
    /// The preopen itself, whose inode is taken now.
    ///
    /// # Errors
    /// When the root cannot be opened.
    pub fn root(d: Descriptor) -> io::Result<PathDir> {
        let opened = d
            .open_at(
                PathFlags::empty(),
                ".",
                OpenFlags::DIRECTORY,
                DescriptorFlags::READ,
            )
            .map_err(err)?;
        let ino = opened.metadata_hash().map_err(err)?.lower;
        Ok(PathDir {
            root: Arc::new(d),
            rel: String::new(),
            ino,
        })
    }

    /// This directory's path from the root (`.` for the root itself).
    fn own_path(&self) -> &str {
        if self.rel.is_empty() {
            "."
        } else {
            &self.rel
        }
    }

    /// `name` below this directory, as a path from the root.
    fn path(&self, name: &str) -> io::Result<String> {
        let name = plain(name)?;
        Ok(if self.rel.is_empty() {
            name.to_string()
        } else {
            format!("{}/{name}", self.rel)
        })
    }

    /// The identity (modification time, inode) of whatever `path` names now, without
    /// following a final link.
    fn id_of(&self, path: &str) -> io::Result<(u64, u64)> {
        self.root
            .metadata_hash_at(PathFlags::empty(), path)
            .map(|h| (h.upper, h.lower))
            .map_err(err)
    }

    /// Fails unless this directory's path still names the directory that was opened.
    fn verify(&self) -> io::Result<()> {
        match self.id_of(self.own_path()) {
            Ok((_, now)) if now == self.ino => Ok(()),
            _ => Err(changed(self.own_path())),
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
        let d = self
            .root
            .open_at(
                PathFlags::empty(),
                self.own_path(),
                OpenFlags::DIRECTORY,
                DescriptorFlags::READ,
            )
            .map_err(err)?;
        if d.metadata_hash().map_err(err)?.lower != self.ino {
            return Err(changed(self.own_path()));
        }
        Ok(d)
    }
}

impl DirOps for PathDir {
    fn stat_at(&self, name: &str) -> io::Result<Stat> {
        let p = self.path(name)?;
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
        Ok(FileId(0, self.ino))
    }

    fn id_at(&self, name: &str) -> io::Result<FileId> {
        let p = self.path(name)?;
        self.checked(|| self.id_of(&p).map(|(_, ino)| FileId(0, ino)))
    }

    fn open_dir(&self, name: &str) -> io::Result<Box<dyn DirOps>> {
        let p = self.path(name)?;
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
        if self.id_of(&p)?.1 != ino {
            return Err(changed(&p));
        }
        Ok(Box::new(PathDir {
            root: self.root.clone(),
            rel: p,
            ino,
        }))
    }

    fn open_file(&self, name: &str) -> io::Result<Box<dyn FileOps>> {
        let p = self.path(name)?;
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
        let h = f.metadata_hash().map_err(err)?;
        if self.id_of(&p)? != (h.upper, h.lower) {
            return Err(changed(&p));
        }
        Ok(Box::new(File::new(f)))
    }

    fn read_link(&self, name: &str) -> io::Result<String> {
        let p = self.path(name)?;
        let text = self.checked(|| self.root.readlink_at(&p).map_err(err))?;
        plain(&text)?;
        Ok(text)
    }

    fn entries(&self) -> io::Result<Vec<DirItem>> {
        let mut items = self.checked(|| super::wasi::entries_of(&self.open_self()?))?;
        for item in &mut items {
            if item.0.as_deref().is_ok_and(|n| plain(n).is_err()) {
                item.0 = Err(());
            }
        }
        Ok(items)
    }

    fn create_new(&self, name: &str, data: &[u8]) -> io::Result<()> {
        let p = self.path(name)?;
        self.change(|| super::wasi::create_new_at(&self.root, &p, data))
    }

    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        let (from, to) = (self.path(from)?, self.path(to)?);
        self.change(|| self.root.rename_at(&from, &self.root, &to).map_err(err))
    }

    fn unlink(&self, name: &str) -> io::Result<()> {
        let p = self.path(name)?;
        self.change(|| self.root.unlink_file_at(&p).map_err(err))
    }

    fn mkdir(&self, name: &str) -> io::Result<()> {
        let p = self.path(name)?;
        self.change(|| self.root.create_directory_at(&p).map_err(err))
    }

    fn rmdir(&self, name: &str) -> io::Result<()> {
        let p = self.path(name)?;
        self.change(|| self.root.remove_directory_at(&p).map_err(err))
    }
}
