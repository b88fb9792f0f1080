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
pub const STATE_DIR_NAME: &str = ".file-tools-state";

/// A normalised path relative to the repository root. The root has no components.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct LogicalPath {
    parts: Vec<String>,
}

impl LogicalPath {
    /// The repository root.
    pub fn root() -> Self {
        LogicalPath { parts: Vec::new() }
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
        let mut parts: Vec<String> = Vec::new();
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
                    parts.push(name.to_string());
                }
            }
        }
        let p = LogicalPath { parts };
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
    pub fn from_parts(parts: Vec<String>) -> Self {
        LogicalPath { parts }
    }

    /// Refuses names reserved by file-tools.
    ///
    /// # Errors
    /// `PATH_REJECTED` when the path is the state directory or one of its entries, or any
    /// component is a file-tools temporary file.
    pub fn check_reserved(&self) -> ToolResult<()> {
        let reserved = self.parts.first().is_some_and(|f| f == STATE_DIR_NAME)
            || self.parts.iter().any(|p| is_temp_name(p));
        if reserved {
            return Err(reject(&self.to_string(), "is reserved by file-tools"));
        }
        Ok(())
    }

    pub fn is_root(&self) -> bool {
        self.parts.is_empty()
    }

    pub fn parts(&self) -> &[String] {
        &self.parts
    }

    /// The last component, or `""` for the root.
    pub fn name(&self) -> &str {
        self.parts.last().map(String::as_str).unwrap_or("")
    }

    /// The parent directory; the root is its own parent.
    pub fn parent(&self) -> LogicalPath {
        let mut parts = self.parts.clone();
        parts.pop();
        LogicalPath { parts }
    }

    /// This path with one more component.
    pub fn join(&self, name: &str) -> LogicalPath {
        let mut parts = self.parts.clone();
        parts.push(name.to_string());
        LogicalPath { parts }
    }

    /// True when `self` is `other` or lies below it.
    pub fn starts_with(&self, other: &LogicalPath) -> bool {
        self.parts.len() >= other.parts.len() && self.parts[..other.parts.len()] == other.parts[..]
    }
}

impl fmt::Display for LogicalPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.parts.join("/"))
    }
}

/// True for names of file-tools' own temporary files.
pub fn is_temp_name(name: &str) -> bool {
    name.starts_with('.') && name.contains(TEMP_MARKER)
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
        assert_eq!(p.name(), "c");
        assert!(p.starts_with(&LogicalPath::parse("a/b").unwrap()));
        assert!(!p.starts_with(&LogicalPath::parse("a/bc").unwrap()));
        assert!(p.starts_with(&LogicalPath::root()));
    }
}
