//! The path guard: turns an agent's path string into a normalised logical path under the
//! repository root, or refuses it.
//!
//! Rules, in order: no NUL or other control characters, no backslash (which also rules out
//! UNC forms), no drive prefix (`C:`), not absolute, not home-relative (`~`), not empty, no
//! name longer than 255 bytes or path longer than 4096, and `..` may never climb above the
//! root at any point. `.` and empty components are dropped, so `src/./a//b` is `src/a/b`
//! and `src/../pom.xml` is `pom.xml`. Names reserved by file-tools itself (its temporary
//! files and state directory) are refused too.

use std::fmt;

use crate::error::{ErrorCode, ToolError, ToolResult};

/// Longest accepted path, in bytes.
pub const MAX_PATH_BYTES: usize = 4096;
/// Longest accepted single name, in bytes.
pub const MAX_NAME_BYTES: usize = 255;
/// Marker in the names of file-tools' own temporary files; never visible to tools.
pub const TEMP_MARKER: &str = ".ft-tmp-";
/// Top-level name where a host may mount file-tools' private state; never reachable.
pub const STATE_DIR_NAME: &str = file_tools_contract::STATE_DIR_NAME;

/// A normalised path relative to the repository root: its components joined by `/`, the
/// empty string for the root. Kept as one string because walks build one per entry.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct LogicalPath {
    s: String,
}

/// Paths order component by component (`a/b` before `a.c`), as directory walks visit them.
impl Ord for LogicalPath {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.parts().cmp(other.parts())
    }
}

impl PartialOrd for LogicalPath {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// The components of a [`LogicalPath`], first to last.
pub type Parts<'a> = std::iter::Filter<std::str::Split<'a, char>, fn(&&str) -> bool>;

impl LogicalPath {
    /// The repository root.
    pub fn root() -> Self {
        LogicalPath { s: String::new() }
    }

    /// Parses and normalises an agent-supplied path that must name something below the
    /// root (not the root itself).
    ///
    /// # Errors
    /// `PATH_REJECTED` for every form listed in the module docs, and for the root.
    pub fn parse(input: &str) -> ToolResult<Self> {
        let p = Self::parse_allow_root(input)?;
        if p.is_root() {
            return Err(reject(input, "names the repository root, not a file"));
        }
        Ok(p)
    }

    /// Like [`LogicalPath::parse`], but `.` and the empty string name the root. For
    /// directory arguments (where to list or search).
    ///
    /// # Errors
    /// `PATH_REJECTED` as for [`LogicalPath::parse`].
    pub fn parse_dir(input: &str) -> ToolResult<Self> {
        if input.is_empty() {
            return Ok(Self::root());
        }
        Self::parse_allow_root(input)
    }

    fn parse_allow_root(input: &str) -> ToolResult<Self> {
        if input.is_empty() {
            return Err(reject(input, "is empty"));
        }
        if input.len() > MAX_PATH_BYTES {
            return Err(reject(input, "is longer than 4096 bytes"));
        }
        if input.contains('\0') {
            return Err(reject(input, "contains a NUL byte"));
        }
        if input.chars().any(|c| c.is_control()) {
            return Err(reject(input, "contains a control character"));
        }
        if input.contains('\\') {
            return Err(reject(
                input,
                "contains a backslash; use '/' as the separator (Windows and UNC forms are refused)",
            ));
        }
        let bytes = input.as_bytes();
        if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
            return Err(reject(
                input,
                "has a drive prefix; paths are relative to the repository root",
            ));
        }
        if input.starts_with('/') {
            return Err(reject(
                input,
                "is absolute; give a path relative to the repository root, such as 'src/main.rs'",
            ));
        }
        if input == "~" || input.starts_with("~/") {
            return Err(reject(
                input,
                "is home-relative; give a path relative to the repository root",
            ));
        }
        let mut parts: Vec<&str> = Vec::new();
        for comp in input.split('/') {
            match comp {
                "" | "." => {}
                ".." => {
                    if parts.pop().is_none() {
                        return Err(reject(input, "climbs above the repository root"));
                    }
                }
                name => {
                    if name.len() > MAX_NAME_BYTES {
                        return Err(reject(input, "has a name longer than 255 bytes"));
                    }
                    parts.push(name);
                }
            }
        }
        let p = LogicalPath { s: parts.join("/") };
        p.check_reserved().map_err(|_| {
            reject(
                input,
                "names a file reserved by file-tools (a temporary file or its state)",
            )
        })?;
        Ok(p)
    }

    /// Builds a path from components already known to be plain names (from a directory
    /// listing or a resolved link).
    pub fn from_parts<S: AsRef<str>>(parts: &[S]) -> Self {
        let mut s = String::new();
        for p in parts {
            if !s.is_empty() {
                s.push('/');
            }
            s.push_str(p.as_ref());
        }
        LogicalPath { s }
    }

    /// Refuses names reserved by file-tools.
    ///
    /// # Errors
    /// `PATH_REJECTED` when the path is the state directory or one of its entries, or any
    /// component is a file-tools temporary file.
    pub fn check_reserved(&self) -> ToolResult<()> {
        let reserved =
            self.parts().next().is_some_and(is_state_name) || self.parts().any(is_temp_name);
        if reserved {
            return Err(reject(&self.s, "is reserved by file-tools"));
        }
        Ok(())
    }

    pub fn is_root(&self) -> bool {
        self.s.is_empty()
    }

    /// The path as text, components joined by `/` (`""` for the root).
    pub fn as_str(&self) -> &str {
        &self.s
    }

    /// The path as an owned string.
    pub fn into_string(self) -> String {
        self.s
    }

    pub fn parts(&self) -> Parts<'_> {
        self.s.split('/').filter(|p| !p.is_empty())
    }

    /// The last component, or `""` for the root.
    pub fn name(&self) -> &str {
        match memchr::memrchr(b'/', self.s.as_bytes()) {
            Some(i) => &self.s[i + 1..],
            None => &self.s,
        }
    }

    /// The parent directory; the root is its own parent.
    pub fn parent(&self) -> LogicalPath {
        LogicalPath {
            s: self.parent_str().to_string(),
        }
    }

    /// The parent directory's text, borrowed (`""` at the root and for its entries).
    pub fn parent_str(&self) -> &str {
        parent_of(&self.s)
    }

    /// This path with one more component.
    pub fn join(&self, name: &str) -> LogicalPath {
        let mut s = String::with_capacity(self.s.len() + 1 + name.len());
        s.push_str(&self.s);
        if !s.is_empty() {
            s.push('/');
        }
        s.push_str(name);
        LogicalPath { s }
    }

    /// True when `self` is `other` or lies below it.
    pub fn starts_with(&self, other: &LogicalPath) -> bool {
        other.s.is_empty()
            || self
                .s
                .strip_prefix(&other.s)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    }
}

impl fmt::Display for LogicalPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.s)
    }
}

/// The parent directory's text of the logical path `path` (`""` at the root and for its
/// entries).
pub fn parent_of(path: &str) -> &str {
    memchr::memrchr(b'/', path.as_bytes()).map_or("", |i| &path[..i])
}

/// A unique suffix for temporary names.
pub fn temp_suffix() -> String {
    use std::hash::{BuildHasher, Hasher};
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    format!("{:016x}", h.finish())
}

/// True for names of file-tools' own temporary files, in any spelling a folding file
/// system opens as one (see `fold`).
pub fn is_temp_name(name: &str) -> bool {
    name.starts_with('.') && crate::rules::fold::fold(name).contains(TEMP_MARKER)
}

/// True for the name of file-tools' state directory at the root, in any spelling.
pub fn is_state_name(name: &str) -> bool {
    crate::rules::fold::folds_to(name, STATE_DIR_NAME)
}

fn reject(input: &str, why: &str) -> ToolError {
    let shown: String = input
        .chars()
        .take(200)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    ToolError::new(ErrorCode::PathRejected, format!("path '{shown}' {why}")).with_path(shown)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> String {
        LogicalPath::parse(s)
            .map(|p| p.to_string())
            .unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn rejected(s: &str) {
        let e = LogicalPath::parse(s).expect_err(s);
        assert_eq!(e.code, ErrorCode::PathRejected, "{s}");
    }

    #[test]
    fn normalises_dot_and_dotdot_inside_the_root() {
        assert_eq!(ok("src/../pom.xml"), "pom.xml");
        assert_eq!(ok("./src//main.rs"), "src/main.rs");
        assert_eq!(ok("a/b/../../c"), "c");
        assert_eq!(ok("src/"), "src");
    }

    #[test]
    fn refuses_escapes_absolute_and_foreign_forms() {
        for s in [
            "",
            ".",
            "..",
            "../x",
            "a/../../x",
            "a/../..",
            "/etc/passwd",
            "//server/share",
            "\\\\server\\share",
            "C:\\x",
            "c:/x",
            "C:",
            "a\\b",
            "a\0b",
            "~/.ssh/id_rsa",
            "~",
            "a\nb",
            "./..",
            "src/../../..",
        ] {
            rejected(s);
        }
    }

    #[test]
    fn refuses_overlong_names_and_paths() {
        rejected(&"a".repeat(256));
        rejected(&"a/".repeat(2100));
        assert_eq!(ok(&"a".repeat(255)).len(), 255);
    }

    #[test]
    fn refuses_reserved_names() {
        rejected(".file-tools-state/baseline");
        rejected("src/.main.rs.ft-tmp-1234");
        // Every spelling a case-folding file system opens as the same name.
        rejected(".FILE-TOOLS-STATE/baseline");
        rejected(".file-tools-state./baseline");
        rejected("src/.main.rs.FT-TMP-1234");
        assert_eq!(ok("src/file-tools-state"), "src/file-tools-state");
    }

    #[test]
    fn dir_form_accepts_the_root() {
        assert!(LogicalPath::parse_dir("")
            .map(|p| p.is_root())
            .unwrap_or(false));
        assert!(LogicalPath::parse_dir(".")
            .map(|p| p.is_root())
            .unwrap_or(false));
        assert!(LogicalPath::parse_dir("..").is_err());
    }

    #[test]
    fn parent_join_and_prefix() {
        let p = LogicalPath::parse("a/b/c").unwrap();
        assert_eq!(p.parent().to_string(), "a/b");
        assert_eq!(p.parent_str(), "a/b");
        let top = LogicalPath::parse("a").unwrap();
        assert_eq!(
            (top.parent_str(), LogicalPath::root().parent_str()),
            ("", "")
        );
        assert_eq!(top.parent(), LogicalPath::root());
        assert_eq!(p.name(), "c");
        assert!(p.starts_with(&LogicalPath::parse("a/b").unwrap()));
        assert!(!p.starts_with(&LogicalPath::parse("a/bc").unwrap()));
        assert!(p.starts_with(&LogicalPath::root()));
    }
}
