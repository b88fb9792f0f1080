//! The host's batched file-system services (`host-fs.read-dir`, `host-fs.read-file`): one
//! host call for a whole directory or a whole file, where WASI needs one call per directory
//! entry or an open, several reads and a close; and `host-fs.sha256`, hashing with the
//! host CPU's SHA instructions. When the host does not offer them (the
//! standalone component, native unit tests, hosts that answer `none`) every caller falls
//! back to plain WASI through `std::fs`, with the same results.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::fsx::EntryType;
use crate::path::LogicalPath;

/// A directory entry: its name (`Err` when not UTF-8) and type.
pub type DirItem = (Result<String, ()>, EntryType);

/// Set once the host has answered `none`: it is not asked again.
static NO_READ_DIR: AtomicBool = AtomicBool::new(false);
static NO_READ_FILE: AtomicBool = AtomicBool::new(false);
static NO_SHA256: AtomicBool = AtomicBool::new(false);

fn host_path(p: &LogicalPath) -> String {
    p.to_string()
}

/// All entries of `dir` from the host, or `None` when the host does not offer it.
pub fn read_dir(dir: &LogicalPath) -> Option<io::Result<Vec<DirItem>>> {
    if NO_READ_DIR.load(Ordering::Relaxed) {
        return None;
    }
    let answer = imp::read_dir(&host_path(dir));
    if answer.is_none() {
        NO_READ_DIR.store(true, Ordering::Relaxed);
    }
    answer.map(|r| r.map_err(io::Error::other))
}

/// Up to `max` bytes of the regular file `path` from the host, or `None` when the host
/// does not offer it.
pub fn read_file(path: &LogicalPath, max: u64) -> Option<io::Result<Vec<u8>>> {
    if NO_READ_FILE.load(Ordering::Relaxed) {
        return None;
    }
    let answer = imp::read_file(&host_path(path), max);
    if answer.is_none() {
        NO_READ_FILE.store(true, Ordering::Relaxed);
    }
    answer.map(|r| r.map_err(io::Error::other))
}

/// The sha256 of `data` from the host, or `None` when the host does not offer it (or
/// answers with something that is not 32 bytes).
pub fn sha256(data: &[u8]) -> Option<[u8; 32]> {
    if NO_SHA256.load(Ordering::Relaxed) {
        return None;
    }
    let answer = imp::sha256(data).and_then(|d| <[u8; 32]>::try_from(d.as_slice()).ok());
    if answer.is_none() {
        NO_SHA256.store(true, Ordering::Relaxed);
    }
    answer
}

#[cfg(all(target_arch = "wasm32", not(feature = "standalone")))]
mod imp {
    use super::DirItem;

    pub fn sha256(data: &[u8]) -> Option<Vec<u8>> {
        crate::component::host_sha256(data)
    }

    pub fn read_dir(path: &str) -> Option<Result<Vec<DirItem>, String>> {
        crate::component::host_read_dir(path)
    }

    pub fn read_file(path: &str, max: u64) -> Option<Result<Vec<u8>, String>> {
        crate::component::host_read_file(path, max)
    }
}

#[cfg(not(all(target_arch = "wasm32", not(feature = "standalone"))))]
mod imp {
    use super::DirItem;

    pub fn sha256(_data: &[u8]) -> Option<Vec<u8>> {
        None
    }

    pub fn read_dir(_path: &str) -> Option<Result<Vec<DirItem>, String>> {
        None
    }

    pub fn read_file(_path: &str, _max: u64) -> Option<Result<Vec<u8>, String>> {
        None
    }
}
