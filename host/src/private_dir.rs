//! Directories and files that hold copies of repository content outside the repository
//! (the session's state directory, the audit log's diff artifacts): readable by their
//! owner only, whatever the repository file's own bits and the process's umask were.
//! Directories are `0700`, files `0600`; a directory that already exists is tightened
//! when it is the user's own and refused when another user owns it.

use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// Mode of a private directory.
pub(crate) const DIR_MODE: u32 = 0o700;
/// Mode of a private file.
pub(crate) const FILE_MODE: u32 = 0o600;

/// Creates `dir` (and any missing parent) as a private directory, or checks and tightens
/// the one there: it must be a directory (not a link to one) owned by this process's user.
///
/// # Errors
/// When it cannot be created, is not a directory, belongs to another user, or cannot be
/// tightened.
pub(crate) fn ensure_dir(dir: &Path) -> io::Result<()> {
    match fs::DirBuilder::new()
        .recursive(true)
        .mode(DIR_MODE)
        .create(dir)
    {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    tighten_dir(dir)
}

/// Checks that `dir` is a real directory of this user's and takes group and other access
/// away from it.
///
/// # Errors
/// As [`ensure_dir`].
pub(crate) fn tighten_dir(dir: &Path) -> io::Result<()> {
    let meta = fs::symlink_metadata(dir)?;
    if !meta.is_dir() {
        return Err(io::Error::other(format!(
            "{} is not a directory (a link or a file stands there)",
            dir.display()
        )));
    }
    check_owner(dir, &meta)?;
    if meta.mode() & 0o777 != DIR_MODE {
        fs::set_permissions(dir, fs::Permissions::from_mode(DIR_MODE))?;
    }
    Ok(())
}

/// Refuses what another user owns: its owner could read or swap what file-tools puts there.
fn check_owner(path: &Path, meta: &fs::Metadata) -> io::Result<()> {
    let me = rustix::process::geteuid().as_raw();
    if meta.uid() != me {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} belongs to another user (uid {}, this process runs as uid {me}); file-tools keeps copies of file content only in the user's own directories",
                path.display(),
                meta.uid()
            ),
        ));
    }
    Ok(())
}

/// Takes group and other access away from the regular file `path` (a link or anything
/// else is left alone).
///
/// # Errors
/// When the file cannot be examined or changed.
pub(crate) fn tighten_file(path: &Path) -> io::Result<()> {
    let meta = fs::symlink_metadata(path)?;
    if meta.is_file() && meta.mode() & 0o077 != 0 {
        let mode = meta.mode() & 0o700;
        fs::set_permissions(path, fs::Permissions::from_mode(mode))?;
    }
    Ok(())
}

/// Writes `data` to the new file `path` (which must not exist), readable by its owner only.
///
/// # Errors
/// When the file exists or cannot be written.
pub(crate) fn write_new(path: &Path, data: &[u8]) -> io::Result<()> {
    use std::io::Write as _;
    let mut f = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(FILE_MODE)
        .open(path)?;
    f.write_all(data)?;
    f.sync_all()
}
