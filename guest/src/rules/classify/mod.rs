//! Classification of paths by name (and of content, for binary data).
//!
//! Precedence, first match wins: git internals, secrets, generated output, vendored code,
//! automation (settings that make other programs run commands), lock files, binary by
//! extension, then source, config, doc or plain text. A policy may override the result for
//! chosen globs (see `policy`).
//!
//! Every name that decides a guarding kind (git internals, secrets, generated, vendored,
//! automation, lock files) is compared in its folded form (see `fold`), so that any spelling
//! a case-folding file system opens as the same file gets the same kind.

use serde::{Deserialize, Serialize};

use crate::rules::path::LogicalPath;

mod names;
use names::*;

/// The classification of a path; one-to-one with the WIT `file-kind` enum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Source,
    Config,
    Doc,
    Text,
    Secret,
    GitInternal,
    Generated,
    Vendored,
    Lockfile,
    Binary,
    Directory,
    Automation,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Source => "source",
            Kind::Config => "config",
            Kind::Doc => "doc",
            Kind::Text => "text",
            Kind::Secret => "secret",
            Kind::GitInternal => "git_internal",
            Kind::Generated => "generated",
            Kind::Vendored => "vendored",
            Kind::Lockfile => "lockfile",
            Kind::Binary => "binary",
            Kind::Directory => "directory",
            Kind::Automation => "automation",
        }
    }

    /// Whether the kind guards something (refuses or withholds): what a policy override to
    /// it adds must match every spelling of a path, as guarding rules do (see `fold`).
    pub fn guards(self) -> bool {
        matches!(
            self,
            Kind::Secret
                | Kind::GitInternal
                | Kind::Generated
                | Kind::Vendored
                | Kind::Lockfile
                | Kind::Binary
                | Kind::Automation
        )
    }
}

/// Classifies a logical path by name alone. Directories whose name is build output only in
/// context (`target`, `build`, `dist`, `out`, `_build`) count as generated, the cautious
/// reading; [`classify_with`] looks for the build file that makes them.
#[cfg(test)]
pub fn classify(path: &LogicalPath, is_dir: bool) -> Kind {
    classify_with(path, is_dir, &|_| true)
}

/// Classifies a logical path; `has_file` says whether a file exists (used only for the
/// directories listed in `CONTEXT_DIRS`).
#[cfg(test)]
pub fn classify_with(
    path: &LogicalPath,
    is_dir: bool,
    has_file: &dyn Fn(&LogicalPath) -> bool,
) -> Kind {
    let mut marks = DirMarks::default();
    let mut dir = LogicalPath::root();
    for part in path.parent().parts() {
        dir = dir.join(part);
        marks = marks.enter(&dir, has_file);
    }
    marks.classify(path, is_dir, has_file)
}

/// What the directories above an entry settle about it: the built-in half of a walk's
/// per-directory scope, so that each entry is then classified by its own name alone.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DirMarks {
    git: bool,
    generated: bool,
    vendored: bool,
    automation: bool,
}

impl DirMarks {
    /// The marks of directory `dir`, whose parent has these marks.
    pub fn enter(self, dir: &LogicalPath, has_file: &dyn Fn(&LogicalPath) -> bool) -> DirMarks {
        let name = crate::rules::fold::fold(dir.name());
        DirMarks {
            git: self.git || name == ".git",
            generated: self.generated || is_generated_dir(dir, &name, has_file),
            vendored: self.vendored || VENDORED_DIRS.contains(&&*name),
            automation: self.automation || is_automation_dir(dir, &name),
        }
    }

    /// These marks for a directory git would take for a repository of its own (see
    /// [`GIT_SHAPE`]): everything below it is git internals.
    pub fn as_git(self) -> DirMarks {
        DirMarks { git: true, ..self }
    }

    /// The marks as the low four bits of a byte.
    pub fn bits(self) -> u8 {
        u8::from(self.git)
            | u8::from(self.generated) << 1
            | u8::from(self.vendored) << 2
            | u8::from(self.automation) << 3
    }

    /// Whether everything below is git internals.
    pub fn is_git(self) -> bool {
        self.git
    }

    /// The kind of `path`, an entry of a directory with these marks. Precedence as in the
    /// module docs: git internals, secrets, generated, vendored, then the name.
    pub fn classify(
        self,
        path: &LogicalPath,
        is_dir: bool,
        has_file: &dyn Fn(&LogicalPath) -> bool,
    ) -> Kind {
        let name = path.name();
        let mut buf = [0; 64];
        let folded = crate::rules::fold::fold_name_in(name, &mut buf);
        if self.git || folded == ".git" {
            return Kind::GitInternal;
        }
        if !is_dir && (is_secret_folded(&folded) || is_secret_path(path, &folded)) {
            return Kind::Secret;
        }
        if self.generated || (is_dir && is_generated_dir(path, &folded, has_file)) {
            return Kind::Generated;
        }
        if self.vendored || (is_dir && VENDORED_DIRS.contains(&&*folded)) {
            return Kind::Vendored;
        }
        if is_dir {
            return Kind::Directory;
        }
        if self.automation || is_automation_name(&folded) || is_automation_path(path, &folded) {
            return Kind::Automation;
        }
        if listed(LOCKFILES, folded.as_bytes()) {
            return Kind::Lockfile;
        }
        // Generated by its ending in every spelling (`app.MIN.JS` opens `app.min.js` where
        // names fold), and by its ending as given (folding cuts a name at a stream
        // separator: `out:app.min.js` folds to `out`).
        if has_generated_suffix(&folded) || has_generated_suffix(name) {
            return Kind::Generated;
        }
        classify_plain_name(name)
    }
}

/// The entries that make git take a directory for a repository of its own, as its
/// discovery does (a `HEAD` file with `objects/` and `refs/` beside it, or with a
/// `commondir` file that points at them elsewhere), in folded forms: (name, is a directory).
pub const GIT_SHAPE: &[(&str, bool)] = &[
    ("head", false),
    ("objects", true),
    ("refs", true),
    ("commondir", false),
];

/// Whether an entry of type `ty` fills the slot of [`GIT_SHAPE`] whose second field is
/// `dir`, counted as git counts it: `objects` and `refs` need only let git in (it asks
/// `access(X_OK)`, which follows links: a link to a directory passes, and so does an
/// executable file), `HEAD` (a symbolic link to `refs/...` will do) and `commondir` may be
/// anything but a directory. Counting every entry is the cautious reading.
pub fn fills_git_slot(dir: bool, ty: crate::fs::port::EntryType) -> bool {
    dir || ty != crate::fs::port::EntryType::Dir
}

/// Whether a directory that has the entries `has` (each of [`GIT_SHAPE`], in its order)
/// would be taken by git for a repository.
pub fn is_git_shape(has: [bool; 4]) -> bool {
    let [head, objects, refs, commondir] = has;
    head && ((objects && refs) || commondir)
}

/// Whether classifying the directory `name` looks into the tree (for the build file beside
/// it that makes it build output), so that its kind may change while its name does not.
pub fn looks_beside(name: &str) -> bool {
    CONTEXT_DIRS
        .iter()
        .any(|(d, _)| crate::rules::fold::folds_to(name, d))
}

/// True when the directory `dir` (whose name folds to `name`) holds build output: by name
/// alone, or by name beside the build file that makes it.
fn is_generated_dir(
    dir: &LogicalPath,
    name: &str,
    has_file: &dyn Fn(&LogicalPath) -> bool,
) -> bool {
    if GENERATED_DIRS.contains(&name) {
        return true;
    }
    CONTEXT_DIRS.iter().any(|(d, makers)| {
        *d == name && {
            let parent = dir.parent();
            makers.iter().any(|m| has_file(&parent.join(m)))
        }
    })
}

/// Whether every file below the directory `dir` (whose name folds to `name`) is
/// automation: one of [`AUTOMATION_DIRS`], or `.github/workflows` and `.github/actions`.
fn is_automation_dir(dir: &LogicalPath, name: &str) -> bool {
    if AUTOMATION_DIRS.contains(&name) {
        return true;
    }
    (name == "workflows" || name == "actions") && {
        let parent = dir.as_str().rsplit('/').nth(1).unwrap_or("");
        crate::rules::fold::fold(parent) == ".github"
    }
}

/// Whether a file whose name folds to `name` makes another program run commands.
fn is_automation_name(name: &str) -> bool {
    listed(AUTOMATION_NAMES, name.as_bytes())
        || name.ends_with(".code-workspace")
        || name.ends_with(".sublime-project")
}

/// Whether the file `path`, whose name folds to `name`, is one of [`AUTOMATION_PATHS`].
fn is_automation_path(path: &LogicalPath, name: &str) -> bool {
    if !AUTOMATION_PATHS.iter().any(|(_, n)| name == *n) {
        return false;
    }
    let dir = crate::rules::fold::fold(path.as_str().rsplit('/').nth(1).unwrap_or(""));
    AUTOMATION_PATHS
        .iter()
        .any(|(d, n)| dir == *d && name == *n)
}

/// Whether `table` (sorted, see the test) holds `key`. Every entry a walk classifies is
/// looked up in several tables; the names differ from most entries in their first bytes, so
/// an inlined byte loop settles each step sooner than a call to `memcmp` would.
fn listed(table: &[&str], key: &[u8]) -> bool {
    table
        .binary_search_by(|e| compare_short(e.as_bytes(), key))
        .is_ok()
}

/// `a.cmp(b)` for short byte strings, inlined.
#[inline]
fn compare_short(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    for (x, y) in a.iter().zip(b) {
        if x != y {
            return x.cmp(y);
        }
    }
    a.len().cmp(&b.len())
}

/// `s` with ASCII letters lowercased, in `buf`; `None` when longer than `buf`, and so
/// longer than every table entry looked up with it.
fn folded<'b>(s: &str, buf: &'b mut [u8; 16], upper: bool) -> Option<&'b [u8]> {
    let out = buf.get_mut(..s.len())?;
    out.copy_from_slice(s.as_bytes());
    if upper {
        out.make_ascii_uppercase();
    } else {
        out.make_ascii_lowercase();
    }
    Some(out)
}

/// Whether `name` is `.git` in any spelling a folding file system opens as `.git`
/// (`.GIT`, `.git.`, `.g\u{200C}it`).
pub fn is_git_name(name: &str) -> bool {
    crate::rules::fold::folds_to(name, ".git")
}

/// Whether a file called `name` holds secrets, by name alone, in any spelling (see
/// `fold`): the names and endings listed above, the `.env` family, private keys,
/// credential files, and backups or editor copies of any of them.
#[cfg(test)]
pub fn is_secret_name(name: &str) -> bool {
    is_secret_folded(&crate::rules::fold::fold(name))
}

/// [`is_secret_name`] for a name in its folded form.
fn is_secret_folded(lower: &str) -> bool {
    let mut base: &str = lower;
    if is_secret_base(base) {
        return true;
    }
    // `server.pem.bak`, `.env~`, `.id_rsa.swp` (an editor's swap file of `id_rsa`). Most
    // names end in no copy suffix and leave here at once.
    while let Some(stripped) = strip_copy_suffix(base) {
        if stripped.is_empty() {
            return false;
        }
        if is_secret_base(stripped)
            || stripped
                .strip_prefix('.')
                .is_some_and(|s| !s.is_empty() && is_secret_base(s))
        {
            return true;
        }
        base = stripped;
    }
    false
}

/// `n` without a backup or editor-copy ending, if it has one.
fn strip_copy_suffix(n: &str) -> Option<&str> {
    match n.as_bytes().last()? {
        b'~' | b'k' | b'g' | b'd' | b'p' | b'o' | b'e' => {
            COPY_SUFFIXES.iter().find_map(|s| n.strip_suffix(s))
        }
        _ => None,
    }
}

/// Whether `hay` contains `needle`, for short names (no searcher to set up).
fn has_part(hay: &[u8], needle: &[u8]) -> bool {
    hay.len() >= needle.len() && hay.windows(needle.len()).any(|w| w == needle)
}

/// [`is_secret_name`] for a lowercase name that is not itself a copy.
fn is_secret_base(n: &str) -> bool {
    let b = n.as_bytes();
    if listed(SECRET_NAMES, b) {
        return true;
    }
    if extension(n).is_some_and(|e| listed(SECRET_EXTS, e.as_bytes())) {
        return true;
    }
    if n.starts_with(".env") {
        if ENV_TEMPLATES.contains(&n) {
            return false;
        }
        if matches!(b.get(4), Some(b'.' | b'_' | b'-')) {
            return true;
        }
    }
    if n.len() > 4 && n.ends_with(".env") {
        return true;
    }
    let public = n.ends_with(".pub");
    if !public && n.starts_with("id_") && KEY_PREFIXES.iter().any(|p| n.starts_with(p)) {
        return true;
    }
    if !public
        && has_part(b, b"deploy")
        && (has_part(b, b"deploy_key") || has_part(b, b"deploy-key"))
    {
        return true;
    }
    let (stem, ext) = n.split_once('.').unwrap_or((n, ""));
    SECRET_STEMS.contains(&stem) && SECRET_STEM_EXTS.contains(&ext)
}

/// Whether `path`, whose name folds to `name`, is a secret by its directory and name
/// (`.docker/config.json`).
fn is_secret_path(path: &LogicalPath, name: &str) -> bool {
    if !SECRET_PATHS.iter().any(|(_, n)| name == *n) {
        return false;
    }
    // The parent directory's name, without building the parent path.
    let dir = crate::rules::fold::fold(path.as_str().rsplit('/').nth(1).unwrap_or(""));
    SECRET_PATHS.iter().any(|(d, n)| dir == *d && name == *n)
}

/// Whether `name` ends in one of [`GENERATED_SUFFIXES`].
fn has_generated_suffix(name: &str) -> bool {
    extension(name).is_some_and(|e| GENERATED_SUFFIX_EXTS.contains(&e))
        && GENERATED_SUFFIXES.iter().any(|s| name.ends_with(s))
}

/// The kind of a file by its name alone, past the guarding kinds [`DirMarks::classify`]
/// settles first.
#[cfg(test)]
fn classify_name(name: &str) -> Kind {
    if has_generated_suffix(name) {
        return Kind::Generated;
    }
    classify_plain_name(name)
}

/// [`classify_name`] for a name that ends in no generated suffix.
fn classify_plain_name(name: &str) -> Kind {
    let exact = name.as_bytes();
    if listed(CONFIG_NAMES, exact) {
        return Kind::Config;
    }
    let mut buf = [0; 16];
    let stem = name.split('.').next().unwrap_or("");
    if folded(stem, &mut buf, true).is_some_and(|s| listed(DOC_NAMES, s)) {
        return Kind::Doc;
    }
    let Some(ext) = extension(name) else {
        return Kind::Text;
    };
    let Some(ext) = folded(ext, &mut buf, false) else {
        return Kind::Text;
    };
    [
        (BINARY_EXTS, Kind::Binary),
        (SOURCE_EXTS, Kind::Source),
        (CONFIG_EXTS, Kind::Config),
        (DOC_EXTS, Kind::Doc),
    ]
    .into_iter()
    .find(|(table, _)| listed(table, ext))
    .map_or(Kind::Text, |(_, k)| k)
}

fn extension(name: &str) -> Option<&str> {
    let idx = memchr::memrchr(b'.', name.as_bytes())?;
    if idx == 0 {
        // A dotfile such as `.bashrc` has no extension.
        return None;
    }
    Some(&name[idx + 1..])
}

/// How many leading bytes are sniffed for binary content.
pub const SNIFF_BYTES: usize = crate::text::encoding::detect::WINDOW;

/// True when the content looks binary: a NUL byte in its first 8 KiB, unless they are
/// UTF-16 or UTF-32 text (marked, or UTF-16 in one plausible byte order; see
/// `text::encoding::detect`).
pub fn looks_binary(content: &[u8]) -> bool {
    let window = &content[..content.len().min(SNIFF_BYTES)];
    if memchr::memchr(0, window).is_none() {
        return false;
    }
    crate::text::encoding::detect::wide(content, false).is_none()
}

#[cfg(test)]
mod tests;
