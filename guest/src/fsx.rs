//! The file-system layer: maps logical paths onto the real tree below a root and resolves
//! symlinks itself, so that a link is judged by where it leads.
//!
//! In the component the root is `/`, the host's preopen of the repository; natively (in
//! unit tests) it is any directory. Symlinks are resolved component by component: a link
//! with an absolute target, or one whose target climbs above the root, is refused with
//! `PATH_REJECTED`, and more than 40 links in one path is refused as a loop.

use std::fs::{self, Metadata};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::path::LogicalPath;

/// Most symlinks followed while resolving one path.
pub const MAX_LINK_HOPS: usize = 40;

/// What an entry is on disk; one-to-one with the WIT `entry-type` enum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryType {
    File,
    Dir,
    Symlink,
    Other,
}

impl EntryType {
    pub fn of(ft: fs::FileType) -> Self {
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
}

/// A logical path after symlink resolution.
#[derive(Debug)]
pub struct Resolved {
    /// The path as the agent gave it, normalised.
    pub requested: LogicalPath,
    /// Where it leads after following every symlink (equal to `requested` without links).
    pub target: LogicalPath,
    /// Metadata of the target, or `None` when nothing exists there.
    pub meta: Option<Metadata>,
    /// True when at least one symlink was followed.
    pub via_link: bool,
}

impl Resolved {
    /// The error for a path that is not an existing regular file: `NOT_FOUND` (also for a
    /// dangling link) or `NOT_A_FILE`.
    pub fn not_a_file_error(&self) -> ToolError {
        match self.require_file() {
            Err(e) => e,
            Ok(_) => ToolError::new(
                ErrorCode::Internal,
                format!("'{}' is a regular file", self.requested),
            ),
        }
    }

    /// The target's type, if it exists.
    pub fn entry_type(&self) -> Option<EntryType> {
        self.meta.as_ref().map(|m| EntryType::of(m.file_type()))
    }

    /// Refuses anything but an existing regular file.
    ///
    /// # Errors
    /// `NOT_FOUND` (also for a dangling link) or `NOT_A_FILE`.
    pub fn require_file(&self) -> ToolResult<&Metadata> {
        let shown = self.requested.to_string();
        match &self.meta {
            None if self.via_link => Err(ToolError::new(
                ErrorCode::NotFound,
                format!(
                    "'{shown}' is a symlink to '{}', which does not exist",
                    self.target
                ),
            )
            .with_path(shown)),
            None => Err(ToolError::io(
                &shown,
                &std::io::Error::from(std::io::ErrorKind::NotFound),
            )),
            Some(m) if m.is_file() => Ok(m),
            Some(m) if m.is_dir() => Err(ToolError::new(
                ErrorCode::NotAFile,
                format!("'{shown}' is a directory; use list_dir to see its entries"),
            )
            .with_path(shown)),
            Some(_) => Err(ToolError::new(
                ErrorCode::NotAFile,
                format!("'{shown}' is a special file (FIFO, socket or device) and is never opened"),
            )
            .with_path(shown)),
        }
    }
}

/// The tree below one root.
#[derive(Debug, Clone)]
pub struct Fs {
    root: PathBuf,
}

impl Fs {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Fs { root: root.into() }
    }

    /// The directory the logical root maps to.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The real path of a logical path (no resolution).
    pub fn real(&self, p: &LogicalPath) -> PathBuf {
        if p.is_root() {
            self.root.clone()
        } else {
            self.root.join(p.as_str())
        }
    }

    /// Resolves every symlink in `p`, refusing any that leaves the root.
    ///
    /// # Errors
    /// `PATH_REJECTED` for an escaping, absolute or looping link; `NOT_FOUND` when a
    /// parent is not a directory; `IO_ERROR` when the file system fails.
    pub fn resolve(&self, p: &LogicalPath) -> ToolResult<Resolved> {
        let shown = p.to_string();
        let mut pending: Vec<String> = p.parts().rev().map(str::to_string).collect();
        let mut done: Vec<String> = Vec::with_capacity(pending.len());
        let mut hops = 0usize;
        let mut meta: Option<Metadata> = None;
        while let Some(name) = pending.pop() {
            done.push(name);
            let real = self.real_parts(&done);
            let m = match fs::symlink_metadata(&real) {
                Ok(m) => m,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    // Nothing here: what remains is a path that does not exist yet.
                    done.extend(pending.drain(..).rev());
                    return Ok(Resolved {
                        requested: p.clone(),
                        target: LogicalPath::from_parts(&done),
                        meta: None,
                        via_link: hops > 0,
                    });
                }
                Err(e) => return Err(ToolError::io(&shown, &e)),
            };
            if m.file_type().is_symlink() {
                hops += 1;
                if hops > MAX_LINK_HOPS {
                    return Err(ToolError::new(
                        ErrorCode::PathRejected,
                        format!(
                            "'{shown}' goes through more than {MAX_LINK_HOPS} symlinks (a loop?)"
                        ),
                    )
                    .with_path(shown));
                }
                let link_text = fs::read_link(&real).map_err(|e| match e.kind() {
                    // The sandbox refuses to even read an absolute link's text.
                    std::io::ErrorKind::PermissionDenied => ToolError::new(
                        ErrorCode::PathRejected,
                        format!("'{shown}' goes through a symlink with an absolute target, which is refused"),
                    )
                    .with_path(shown.clone()),
                    _ => ToolError::io(&shown, &e),
                })?;
                done.pop();
                let target = link_target(&done, &link_text).ok_or_else(|| {
                    ToolError::new(
                        ErrorCode::PathRejected,
                        format!(
                            "'{shown}' is a symlink to '{}', which leads outside the repository",
                            link_text.display()
                        ),
                    )
                    .with_path(shown.clone())
                })?;
                done.clear();
                pending.extend(target.into_iter().rev());
                meta = None;
                continue;
            }
            if !pending.is_empty() && !m.is_dir() {
                return Err(ToolError::new(
                    ErrorCode::NotFound,
                    format!(
                        "'{shown}' cannot exist: '{}' is not a directory",
                        done.join("/")
                    ),
                )
                .with_path(shown));
            }
            meta = Some(m);
        }
        if done.is_empty() {
            // Only the root remains: links that lead back to the root itself.
            meta = Some(fs::metadata(&self.root).map_err(|e| ToolError::io(&shown, &e))?);
        }
        Ok(Resolved {
            requested: p.clone(),
            target: LogicalPath::from_parts(&done),
            meta,
            via_link: hops > 0,
        })
    }

    fn real_parts(&self, parts: &[String]) -> PathBuf {
        let mut out = self.root.clone();
        for part in parts {
            out.push(part);
        }
        out
    }
}

/// Joins a link's text onto the directory that holds it, as logical components.
/// `None` when the text is absolute or climbs above the root.
fn link_target(dir: &[String], link: &Path) -> Option<Vec<String>> {
    let text = link.to_str()?;
    if text.starts_with('/') || text.is_empty() {
        return None;
    }
    let mut out: Vec<String> = dir.to_vec();
    for comp in text.split('/') {
        match comp {
            "" | "." => {}
            ".." => {
                out.pop()?;
            }
            name => out.push(name.to_string()),
        }
    }
    Some(out)
}

/// A modification time as RFC 3339 in UTC, to the second.
pub fn rfc3339(t: SystemTime) -> Option<String> {
    let secs = t.duration_since(UNIX_EPOCH).ok()?.as_secs();
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    Some(format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    ))
}

/// Days since 1970-01-01 to a proleptic Gregorian (year, month, day).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// The modification time of metadata, formatted.
pub fn modified(m: &Metadata) -> Option<String> {
    m.modified().ok().and_then(rfc3339)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn rfc3339_formats_known_instants() {
        assert_eq!(rfc3339(UNIX_EPOCH).as_deref(), Some("1970-01-01T00:00:00Z"));
        let t = UNIX_EPOCH + Duration::from_secs(1_795_335_651);
        assert_eq!(rfc3339(t).as_deref(), Some("2026-11-22T08:20:51Z"));
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(rfc3339(leap).as_deref(), Some("2000-02-29T00:00:00Z"));
    }

    #[test]
    fn link_targets_stay_inside_or_are_refused() {
        let dir = vec!["a".to_string(), "b".to_string()];
        assert_eq!(
            link_target(&dir, Path::new("../c")),
            Some(vec!["a".into(), "c".into()])
        );
        assert_eq!(link_target(&dir, Path::new("../../../x")), None);
        assert_eq!(link_target(&dir, Path::new("/etc/passwd")), None);
    }

    #[cfg(unix)]
    #[test]
    fn resolve_follows_inner_links_and_refuses_outer_ones() {
        use std::os::unix::fs::symlink;
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("repo");
        fs::create_dir_all(root.join("src")).unwrap();
        fs::write(root.join("src/a.txt"), "a").unwrap();
        fs::write(tmp.path().join("outside.txt"), "secret").unwrap();
        symlink("src/a.txt", root.join("link")).unwrap();
        symlink("src", root.join("srcdir")).unwrap();
        symlink("../outside.txt", root.join("escape")).unwrap();
        symlink("loop2", root.join("loop1")).unwrap();
        symlink("loop1", root.join("loop2")).unwrap();
        symlink("missing", root.join("dangling")).unwrap();
        let fsx = Fs::new(&root);
        let r = fsx.resolve(&LogicalPath::parse("link").unwrap()).unwrap();
        assert_eq!(r.target.to_string(), "src/a.txt");
        assert!(r.via_link && r.require_file().is_ok());
        let r = fsx
            .resolve(&LogicalPath::parse("srcdir/a.txt").unwrap())
            .unwrap();
        assert_eq!(r.target.to_string(), "src/a.txt");
        let e = fsx
            .resolve(&LogicalPath::parse("escape").unwrap())
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::PathRejected);
        let e = fsx
            .resolve(&LogicalPath::parse("loop1").unwrap())
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::PathRejected);
        let r = fsx
            .resolve(&LogicalPath::parse("dangling").unwrap())
            .unwrap();
        assert!(r.meta.is_none());
        assert_eq!(r.require_file().unwrap_err().code, ErrorCode::NotFound);
        let e = fsx
            .resolve(&LogicalPath::parse("src/a.txt/x").unwrap())
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::NotFound);
    }
}
