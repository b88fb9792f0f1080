//! The host-side handles behind the `host-fs.dir` and `host-fs.file` resources (their
//! operations are in `resources`). A leaf module, so that the bindings can name these types.

use std::os::fd::OwnedFd;
use std::sync::Arc;

/// A directory the component holds through the host.
#[derive(Debug)]
pub struct OpenDir {
    pub(crate) fd: Arc<OwnedFd>,
}

/// A regular file the component opened for reading through the host.
#[derive(Debug)]
pub struct OpenFile {
    pub(crate) fd: OwnedFd,
}

impl OpenDir {
    /// The repository root, from an already open directory.
    pub(crate) fn root(dir: &cap_std::fs::Dir) -> Option<OpenDir> {
        let fd = rustix::io::fcntl_dupfd_cloexec(dir, 0).ok()?;
        Some(OpenDir { fd: Arc::new(fd) })
    }
}
