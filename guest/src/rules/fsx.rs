//! The file-system layer above the port: logical paths over the held root directory, with
//! symlinks resolved by file-tools itself so that a link is judged by where it leads.
//!
//! In the component the root is the host's preopen of the repository; natively (in unit
//! tests) it is any directory. Resolution walks one component at a time from held
//! directory handles (`port`): a link with an absolute target, or one whose target climbs
//! above the root, is refused with `PATH_REJECTED`, more than 40 links in one path is
//! refused as a loop, and a path that reaches a reserved name is refused. The result holds
//! the directory that contains the final name, so a tool acts on exactly what was checked.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::fs::port::{Dir, FileId, Stat};
use crate::rules::path::LogicalPath;

/// Most symlinks followed while resolving one path.
pub const MAX_LINK_HOPS: usize = 40;

pub use crate::fs::port::EntryType;

/// A logical path after symlink resolution.
#[derive(Debug)]
pub struct Resolved {
    /// The path as the agent gave it, normalised.
    pub requested: LogicalPath,
    /// Where it leads after following every symlink (equal to `requested` without links).
    pub target: LogicalPath,
    /// Metadata of the target, or `None` when nothing exists there.
    pub meta: Option<Stat>,
    /// True when at least one symlink was followed.
    pub via_link: bool,
    /// The held directory that contains the target's last component (`None` for the root,
    /// and for a path whose parent does not exist yet). Opening `target.name()` in it
    /// reaches exactly what was looked at, whatever happens to the names above it.
    pub parent: Option<Arc<Dir>>,
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
        self.meta.map(|m| m.ty)
    }

    /// Refuses anything but an existing regular file.
    ///
    /// # Errors
    /// `NOT_FOUND` (also for a dangling link) or `NOT_A_FILE`.
    pub fn require_file(&self) -> ToolResult<&Stat> {
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

    /// Reads the target, a regular file, up to `max` bytes through the held parent, and
    /// checks that what was opened is still a regular file.
    ///
    /// # Errors
    /// `NOT_FOUND`, `NOT_A_FILE`, `IO_ERROR`.
    pub fn read(&self, max: u64) -> ToolResult<(Vec<u8>, Stat)> {
        let (file, st) = self.open()?;
        file.read_all(st.size, max)
            .map(|data| (data, st))
            .map_err(|e| ToolError::io(self.requested.as_str(), &e))
    }

    /// Opens the target, a regular file, through the held parent, checked on the opened
    /// descriptor.
    ///
    /// # Errors
    /// `NOT_FOUND`, `NOT_A_FILE`, `IO_ERROR`.
    pub fn open(&self) -> ToolResult<(crate::fs::port::File, Stat)> {
        self.require_file()?;
        let parent = self
            .parent
            .as_ref()
            .ok_or_else(|| self.not_a_file_error())?;
        parent
            .open_file(self.target.name())
            .map_err(|e| ToolError::io(self.requested.as_str(), &e))
    }
}

/// The tree below one root, reached only through the port.
#[derive(Debug, Clone)]
pub struct Fs {
    root: Arc<Dir>,
    /// The host's services (batched reads, hashing, ...), installed by the bindings shell.
    services: Arc<dyn crate::rules::services::Services>,
    /// Identities of every directory seen named `.git`: a directory reached
    /// under another name with one of these identities was swapped in, and is refused.
    git_dirs: Arc<Mutex<HashSet<FileId>>>,
    /// Ignore files' rules compiled by earlier walks (see
    /// [`crate::rules::ignore_rules::IgnoreCache`]).
    ignores: Arc<crate::rules::ignore_rules::IgnoreCache>,
}

impl Fs {
    /// The tree below `root`, whose own `.git` (if any) is remembered at once.
    pub fn new(root: Dir) -> Self {
        let fs = Fs {
            root: Arc::new(root),
            services: Arc::new(crate::rules::services::NoServices),
            git_dirs: Arc::default(),
            ignores: Arc::default(),
        };
        fs.note_git_dirs(&fs.root);
        fs
    }

    /// The tree below a native directory (unit tests, native embedders).
    ///
    /// # Errors
    /// When the directory cannot be opened.
    #[cfg(not(target_os = "wasi"))]
    pub fn open(path: impl AsRef<std::path::Path>) -> std::io::Result<Self> {
        Dir::open_ambient(path.as_ref()).map(Fs::new)
    }

    /// The same tree with the host's services.
    pub fn with_services(mut self, services: Arc<dyn crate::rules::services::Services>) -> Self {
        self.services = services;
        self
    }

    /// The host's services.
    pub fn services(&self) -> &dyn crate::rules::services::Services {
        &*self.services
    }

    /// Ignore files' rules compiled by earlier walks of this tree.
    pub fn ignore_cache(&self) -> &crate::rules::ignore_rules::IgnoreCache {
        &self.ignores
    }

    /// The root directory's handle.
    pub fn root(&self) -> &Arc<Dir> {
        &self.root
    }

    /// Remembers the identity of `dir`'s `.git`, when it is a directory. (A case-insensitive
    /// file system finds `.GIT` by this name too; on others git itself uses only `.git`.)
    pub fn note_git_dirs(&self, dir: &Dir) {
        if let Ok(Some(st)) = dir.stat_at(".git") {
            if st.is_dir() {
                if let (Ok(id), Ok(mut set)) = (dir.id_at(".git"), self.git_dirs.lock()) {
                    set.insert(id);
                }
            }
        }
    }

    /// Whether `dir` is a directory that was seen named `.git`.
    pub fn is_git_dir(&self, dir: &Dir) -> bool {
        // Most trees have no `.git` seen yet: no look at the directory then.
        if self.git_dirs.lock().is_ok_and(|s| s.is_empty()) {
            return false;
        }
        let Ok(id) = dir.id() else { return false };
        self.git_dirs.lock().is_ok_and(|s| s.contains(&id))
    }

    /// Whether `dir`, opened by `name`, is a directory seen named `.git` reached under
    /// another name (a `.git` reached by its own name is classified by that name).
    pub fn swapped_git(&self, name: &str, dir: &Dir) -> bool {
        !crate::rules::classify::is_git_name(name) && self.is_git_dir(dir)
    }

    /// Opens the directory `dir` one component at a time from the root; a symlink, a file
    /// or a special file on the way is refused, as is a directory seen named `.git`.
    ///
    /// # Errors
    /// The port's error for the first component that is not a plain directory.
    pub fn open_dir(&self, dir: &LogicalPath) -> std::io::Result<Arc<Dir>> {
        self.open_below(self.root.clone(), dir.parts())
    }

    /// Opens the directory reached from `from` by `parts`, one component at a time, as
    /// [`Fs::open_dir`] does from the root.
    ///
    /// # Errors
    /// The port's error for the first component that is not a plain directory.
    pub fn open_below<'p>(
        &self,
        from: Arc<Dir>,
        parts: impl IntoIterator<Item = &'p str>,
    ) -> std::io::Result<Arc<Dir>> {
        let mut cur = from;
        for part in parts {
            let next = cur.open_dir(part)?;
            if self.swapped_git(part, &next) {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::PermissionDenied,
                    format!("'{part}' is a .git directory under another name"),
                ));
            }
            cur = Arc::new(next);
        }
        Ok(cur)
    }

    /// Looks at the entry `p` without following any symlink on the way (a link anywhere
    /// answers `None`, as does a missing entry).
    pub fn stat_nofollow(&self, p: &LogicalPath) -> Option<Stat> {
        if p.is_root() {
            return self.root.stat().ok();
        }
        let dir = self.open_dir(&p.parent()).ok()?;
        dir.stat_at(p.name()).ok().flatten()
    }

    /// The content of the regular file `p` (up to `max` bytes), reached without following
    /// any symlink: `Ok(None)` when nothing is there.
    ///
    /// # Errors
    /// When a component on the way, or `p` itself, is not a plain directory or regular file,
    /// or the system fails.
    pub fn read_nofollow(
        &self,
        p: &LogicalPath,
        max: u64,
    ) -> std::io::Result<Option<(Vec<u8>, Stat)>> {
        let dir = match self.open_dir(&p.parent()) {
            Ok(d) => d,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        match dir.stat_at(p.name())? {
            None => Ok(None),
            Some(_) => dir.read_file(p.name(), max).map(Some),
        }
    }

    /// Resolves every symlink in `p`, one component at a time from the root, refusing any
    /// link that leaves the root and any path that reaches a name file-tools reserves.
    ///
    /// # Errors
    /// `PATH_REJECTED` for an escaping, absolute or looping link or a reserved name;
    /// `NOT_FOUND` when a parent is not a directory; `IO_ERROR` when the file system fails.
    pub fn resolve(&self, p: &LogicalPath) -> ToolResult<Resolved> {
        self.resolve_with(p, &|_| false)
    }

    /// [`Fs::resolve`] that stops as soon as the path, or where a link leads, is `hidden`:
    /// the answer is then the error of a missing path, with reason `hidden` so that the
    /// caller can tell (and must not show the reason).
    ///
    /// # Errors
    /// As [`Fs::resolve`], and `NOT_FOUND` (reason `hidden`).
    pub fn resolve_with(
        &self,
        p: &LogicalPath,
        hidden: &dyn Fn(&LogicalPath) -> bool,
    ) -> ToolResult<Resolved> {
        let shown_missing = || {
            let mut e = ToolError::io(p.as_str(), &std::io::ErrorKind::NotFound.into());
            e.reason = Some("hidden".to_string());
            e
        };
        if hidden(p) {
            return Err(shown_missing());
        }
        p.check_reserved()?;
        let shown = p.to_string();
        let io = |e: &std::io::Error| ToolError::io(&shown, e);
        let mut pending: Vec<String> = p.parts().rev().map(str::to_string).collect();
        let mut done: Vec<String> = Vec::with_capacity(pending.len());
        // dirs[i] is the held directory of done[..i].
        let mut dirs: Vec<Arc<Dir>> = vec![self.root.clone()];
        let mut hops = 0usize;
        let mut meta: Option<Stat> = None;
        while let Some(name) = pending.pop() {
            let cur = dirs.last().unwrap_or(&self.root).clone();
            let Some(st) = cur.stat_at(&name).map_err(|e| io(&e))? else {
                // Nothing here: what remains is a path that does not exist yet.
                let parent = pending.is_empty().then_some(cur);
                done.push(name);
                done.extend(pending.drain(..).rev());
                let target = LogicalPath::from_parts(&done);
                target.check_reserved()?;
                return Ok(Resolved {
                    requested: p.clone(),
                    target,
                    meta: None,
                    via_link: hops > 0,
                    parent,
                });
            };
            if st.ty == EntryType::Symlink {
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
                let link_text = cur.read_link(&name).map_err(|e| match e.kind() {
                    // The sandbox refuses to even read an absolute link's text.
                    std::io::ErrorKind::PermissionDenied => ToolError::new(
                        ErrorCode::PathRejected,
                        format!("'{shown}' goes through a symlink with an absolute target, which is refused"),
                    )
                    .with_path(shown.clone()),
                    // A text the port will not take as it stands (a backslash on a host
                    // that reads it as a separator). The text itself is not shown.
                    std::io::ErrorKind::InvalidInput => ToolError::new(
                        ErrorCode::PathRejected,
                        format!("'{shown}' goes through a symlink whose target this host cannot take as one name (a backslash); it is refused"),
                    )
                    .with_path(shown.clone()),
                    _ => io(&e),
                })?;
                let target = link_target(&done, &link_text).ok_or_else(|| {
                    ToolError::new(
                        ErrorCode::PathRejected,
                        format!(
                            "'{shown}' is a symlink to '{link_text}', which leads outside the repository"
                        ),
                    )
                    .with_path(shown.clone())
                })?;
                // Where the link leads, with what is left of the path: never into a hidden
                // area, not even to say what is missing there.
                let mut leads = target.clone();
                leads.extend(pending.iter().rev().cloned());
                if hidden(&LogicalPath::from_parts(&leads)) {
                    return Err(shown_missing());
                }
                done.clear();
                dirs.truncate(1);
                pending.extend(target.into_iter().rev());
                meta = None;
                continue;
            }
            done.push(name);
            if pending.is_empty() {
                meta = Some(st);
                continue;
            }
            if !st.is_dir() {
                return Err(ToolError::new(
                    ErrorCode::NotFound,
                    format!(
                        "'{shown}' cannot exist: '{}' is not a directory",
                        done.join("/")
                    ),
                )
                .with_path(shown));
            }
            let name = done.last().map_or("", String::as_str);
            let next = cur.open_dir(name).map_err(|e| io(&e))?;
            if self.swapped_git(name, &next) {
                return Err(ToolError::new(
                    ErrorCode::PathRejected,
                    format!(
                        "'{shown}' changed while it was resolved: '{}' is now a .git directory",
                        done.join("/")
                    ),
                )
                .with_path(shown));
            }
            dirs.push(Arc::new(next));
        }
        let target = LogicalPath::from_parts(&done);
        target.check_reserved()?;
        let parent = if done.is_empty() {
            // Only the root remains: links that lead back to the root itself.
            meta = Some(self.root.stat().map_err(|e| io(&e))?);
            None
        } else {
            dirs.get(done.len() - 1).cloned()
        };
        Ok(Resolved {
            requested: p.clone(),
            target,
            meta,
            via_link: hops > 0,
            parent,
        })
    }
}

/// Joins a link's text onto the directory that holds it, as logical components.
/// `None` when the text is absolute or climbs above the root.
fn link_target(dir: &[String], text: &str) -> Option<Vec<String>> {
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
    let (h, min, s) = (rem / 3600, (rem % 3600) / 60, rem % 60);
    let Ok(year @ 0..=9999) = u16::try_from(y) else {
        return Some(format!("{y:04}-{m:02}-{d:02}T{h:02}:{min:02}:{s:02}Z"));
    };
    // Written digit by digit: a listing formats one per entry, and `format!` with
    // padding costs several times this.
    let mut out = String::with_capacity(20);
    for (n, width, after) in [
        (u64::from(year), 4, '-'),
        (u64::from(m), 2, '-'),
        (u64::from(d), 2, 'T'),
        (h, 2, ':'),
        (min, 2, ':'),
        (s, 2, 'Z'),
    ] {
        for place in (0..width).rev() {
            out.push(char::from(b'0' + (n / 10u64.pow(place) % 10) as u8));
        }
        out.push(after);
    }
    Some(out)
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

/// The modification time of an entry, formatted.
pub fn modified(m: &Stat) -> Option<String> {
    m.modified.and_then(rfc3339)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::time::Duration;

    #[test]
    fn rfc3339_formats_known_instants() {
        assert_eq!(rfc3339(UNIX_EPOCH).as_deref(), Some("1970-01-01T00:00:00Z"));
        let t = UNIX_EPOCH + Duration::from_secs(1_795_335_651);
        assert_eq!(rfc3339(t).as_deref(), Some("2026-11-22T08:20:51Z"));
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(rfc3339(leap).as_deref(), Some("2000-02-29T00:00:00Z"));
        // Past year 9999 the plain formatter takes over.
        let far = UNIX_EPOCH + Duration::from_secs(253_402_300_800);
        assert_eq!(rfc3339(far).as_deref(), Some("10000-01-01T00:00:00Z"));
        // Every field at every width, against the plain formatter.
        let mut secs = 0u64;
        while secs < 260_000_000_000 {
            let (y, m, d) = civil_from_days((secs / 86_400) as i64);
            let rem = secs % 86_400;
            let want = format!(
                "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
                rem / 3600,
                (rem % 3600) / 60,
                rem % 60
            );
            let got = rfc3339(UNIX_EPOCH + Duration::from_secs(secs));
            assert_eq!(got.as_deref(), Some(want.as_str()), "{secs}");
            secs += 7_777_777 + secs / 1000;
        }
    }

    #[test]
    fn link_targets_stay_inside_or_are_refused() {
        let dir = vec!["a".to_string(), "b".to_string()];
        assert_eq!(
            link_target(&dir, "../c"),
            Some(vec!["a".into(), "c".into()])
        );
        assert_eq!(link_target(&dir, "../../../x"), None);
        assert_eq!(link_target(&dir, "/etc/passwd"), None);
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
        let fsx = Fs::open(&root).unwrap();
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
