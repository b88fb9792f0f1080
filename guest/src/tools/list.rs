//! `list_dir`, `find_files` and `file_info`: what is in the tree, without reading content
//! (except `file_info`'s sha256 of a readable file).

use crate::api::{
    DirEntry, FileInfoArgs, FileInfoResult, FindFilesArgs, FindFilesResult, ListDirArgs,
    ListDirResult, Stop,
};
use crate::audit::CallLog;
use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::fs::hash::sha256_file;
use crate::rules::classify::Kind;
use crate::rules::fsx::EntryType;
use crate::rules::glob::Globs;
use crate::rules::path::LogicalPath;
use crate::rules::policy::Policy;
use crate::rules::walk::{walk, walk_budget, Flow, Skips, WalkEntry, WalkOptions};
use crate::tools::cursor::Page;
use crate::tools::progress::Meter;
use crate::tools::session::Session;

/// The repository root's identity, which binds cursors to this repository.
pub(crate) fn root_id(s: &Session) -> ToolResult<crate::fs::port::FileId> {
    s.fs.root().id().map_err(|e| ToolError::io(".", &e))
}

/// Resolves a directory argument and refuses anything but a readable directory.
pub(crate) fn start_dir(s: &Session, input: Option<&str>) -> ToolResult<LogicalPath> {
    let p = LogicalPath::parse_dir(input.unwrap_or(""))?;
    if p.is_root() {
        return Ok(p);
    }
    let r = s.readable_path(&p)?;
    match r.resolved.entry_type() {
        Some(EntryType::Dir) => Ok(r.resolved.target),
        Some(_) => Err(ToolError::new(
            ErrorCode::NotAFile,
            format!("'{p}' is not a directory; use read_file or file_info for a file"),
        )
        .with_path(p.to_string())),
        None => Err(r.resolved.not_a_file_error()),
    }
}

/// Lists a directory.
///
/// # Errors
/// `PATH_REJECTED`, `NOT_FOUND`, `NOT_A_FILE` (not a directory), `POLICY_DENIED`.
pub fn list_dir(s: &Session, log: &mut CallLog, a: &ListDirArgs) -> ToolResult<ListDirResult> {
    let start = start_dir(s, a.path.as_deref())?;
    let limits = s.policy.limits();
    let max = Policy::clamp(
        a.max_entries,
        limits.max_list_entries,
        limits.max_list_entries,
    ) as usize;
    let opts = WalkOptions {
        include_hidden: a.include_hidden.unwrap_or(false),
        respect_ignore: a.respect_ignore.unwrap_or(true),
        max_depth: a.max_depth.unwrap_or(1).clamp(1, 64) as usize,
        shard: None,
        with_stat: true,
    };
    let mut skips = Skips::default();
    let mut entries = Vec::new();
    let mut stopped_by = None;
    let mut parents = ParentCache::default();
    let page = Page::open(
        &s.cursor_key,
        (root_id(s)?, &s.policy.fingerprint()),
        "list_dir",
        a,
        "max_entries",
        a.cursor.as_deref(),
    )?;
    let mut skipper = page.skipper();
    let mut meter = Meter::default();
    let walk_stopped = walk(&s.fs, &s.policy, &start, &opts, &mut skips, |e| {
        meter.file(s.fs.services(), 0, 0);
        if skipper.skip(e.path.as_str()) {
            return Flow::Continue;
        }
        if entries.len() >= max {
            stopped_by = Some(Stop::new("max_entries", max as u64));
            return Flow::Stop;
        }
        entries.push(describe_entry(s, &mut parents, e));
        Flow::Continue
    })?;
    let walk_stop = walk_stopped.then(|| walk_budget(&s.policy));
    let stopped_by = page.finish(&skipper, stopped_by, walk_stop)?;
    let next_cursor = page.next(&stopped_by, "max_entries", entries.len(), || {
        entries.last().map(|e| e.path.clone())
    });
    log.paths_read.push(start.to_string());
    let dirs = entries.iter().filter(|e| e.ty == EntryType::Dir).count();
    let mut summary = format!(
        "{}: {} entries ({dirs} directories, {} files)",
        if start.is_root() {
            ".".to_string()
        } else {
            start.to_string()
        },
        entries.len(),
        entries.len() - dirs
    );
    if let Some(stop) = &stopped_by {
        summary.push_str(&stop.note(if stop.cap == "max_entries" {
            "more entries follow; pass next_cursor as cursor for the next page"
        } else {
            "the walk visited no more entries; list a subdirectory"
        }));
    }
    let skipped_text = skips.describe();
    if !skipped_text.is_empty() {
        summary.push_str(&format!("; skipped {skipped_text}"));
    }
    summary.push_str(&page.note());
    Ok(ListDirResult {
        entries,
        truncated: stopped_by.is_some(),
        stopped_by,
        next_cursor,
        skipped: skips.counts(),
        summary,
    })
}

/// The held directory of the entries last described: a walk visits siblings together, so
/// each directory is opened once.
#[derive(Default)]
struct ParentCache(Option<(LogicalPath, std::sync::Arc<crate::fs::port::Dir>)>);

impl ParentCache {
    fn stat(&mut self, s: &Session, path: &LogicalPath) -> Option<crate::fs::port::Stat> {
        let parent = path.parent();
        if self.0.as_ref().is_none_or(|(p, _)| *p != parent) {
            self.0 = s.fs.open_dir(&parent).ok().map(|d| (parent, d));
        }
        let (_, dir) = self.0.as_ref()?;
        dir.stat_at(path.name()).ok().flatten()
    }
}

/// Builds one entry with its size and time (from the walk's listing where the host lists
/// with metadata, else one look per entry). A secret shows its name, type and kind only.
fn describe_entry(s: &Session, parents: &mut ParentCache, e: &WalkEntry) -> DirEntry {
    let (path, ty, kind) = (&e.path, e.ty, e.kind);
    let (kind, target) = if ty == EntryType::Symlink {
        match s.resolve(path) {
            Ok(r) => {
                let is_dir = r.meta.as_ref().is_some_and(|m| m.is_dir());
                (
                    s.policy.kind_of(&r.target, is_dir),
                    Some(r.target.to_string()),
                )
            }
            Err(_) => (kind, None),
        }
    } else {
        (kind, None)
    };
    let meta = if kind == Kind::Secret {
        None
    } else {
        // A file with several names may be a secret's or an outside file's other name.
        e.stat
            .or_else(|| parents.stat(s, path))
            .filter(|m| !m.is_file() || s.policy.links_allowed(m.nlink))
    };
    DirEntry {
        path: path.to_string(),
        ty,
        kind,
        size: if ty == EntryType::File {
            meta.as_ref().map_or(0, |m| m.size)
        } else {
            0
        },
        modified: meta.as_ref().and_then(|m| s.policy.dir_time(m)),
        target,
    }
}

/// Finds files by glob.
///
/// # Errors
/// `INVALID_INPUT` (no pattern, a bad glob), `PATH_REJECTED`, `NOT_FOUND`, `POLICY_DENIED`.
pub fn find_files(
    s: &Session,
    log: &mut CallLog,
    a: &FindFilesArgs,
) -> ToolResult<FindFilesResult> {
    if a.patterns.is_empty() {
        return Err(ToolError::invalid(
            "patterns is empty; give at least one glob such as \"*.rs\"",
        ));
    }
    let globs = Globs::new(&a.patterns)?;
    let start = start_dir(s, a.path.as_deref())?;
    let limits = s.policy.limits();
    let max = Policy::clamp(
        a.max_results,
        limits.max_find_results,
        limits.max_find_results,
    ) as usize;
    let opts = WalkOptions {
        include_hidden: a.include_hidden.unwrap_or(false),
        respect_ignore: a.respect_ignore.unwrap_or(true),
        max_depth: usize::MAX,
        shard: None,
        with_stat: false,
    };
    let mut skips = Skips::default();
    let mut paths = Vec::new();
    let mut stopped_by = None;
    let ids = (root_id(s)?, s.policy.fingerprint());
    let page = Page::open(
        &s.cursor_key,
        (ids.0, &ids.1),
        "find_files",
        a,
        "max_results",
        a.cursor.as_deref(),
    )?;
    let mut skipper = page.skipper();
    let mut meter = Meter::default();
    let mut visit = |path: &LogicalPath, ty: EntryType| {
        meter.file(s.fs.services(), 0, 0);
        if ty == EntryType::Dir {
            return Flow::Continue;
        }
        let p = path.as_str();
        if globs.matches(p) {
            if skipper.skip(p) {
                return Flow::Continue;
            }
            if paths.len() >= max {
                stopped_by = Some(Stop::new("max_results", max as u64));
                return Flow::Stop;
            }
            paths.push(p.to_string());
        }
        Flow::Continue
    };
    // While the host's watch counts no change since a search's last whole walk, that walk
    // shows the tree as a walk would now, and no directory is listed (tools/index/tree.rs).
    let replayed = (start.is_root() && opts.respect_ignore)
        .then(|| {
            crate::tools::index::with_quiet_tree(s, ids.0, opts.include_hidden, |tree| {
                tree.replay(&mut skips, |_, e| visit(&e.path, e.ty))
            })
        })
        .flatten();
    let walk_stopped = match replayed {
        Some(stopped) => stopped,
        None => walk(&s.fs, &s.policy, &start, &opts, &mut skips, |e| {
            visit(&e.path, e.ty)
        })?,
    };
    let walk_stop = walk_stopped.then(|| walk_budget(&s.policy));
    let stopped_by = page.finish(&skipper, stopped_by, walk_stop)?;
    let next_cursor = page.next(&stopped_by, "max_results", paths.len(), || {
        paths.last().cloned()
    });
    log.paths_read.push(start.to_string());
    let mut summary = format!("{} files match {}", paths.len(), a.patterns.join(", "));
    if let Some(stop) = &stopped_by {
        summary.push_str(&stop.note(if stop.cap == "max_results" {
            "more files match; pass next_cursor as cursor for the next page"
        } else {
            "the walk visited no more entries, so more files may match; narrow the path"
        }));
    }
    summary.push_str(&page.note());
    Ok(FindFilesResult {
        paths,
        truncated: stopped_by.is_some(),
        stopped_by,
        next_cursor,
        skipped: skips.counts(),
        summary,
    })
}

/// Describes one path and what the policy allows on it.
///
/// # Errors
/// `PATH_REJECTED`, `NOT_FOUND`, `POLICY_DENIED` (git internals, blocked paths).
pub fn file_info(s: &Session, log: &mut CallLog, a: &FileInfoArgs) -> ToolResult<FileInfoResult> {
    let path = LogicalPath::parse(&a.path)?;
    let shown = path.to_string();
    if s.policy.hidden_path(&path) {
        return Err(crate::tools::session::missing(&path));
    }
    let own_kind = s.policy.kind_of(&path, false);
    if own_kind == Kind::GitInternal {
        s.policy.check_read(&path, own_kind)?;
    }
    let r = s.resolve(&path)?;
    let Some(meta) = r.meta.as_ref() else {
        return Err(r.not_a_file_error());
    };
    let is_dir = meta.is_dir();
    let kind = s.policy.kind_of(&r.target, is_dir);
    if let Some(e) = s.policy.read_denial(&r.target, kind) {
        // Secrets keep their metadata visible; anything else the policy hides stays hidden.
        if kind != Kind::Secret {
            return Err(e);
        }
    }
    let read_denial = s
        .policy
        .read_denial(&r.target, kind)
        .or_else(|| {
            r.via_link
                .then(|| s.policy.read_denial(&path, s.policy.kind_of(&path, is_dir)))
                .flatten()
        })
        .or_else(|| {
            meta.is_file()
                .then(|| s.policy.check_links(&shown, meta.nlink).err())
                .flatten()
        });
    let write_denial = s
        .policy
        .write_denial(&r.target, kind)
        .or_else(|| s.policy.write_denial(&path, own_kind));
    let ty = if r.via_link {
        EntryType::Symlink
    } else {
        meta.ty
    };
    let mut sha256 = None;
    let mut sniffed = None;
    let hashable = meta.size <= s.policy.limits().max_hash_bytes;
    if read_denial.is_none() && meta.is_file() && hashable {
        let io = |e: std::io::Error| ToolError::io(&shown, &e);
        let (file, opened) = r.open()?;
        let mut sniffer = crate::rules::sniff::Sniffer::default();
        let sniff = s.policy.sniffs(&r.target);
        let services = s.fs.services();
        let (digest, bytes) = sha256_file(&file, opened.size, &|d| services.sha256_hex(d), |c| {
            if sniff {
                sniffer.feed(c);
            }
        })
        .map_err(io)?;
        log.read(&shown, bytes);
        sniffed = sniffer.found();
        if sniffed.is_none() {
            sha256 = Some(digest);
        }
    } else {
        log.paths_read.push(shown.clone());
    }
    let read_denial = match sniffed {
        Some(what) => Policy::content_denial(&shown, Some(what)).err(),
        None => read_denial,
    };
    // A secret's size and time are derived from its content: never shown.
    let hardlinked = meta.is_file() && s.policy.check_links(&shown, meta.nlink).is_err();
    let secret = kind == Kind::Secret || sniffed.is_some() || hardlinked;
    let size = if is_dir || secret { 0 } else { meta.size };
    let readable = read_denial.is_none();
    let mut summary = format!(
        "{shown}: {}, {}, {}; {}{}",
        match ty {
            EntryType::File => "file",
            EntryType::Dir => "directory",
            EntryType::Symlink => "symlink",
            EntryType::Other => "special file",
        },
        kind.as_str(),
        if secret {
            "size withheld".to_string()
        } else {
            format!("{size} bytes")
        },
        if readable { "readable" } else { "not readable" },
        if write_denial.is_none() {
            ", writable"
        } else {
            ", not writable"
        },
    );
    if readable && meta.is_file() && !hashable {
        summary.push_str("; too large to hash here: read_file with a range reports its sha256");
    }
    Ok(FileInfoResult {
        path: shown,
        ty,
        kind,
        size,
        modified: if secret {
            None
        } else {
            s.policy.dir_time(meta)
        },
        sha256,
        target: r.via_link.then(|| r.target.to_string()),
        readable,
        read_denied_reason: read_denial.and_then(|e| e.reason),
        writable: write_denial.is_none() && !is_dir,
        write_denied_reason: write_denial.and_then(|e| e.reason),
        summary,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::fsx::Fs;

    #[test]
    fn build_output_names_are_source_without_their_build_file() {
        let tmp = tempfile::tempdir().unwrap();
        for p in [
            "drivers/target/x.c",
            "target/out.bin",
            "rust/Cargo.toml",
            "rust/target/debug/app",
        ] {
            let f = tmp.path().join(p);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, "x").unwrap();
        }
        let s = Session::new(
            Fs::open(tmp.path()).unwrap(),
            Policy::from_json("").unwrap(),
        );
        let k = s
            .policy
            .kind_of(&LogicalPath::parse("drivers/target").unwrap(), true);
        assert_eq!(k, crate::rules::classify::Kind::Directory);
        let args = FindFilesArgs {
            patterns: vec!["*".into()],
            ..Default::default()
        };
        let r = find_files(&s, &mut CallLog::default(), &args).unwrap();
        assert_eq!(
            r.paths,
            ["drivers/target/x.c", "rust/Cargo.toml", "target/out.bin"]
        );
    }
}
