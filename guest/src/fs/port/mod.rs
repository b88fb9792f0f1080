//! The filesystem port: the only way the tools reach the repository.
//!
//! A [`Dir`] is a held directory handle. Every operation takes **one name** relative to it
//! (never `/`, `.`, `..`, an empty name or a NUL), and none follows a symlink: a symlink is
//! an entry like any other, which the caller reads with [`Dir::read_link`] and resolves
//! itself. What is opened is checked on the opened descriptor (a directory is a directory,
//! a file is a regular file), so a name swapped between a look and an open is caught, and
//! writes go to a temporary name created exclusively in a held directory and renamed within
//! it, so a parent swapped for a link or another directory after it was opened cannot
//! redirect them.
//!
//! Backends implement [`DirOps`] and [`FileOps`]: WASI Preview 2 descriptors in the
//! component (`wasi`), cap-std directories natively for unit tests (`native`), and the
//! host's `host-fs.dir` resource, which the bindings shell wraps and injects when the host
//! offers it. All refuse special files (FIFOs, sockets, devices) before opening them;
//! natively and through the host the open is also non-blocking. Under WASI alone a FIFO
//! swapped in between the look and the open can still block the open (WASI has no
//! non-blocking open); SECURITY.md says so.

use std::io;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

#[cfg(not(target_os = "wasi"))]
mod native;
mod short_name;
#[cfg(target_os = "wasi")]
mod wasi;
#[cfg(target_os = "wasi")]
mod wasi_paths;

/// One backend's directory operations. Every `name` has passed [`check_name`]; none may
/// follow a symlink.
pub trait DirOps: std::fmt::Debug + Send + Sync {
    /// The entry `name`, not followed (`NotFound` when absent).
    fn stat_at(&self, name: &str) -> io::Result<Stat>;
    fn stat(&self) -> io::Result<Stat>;
    fn id(&self) -> io::Result<FileId>;
    fn id_at(&self, name: &str) -> io::Result<FileId>;
    fn open_dir(&self, name: &str) -> io::Result<Box<dyn DirOps>>;
    /// Whether [`DirOps::open_dir`] itself refuses what is not a directory without opening
    /// it (a link is not followed, and the type is asked for at the open, as `O_DIRECTORY`
    /// does) and checks the type on what it opened: the port then takes no looks of its
    /// own before and after (two calls to the host per directory).
    fn opens_only_directories(&self) -> bool {
        false
    }
    fn open_file(&self, name: &str) -> io::Result<Box<dyn FileOps>>;
    fn read_link(&self, name: &str) -> io::Result<String>;
    fn entries(&self) -> io::Result<Vec<DirItem>>;
    fn create_new(&self, name: &str, data: &[u8]) -> io::Result<()>;
    fn rename(&self, from: &str, to: &str) -> io::Result<()>;
    fn unlink(&self, name: &str) -> io::Result<()>;
    fn mkdir(&self, name: &str) -> io::Result<()>;
    fn rmdir(&self, name: &str) -> io::Result<()>;
}

/// One backend's operations on a file opened for reading.
pub trait FileOps: std::fmt::Debug + Send + Sync {
    fn stat(&self) -> io::Result<Stat>;
    fn read_at(&self, offset: u64, len: usize) -> io::Result<Vec<u8>>;
}

/// What an entry is on disk; one-to-one with the WIT `entry-type` enum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EntryType {
    File,
    Dir,
    Symlink,
    Other,
}

/// What a look at one entry tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    pub ty: EntryType,
    pub size: u64,
    /// Number of names (hard links) of the object.
    pub nlink: u64,
    pub modified: Option<SystemTime>,
    /// Status change time (ctime): moves with every write, rename or permission change,
    /// and cannot be set back by a user (`touch -r` sets only the modification time).
    /// `None` when the backend does not report it.
    pub changed: Option<SystemTime>,
    /// The inode number, when the backend reports it (plain WASI does not).
    pub inode: Option<u64>,
}

impl Stat {
    pub fn is_file(&self) -> bool {
        self.ty == EntryType::File
    }

    pub fn is_dir(&self) -> bool {
        self.ty == EntryType::Dir
    }
}

/// The identity of a file-system object (device and inode, or a hash of them): equal for
/// two handles exactly when they name the same object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FileId(pub u64, pub u64);

/// A directory entry: its name (`Err` when not valid UTF-8) and type, without following.
pub type DirItem = (Result<String, ()>, EntryType);

/// A held directory handle.
#[derive(Debug)]
pub struct Dir(Box<dyn DirOps>);

/// A regular file opened for reading.
#[derive(Debug)]
pub struct File(Box<dyn FileOps>);

/// Refuses anything that is not exactly one plain name.
fn check_name(name: &str) -> io::Result<()> {
    if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\0']) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("'{name}' is not a single path component"),
        ));
    }
    Ok(())
}

/// The error for an entry that is not of the type an operation needs.
pub fn wrong_type(name: &str, want: &str, got: EntryType) -> io::Error {
    let kind = match got {
        EntryType::Dir => io::ErrorKind::IsADirectory,
        EntryType::File if want == "a directory" => io::ErrorKind::NotADirectory,
        _ => io::ErrorKind::InvalidInput,
    };
    let got = match got {
        EntryType::File => "a regular file",
        EntryType::Dir => "a directory",
        EntryType::Symlink => "a symlink",
        EntryType::Other => "a special file",
    };
    io::Error::new(kind, format!("'{name}' is {got}, not {want}"))
}

/// The error for an object that changed between the look and the open.
fn changed(name: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::Interrupted,
        format!("'{name}' changed while it was being opened"),
    )
}

impl Dir {
    /// Opens `path` (a directory outside the port's control: the repository root natively).
    ///
    /// # Errors
    /// When it cannot be opened or is not a directory.
    #[cfg(not(target_os = "wasi"))]
    pub fn open_ambient(path: &std::path::Path) -> io::Result<Dir> {
        native::Dir::open_ambient(path).map(|d| Dir(Box::new(d)))
    }

    /// Wraps a WASI descriptor (a preopen) as the port's directory.
    #[cfg(target_os = "wasi")]
    pub fn from_descriptor(d: wasip2::filesystem::types::Descriptor) -> Dir {
        Dir(Box::new(wasi::Dir::new(d)))
    }

    /// Wraps a WASI preopen on a host whose directory descriptors are path strings
    /// resolved again on every use (jco's preview2-shim): every operation then names its
    /// path from the preopen and re-checks the directory's identity (`wasi_paths`).
    ///
    /// # Errors
    /// When the root cannot be opened to take its identity.
    #[cfg(target_os = "wasi")]
    pub fn from_path_descriptor(d: wasip2::filesystem::types::Descriptor) -> io::Result<Dir> {
        wasi_paths::PathDir::root(d).map(|d| Dir(Box::new(d)))
    }

    /// Wraps another backend's directory (the host's, injected by the bindings shell).
    pub fn from_ops(ops: Box<dyn DirOps>) -> Dir {
        Dir(ops)
    }

    /// Whether `name` opens an entry listed under another name: a Windows short name (see
    /// `short_name`). Only names of that shape cost a listing.
    fn is_alias(&self, name: &str) -> io::Result<bool> {
        if !short_name::looks_short(name) {
            return Ok(false);
        }
        let listed = self
            .0
            .entries()?
            .iter()
            .any(|(n, _)| n.as_deref() == Ok(name));
        Ok(!listed && self.0.stat_at(name).is_ok())
    }

    /// Checks `name` as [`check_name`] does and refuses a short name of another entry as
    /// absent.
    fn check_listed(&self, name: &str) -> io::Result<()> {
        check_name(name)?;
        if self.is_alias(name)? {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("'{name}' is not an entry of this directory"),
            ));
        }
        Ok(())
    }

    /// Looks at the entry `name` without following a symlink; `None` when nothing is there.
    ///
    /// # Errors
    /// When the look fails for another reason than absence.
    pub fn stat_at(&self, name: &str) -> io::Result<Option<Stat>> {
        check_name(name)?;
        if self.is_alias(name)? {
            return Ok(None);
        }
        match self.0.stat_at(name) {
            Ok(s) => Ok(Some(s)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// This directory's own metadata.
    ///
    /// # Errors
    /// When the system fails.
    pub fn stat(&self) -> io::Result<Stat> {
        self.0.stat()
    }

    /// This directory's identity.
    ///
    /// # Errors
    /// When the system fails.
    pub fn id(&self) -> io::Result<FileId> {
        self.0.id()
    }

    /// The identity of the entry `name`, without following a symlink.
    ///
    /// # Errors
    /// When the entry is missing or the system fails.
    pub fn id_at(&self, name: &str) -> io::Result<FileId> {
        self.check_listed(name)?;
        self.0.id_at(name)
    }

    /// Opens the subdirectory `name`. A symlink, a file or a special file there is refused
    /// without being opened; what was opened is checked to be a directory.
    ///
    /// # Errors
    /// `NotFound`, a type error from [`wrong_type`], or the system's error.
    pub fn open_dir(&self, name: &str) -> io::Result<Dir> {
        self.check_listed(name)?;
        if self.0.opens_only_directories() {
            // What is there when the open fails is found by the looks below.
            if let Ok(d) = self.0.open_dir(name) {
                return Ok(Dir(d));
            }
        }
        let st = self.0.stat_at(name)?;
        if !st.is_dir() {
            return Err(wrong_type(name, "a directory", st.ty));
        }
        let d = self.0.open_dir(name)?;
        if !d.stat()?.is_dir() {
            return Err(changed(name));
        }
        Ok(Dir(d))
    }

    /// Opens the regular file `name` for reading. A symlink or special file there is
    /// refused without being opened; what was opened is checked to be a regular file.
    ///
    /// # Errors
    /// `NotFound`, a type error from [`wrong_type`], or the system's error.
    pub fn open_file(&self, name: &str) -> io::Result<(File, Stat)> {
        self.check_listed(name)?;
        let st = self.0.stat_at(name)?;
        if !st.is_file() {
            return Err(wrong_type(name, "a regular file", st.ty));
        }
        let f = self.0.open_file(name)?;
        let st = f.stat()?;
        if !st.is_file() {
            return Err(changed(name));
        }
        Ok((File(f), st))
    }

    /// Up to `max` bytes of the regular file `name`, with its metadata as opened.
    ///
    /// # Errors
    /// As [`Dir::open_file`], or a read failure.
    pub fn read_file(&self, name: &str, max: u64) -> io::Result<(Vec<u8>, Stat)> {
        let (f, st) = self.open_file(name)?;
        let data = f.read_all(st.size, max)?;
        Ok((data, st))
    }

    /// The text of the symlink `name`, as stored (the caller judges where it leads).
    ///
    /// # Errors
    /// When `name` is not a symlink or the system refuses.
    pub fn read_link(&self, name: &str) -> io::Result<String> {
        self.check_listed(name)?;
        self.0.read_link(name)
    }

    /// Every entry of this directory, in no particular order.
    ///
    /// # Errors
    /// When the directory cannot be read.
    pub fn entries(&self) -> io::Result<Vec<DirItem>> {
        self.0.entries()
    }

    /// Creates the file `name`, which must not exist (no symlink is followed: an entry of
    /// any kind there fails the call), writes `data` and flushes it to disk.
    ///
    /// # Errors
    /// `AlreadyExists`, or the system's error; a half-written file is removed.
    pub fn create_new(&self, name: &str, data: &[u8]) -> io::Result<()> {
        check_name(name)?;
        let r = self.0.create_new(name, data);
        if r.is_err() {
            let _ = self.0.unlink(name);
        }
        r
    }

    /// Renames the entry `from` to `to`, both in this directory (replacing `to`).
    ///
    /// # Errors
    /// The system's error.
    pub fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        self.check_listed(from)?;
        // Replacing `to` must not replace an entry listed under another name.
        self.check_listed(to).map_err(|_| {
            io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("'{to}' is the short name of another entry"),
            )
        })?;
        self.0.rename(from, to)
    }

    /// Removes the non-directory entry `name` (a symlink itself, never its target).
    ///
    /// # Errors
    /// The system's error.
    pub fn unlink(&self, name: &str) -> io::Result<()> {
        self.check_listed(name)?;
        self.0.unlink(name)
    }

    /// Creates the directory `name`.
    ///
    /// # Errors
    /// `AlreadyExists`, or the system's error.
    pub fn mkdir(&self, name: &str) -> io::Result<()> {
        check_name(name)?;
        self.0.mkdir(name)
    }

    /// Removes the empty directory `name`.
    ///
    /// # Errors
    /// The system's error (a non-empty directory fails).
    pub fn rmdir(&self, name: &str) -> io::Result<()> {
        self.check_listed(name)?;
        self.0.rmdir(name)
    }
}

impl File {
    /// Up to `len` bytes from `offset`; fewer only at the end of the file.
    ///
    /// # Errors
    /// The system's error.
    pub fn read_at(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        self.0.read_at(offset, len)
    }

    /// The file as of `size` (its size on the opened descriptor), up to `max` bytes; a file
    /// that reports no size is read to its end. No read past the size to look for growth:
    /// the answer is the file as it was when opened.
    ///
    /// # Errors
    /// The system's error.
    pub fn read_all(&self, size: u64, max: u64) -> io::Result<Vec<u8>> {
        let end = if size == 0 { max } else { size.min(max) };
        let mut out = Vec::with_capacity(end.min(1 << 24) as usize);
        while (out.len() as u64) < end {
            let want = (end - out.len() as u64).min(1 << 20) as usize;
            let chunk = self.0.read_at(out.len() as u64, want)?;
            if chunk.is_empty() {
                break;
            }
            out.extend_from_slice(&chunk);
        }
        Ok(out)
    }
}

#[cfg(all(test, unix))]
mod tests;
