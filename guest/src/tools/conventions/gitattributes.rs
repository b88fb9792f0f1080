//! The part of `.gitattributes` that decides a new file's line endings, and the encoding
//! (`working-tree-encoding`) of any file.
//!
//! Each line is a pattern followed by attributes; `#` starts a comment, `[attr]` macro
//! definitions and quoted patterns are passed over, and so is a pattern ending in `/`
//! (it names directories only). A pattern without `/` matches the file's name at any depth
//! below the file's directory; one with `/` matches the path relative to it (a leading `/`
//! only anchors). `*` stops at `/`, `**` crosses it. For each attribute the last matching
//! line wins, and a deeper file's lines come after a shallower one's, as in git.

use globset::GlobBuilder;

/// What the attributes say about a file's text conversion.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Attributes {
    /// `Some(true)` for `text` (or `text=auto`), `Some(false)` for `-text` or `binary`.
    pub text: Option<bool>,
    /// `eol=crlf` / `eol=lf` (lowercased).
    pub eol: Option<String>,
    /// The line that last set `eol` or `text`, for notes.
    pub source: Option<String>,
    /// `working-tree-encoding=NAME` as written, and the line that set it.
    pub encoding: Option<(String, String)>,
}

/// Glob matching as git does for attributes: `*` never crosses `/`.
pub fn glob_matches(pattern: &str, path: &str) -> bool {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .is_ok_and(|g| g.compile_matcher().is_match(path))
}

/// Applies the lines of one `.gitattributes` (in directory `dir`, `""` for the root) to
/// `path` (relative to the root), on top of `attrs`.
pub fn apply(text: &str, file_name: &str, dir: &str, path: &str, attrs: &mut Attributes) {
    let rel = if dir.is_empty() {
        path
    } else {
        match path.strip_prefix(dir).and_then(|r| r.strip_prefix('/')) {
            Some(r) => r,
            None => return,
        }
    };
    let base = rel.rsplit('/').next().unwrap_or(rel);
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with('"') {
            continue;
        }
        let mut words = line.split_ascii_whitespace();
        let Some(pattern) = words.next() else {
            continue;
        };
        if pattern.starts_with("[attr]") || pattern.ends_with('/') || pattern.starts_with('!') {
            continue;
        }
        let matched = if pattern.trim_start_matches('/').contains('/') || pattern.starts_with('/') {
            glob_matches(pattern.trim_start_matches('/'), rel)
        } else {
            glob_matches(pattern, base)
        };
        if !matched {
            continue;
        }
        for attr in words {
            let shown = format!("{file_name}: {pattern} {attr}");
            match attr {
                "text" | "text=auto" => {
                    attrs.text = Some(true);
                    attrs.source = Some(shown);
                }
                "-text" | "binary" => {
                    attrs.text = Some(false);
                    attrs.source = Some(shown);
                }
                "!text" => attrs.text = None,
                "!eol" => attrs.eol = None,
                "-working-tree-encoding" | "!working-tree-encoding" => attrs.encoding = None,
                a => {
                    if let Some(v) = a.strip_prefix("eol=") {
                        attrs.eol = Some(v.to_ascii_lowercase());
                        attrs.source = Some(shown);
                    } else if let Some(v) = a.strip_prefix("working-tree-encoding=") {
                        attrs.encoding = Some((v.to_string(), shown));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs_of(files: &[(&str, &str)], path: &str) -> Attributes {
        let mut a = Attributes::default();
        for (dir, text) in files {
            apply(text, ".gitattributes", dir, path, &mut a);
        }
        a
    }

    #[test]
    fn the_last_matching_line_wins_and_deeper_files_come_later() {
        let root = "* text=auto\n*.bat eol=crlf\n*.sh eol=lf\n# comment\n[attr]x -text\n";
        assert_eq!(
            attrs_of(&[("", root)], "tools/run.bat").eol.as_deref(),
            Some("crlf")
        );
        assert_eq!(attrs_of(&[("", root)], "run.sh").eol.as_deref(), Some("lf"));
        assert_eq!(attrs_of(&[("", root)], "x.txt").eol, None);
        let later = format!("{root}*.bat eol=lf\n");
        assert_eq!(
            attrs_of(&[("", &later)], "a.bat").eol.as_deref(),
            Some("lf")
        );
        let deep = [("", root), ("win", "*.txt eol=crlf\n*.bat -text\n")];
        assert_eq!(attrs_of(&deep, "win/a.txt").eol.as_deref(), Some("crlf"));
        assert_eq!(attrs_of(&deep, "a.txt").eol, None);
        assert_eq!(attrs_of(&deep, "win/a.bat").text, Some(false));
    }

    #[test]
    fn patterns_with_a_slash_are_relative_to_their_file() {
        let t = "/top.txt eol=crlf\ndocs/*.md eol=crlf\nsrc/**/*.cs eol=crlf\nbuild/ eol=crlf\n";
        assert_eq!(attrs_of(&[("", t)], "top.txt").eol.as_deref(), Some("crlf"));
        assert_eq!(attrs_of(&[("", t)], "sub/top.txt").eol, None);
        assert_eq!(
            attrs_of(&[("", t)], "docs/a.md").eol.as_deref(),
            Some("crlf")
        );
        assert_eq!(attrs_of(&[("", t)], "docs/x/a.md").eol, None);
        assert_eq!(
            attrs_of(&[("", t)], "src/a/b/c.cs").eol.as_deref(),
            Some("crlf")
        );
        assert_eq!(attrs_of(&[("", t)], "build/x").eol, None);
        assert_eq!(
            attrs_of(&[("sub", "/a.txt eol=crlf\n")], "sub/a.txt")
                .eol
                .as_deref(),
            Some("crlf")
        );
        assert_eq!(attrs_of(&[("sub", "/a.txt eol=crlf\n")], "a.txt").eol, None);
    }

    #[test]
    fn working_tree_encoding_is_read_and_unset() {
        let t = "*.txt working-tree-encoding=UTF-16LE-BOM\n*.c working-tree-encoding=ISO-8859-1 eol=crlf\nold.c -working-tree-encoding\n";
        let a = attrs_of(&[("", t)], "docs/a.txt");
        assert_eq!(
            a.encoding,
            Some((
                "UTF-16LE-BOM".to_string(),
                ".gitattributes: *.txt working-tree-encoding=UTF-16LE-BOM".to_string()
            ))
        );
        let c = attrs_of(&[("", t)], "src/m.c");
        assert_eq!(c.encoding.map(|e| e.0).as_deref(), Some("ISO-8859-1"));
        assert_eq!(c.eol.as_deref(), Some("crlf"));
        assert_eq!(attrs_of(&[("", t)], "old.c").encoding, None);
        assert_eq!(attrs_of(&[("", t)], "a.rs").encoding, None);
    }

    #[test]
    fn binary_and_garbage_lines_do_no_harm() {
        let t =
            "*.png binary\n\u{0}\u{1}garbage [[[ eol=crlf\n\"quoted name\" eol=crlf\n[ eol=crlf\n";
        assert_eq!(attrs_of(&[("", t)], "a.png").text, Some(false));
        assert_eq!(attrs_of(&[("", t)], "a.txt"), Attributes::default());
    }
}
