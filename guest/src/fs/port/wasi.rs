//! The port over WASI Preview 2 descriptors. `open-at` without `symlink-follow` does not
//! follow a final symlink, and every path given here is one name, so no link is followed
//! anywhere. Types are checked with `stat-at` before an open (a FIFO is never opened on
//! purpose) and with `stat` on the opened descriptor after it.

use std::io;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use wasip2::filesystem::types::{
    Datetime, Descriptor, DescriptorFlags, DescriptorStat, DescriptorType, ErrorCode, OpenFlags,
    PathFlags,
};

use super::EntryType;
use super::{DirItem, DirOps, FileId, FileOps, Stat};

#[derive(Debug)]
pub struct Dir(Descriptor);

#[derive(Debug)]
pub struct File(Descriptor);

pub(super) fn err(e: ErrorCode) -> io::Error {
    use io::ErrorKind as K;
    let kind = match e {
        ErrorCode::NoEntry => K::NotFound,
        ErrorCode::Exist => K::AlreadyExists,
        ErrorCode::Access | ErrorCode::NotPermitted | ErrorCode::ReadOnly => K::PermissionDenied,
        ErrorCode::NotDirectory => K::NotADirectory,
        ErrorCode::IsDirectory => K::IsADirectory,
        ErrorCode::NotEmpty => K::DirectoryNotEmpty,
        ErrorCode::Loop => K::InvalidInput,
        ErrorCode::Interrupted => K::Interrupted,
        ErrorCode::InsufficientSpace => K::StorageFull,
        ErrorCode::Invalid => K::InvalidInput,
        _ => K::Other,
    };
    io::Error::new(kind, format!("{e:?}"))
}

fn entry_type(t: DescriptorType) -> EntryType {
    match t {
        DescriptorType::Directory => EntryType::Dir,
        DescriptorType::RegularFile => EntryType::File,
        DescriptorType::SymbolicLink => EntryType::Symlink,
        _ => EntryType::Other,
    }
}

fn time(t: Option<Datetime>) -> Option<SystemTime> {
    let t = t?;
    Some(UNIX_EPOCH + Duration::new(t.seconds, t.nanoseconds))
}

pub(super) fn stat_of(s: &DescriptorStat) -> Stat {
    Stat {
        ty: entry_type(s.type_),
        size: s.size,
        nlink: s.link_count,
        modified: time(s.data_modification_timestamp),
        changed: time(s.status_change_timestamp),
        inode: None,
    }
}

impl Dir {
    pub fn new(d: Descriptor) -> Dir {
        Dir(d)
    }
}

impl File {
    pub(super) fn new(d: Descriptor) -> File {
        File(d)
    }
}

/// Every entry of the directory `d`.
pub(super) fn entries_of(d: &Descriptor) -> io::Result<Vec<DirItem>> {
    let stream = d.read_directory().map_err(err)?;
    let mut out = Vec::new();
    loop {
        match stream.read_directory_entry() {
            Ok(Some(e)) => out.push((Ok(e.name), entry_type(e.type_))),
            Ok(None) => break,
            // A name the host cannot give (not UTF-8) is kept as unnamed, to be counted.
            Err(ErrorCode::IllegalByteSequence) => out.push((Err(()), EntryType::Other)),
            Err(e) => return Err(err(e)),
        }
        if out.len() > 10_000_000 {
            break;
        }
    }
    Ok(out)
}

/// Creates `path` below `d` (which must not exist; a final link is not followed), writes
/// `data` and flushes it.
pub(super) fn create_new_at(d: &Descriptor, path: &str, data: &[u8]) -> io::Result<()> {
    let f = d
        .open_at(
            PathFlags::empty(),
            path,
            OpenFlags::CREATE | OpenFlags::EXCLUSIVE,
            DescriptorFlags::WRITE,
        )
        .map_err(err)?;
    let mut off = 0usize;
    while off < data.len() {
        let end = data.len().min(off + (1 << 20));
        let n = f.write(&data[off..end], off as u64).map_err(err)? as usize;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::WriteZero,
                "write made no progress",
            ));
        }
        off += n;
    }
    f.sync().map_err(err)
}

impl DirOps for Dir {
    fn stat_at(&self, name: &str) -> io::Result<Stat> {
        self.0
            .stat_at(PathFlags::empty(), name)
            .map(|s| stat_of(&s))
            .map_err(err)
    }

    fn stat(&self) -> io::Result<Stat> {
        self.0.stat().map(|s| stat_of(&s)).map_err(err)
    }

    fn id(&self) -> io::Result<FileId> {
        self.0
            .metadata_hash()
            .map(|h| FileId(h.upper, h.lower))
            .map_err(err)
    }

    fn id_at(&self, name: &str) -> io::Result<FileId> {
        self.0
            .metadata_hash_at(PathFlags::empty(), name)
            .map(|h| FileId(h.upper, h.lower))
            .map_err(err)
    }

    fn open_dir(&self, name: &str) -> io::Result<Box<dyn DirOps>> {
        self.0
            .open_at(
                PathFlags::empty(),
                name,
                OpenFlags::DIRECTORY,
                DescriptorFlags::READ,
            )
            .map(|d| Box::new(Dir(d)) as Box<dyn DirOps>)
            .map_err(err)
    }

    fn open_file(&self, name: &str) -> io::Result<Box<dyn FileOps>> {
        self.0
            .open_at(
                PathFlags::empty(),
                name,
                OpenFlags::empty(),
                DescriptorFlags::READ,
            )
            .map(|f| Box::new(File(f)) as Box<dyn FileOps>)
            .map_err(err)
    }

    fn read_link(&self, name: &str) -> io::Result<String> {
        self.0.readlink_at(name).map_err(err)
    }

    fn entries(&self) -> io::Result<Vec<DirItem>> {
        entries_of(&self.0)
    }

    fn create_new(&self, name: &str, data: &[u8]) -> io::Result<()> {
        create_new_at(&self.0, name, data)
    }

    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        self.0.rename_at(from, &self.0, to).map_err(err)
    }

    fn unlink(&self, name: &str) -> io::Result<()> {
        self.0.unlink_file_at(name).map_err(err)
    }

    fn mkdir(&self, name: &str) -> io::Result<()> {
        self.0.create_directory_at(name).map_err(err)
    }

    fn rmdir(&self, name: &str) -> io::Result<()> {
        self.0.remove_directory_at(name).map_err(err)
    }
}

impl FileOps for File {
    fn stat(&self) -> io::Result<Stat> {
        self.0.stat().map(|s| stat_of(&s)).map_err(err)
    }

    fn read_at(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        let mut out = Vec::with_capacity(len);
        while out.len() < len {
            let (chunk, eof) = self
                .0
                .read((len - out.len()) as u64, offset + out.len() as u64)
                .map_err(err)?;
            out.extend_from_slice(&chunk);
            if eof || chunk.is_empty() {
                break;
            }
        }
        Ok(out)
    }
}
