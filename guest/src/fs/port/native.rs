//! The port over cap-std directories, for native builds (unit tests). Every path handed to
//! cap-std is one name, so nothing is resolved through a link; files are opened with
//! `O_NOFOLLOW | O_NONBLOCK | O_NOCTTY`.

use std::io::{self, Write};
use std::path::Path;

use cap_fs_ext::{DirExt, FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::{MetadataExt, OpenOptions, OpenOptionsExt};

use super::EntryType;
use super::{DirItem, DirOps, FileId, FileOps, Stat};

#[derive(Debug)]
pub struct Dir(cap_std::fs::Dir);

#[derive(Debug)]
pub struct File(cap_std::fs::File);

fn entry_type(ft: cap_std::fs::FileType) -> EntryType {
    if ft.is_symlink() {
        EntryType::Symlink
    } else if ft.is_dir() {
        EntryType::Dir
    } else if ft.is_file() {
        EntryType::File
    } else {
        EntryType::Other
    }
}

fn stat_of(m: &cap_std::fs::Metadata) -> Stat {
    Stat {
        ty: entry_type(m.file_type()),
        size: m.len(),
        nlink: m.nlink(),
        modified: m.modified().ok().map(cap_std::time::SystemTime::into_std),
        changed: u64::try_from(m.ctime()).ok().map(|secs| {
            std::time::UNIX_EPOCH
                + std::time::Duration::new(secs, u32::try_from(m.ctime_nsec()).unwrap_or(0))
        }),
        inode: Some(m.ino()),
    }
}

fn flags() -> i32 {
    (rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY)
        .bits() as i32
}

impl Dir {
    pub fn open_ambient(path: &Path) -> io::Result<Dir> {
        cap_std::fs::Dir::open_ambient_dir(path, cap_std::ambient_authority()).map(Dir)
    }
}

impl DirOps for Dir {
    fn stat_at(&self, name: &str) -> io::Result<Stat> {
        self.0.symlink_metadata(name).map(|m| stat_of(&m))
    }

    fn stat(&self) -> io::Result<Stat> {
        self.0.dir_metadata().map(|m| stat_of(&m))
    }

    fn id(&self) -> io::Result<FileId> {
        self.0.dir_metadata().map(|m| FileId(m.dev(), m.ino()))
    }

    fn id_at(&self, name: &str) -> io::Result<FileId> {
        self.0
            .symlink_metadata(name)
            .map(|m| FileId(m.dev(), m.ino()))
    }

    fn open_dir(&self, name: &str) -> io::Result<Box<dyn DirOps>> {
        self.0
            .open_dir_nofollow(name)
            .map(|d| Box::new(Dir(d)) as Box<dyn DirOps>)
    }

    fn open_file(&self, name: &str) -> io::Result<Box<dyn FileOps>> {
        let mut o = OpenOptions::new();
        o.read(true)
            .follow(FollowSymlinks::No)
            .custom_flags(flags());
        self.0
            .open_with(name, &o)
            .map(|f| Box::new(File(f)) as Box<dyn FileOps>)
    }

    fn read_link(&self, name: &str) -> io::Result<String> {
        let p = self.0.read_link_contents(name)?;
        p.into_os_string()
            .into_string()
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "link text is not UTF-8"))
    }

    fn entries(&self) -> io::Result<Vec<DirItem>> {
        let mut out = Vec::new();
        for e in self.0.entries()? {
            let e = e?;
            let ty = e.file_type().map_or(EntryType::Other, entry_type);
            out.push((e.file_name().into_string().map_err(|_| ()), ty));
        }
        Ok(out)
    }

    fn create_new(&self, name: &str, data: &[u8]) -> io::Result<()> {
        let mut o = OpenOptions::new();
        o.write(true)
            .create_new(true)
            .follow(FollowSymlinks::No)
            .custom_flags(flags());
        let mut f = self.0.open_with(name, &o)?;
        f.write_all(data)?;
        f.sync_all()
    }

    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        self.0.rename(from, &self.0, to)
    }

    fn unlink(&self, name: &str) -> io::Result<()> {
        self.0.remove_file(name)
    }

    fn mkdir(&self, name: &str) -> io::Result<()> {
        self.0.create_dir(name)
    }

    fn rmdir(&self, name: &str) -> io::Result<()> {
        self.0.remove_dir(name)
    }
}

impl FileOps for File {
    fn stat(&self) -> io::Result<Stat> {
        self.0.metadata().map(|m| stat_of(&m))
    }

    fn read_at(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        // Read straight into the vector's spare room: no zero fill.
        let mut buf: Vec<u8> = Vec::with_capacity(len);
        while buf.len() < len {
            let at = offset + buf.len() as u64;
            match rustix::io::pread(&self.0, rustix::buffer::spare_capacity(&mut buf), at) {
                Ok(0) => break,
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(buf)
    }
}
