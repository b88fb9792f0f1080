//! The part of `.editorconfig` that decides a new file's line endings, and the encoding of
//! any file.
//!
//! Files are read from the file's directory upwards, stopping after one whose preamble
//! says `root = true`; farther files apply first, so nearer ones win, and within a file
//! later sections win. A section glob without `/` matches the file name at any depth below
//! the file's directory; one with `/` matches the path relative to it (a leading `/` only
//! anchors). `*` stops at `/`, `**` crosses it, `{a,b}` and `[abc]` work as in editorconfig;
//! numeric ranges `{1..3}` match nothing. Values are case-insensitive; `unset` clears one.

use super::gitattributes::glob_matches;

/// The properties that matter for a new file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Properties {
    /// `end_of_line`: `lf`, `crlf` or `cr`.
    pub end_of_line: Option<String>,
    /// `insert_final_newline`.
    pub insert_final_newline: Option<bool>,
    /// `charset`: `utf-8`, `utf-8-bom`, `latin1`, `utf-16be`, `utf-16le`.
    pub charset: Option<String>,
    /// The file and section that last set each, for notes.
    pub source: Option<String>,
    /// The file and section that set `charset`.
    pub charset_source: Option<String>,
}

/// True when the preamble of `text` says `root = true`.
pub fn is_root(text: &str) -> bool {
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            return false;
        }
        if let Some((k, v)) = line.split_once('=') {
            if k.trim().eq_ignore_ascii_case("root") && v.trim().eq_ignore_ascii_case("true") {
                return true;
            }
        }
    }
    false
}

fn section_matches(glob: &str, rel: &str) -> bool {
    if glob.contains("..") && glob.contains('{') {
        return false;
    }
    let g = glob.trim_start_matches('/');
    if glob.contains('/') {
        glob_matches(g, rel)
    } else {
        glob_matches(&format!("**/{g}"), rel) || glob_matches(g, rel)
    }
}

/// Applies one `.editorconfig` (in directory `dir`, `""` for the root) to `path` on top of
/// `props`.
pub fn apply(text: &str, file_name: &str, dir: &str, path: &str, props: &mut Properties) {
    let rel = if dir.is_empty() {
        path
    } else {
        match path.strip_prefix(dir).and_then(|r| r.strip_prefix('/')) {
            Some(r) => r,
            None => return,
        }
    };
    let mut section: Option<(String, bool)> = None;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(glob) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = Some((glob.to_string(), section_matches(glob, rel)));
            continue;
        }
        let Some((glob, true)) = &section else {
            continue;
        };
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim().to_ascii_lowercase();
        let value = value.trim().to_ascii_lowercase();
        let unset = value == "unset";
        let shown = format!("{file_name} [{glob}] {key} = {value}");
        match key.as_str() {
            "end_of_line" if unset => props.end_of_line = None,
            "end_of_line" if matches!(value.as_str(), "lf" | "crlf" | "cr") => {
                props.end_of_line = Some(value);
                props.source = Some(shown);
            }
            "insert_final_newline" if unset => props.insert_final_newline = None,
            "insert_final_newline" if value == "true" || value == "false" => {
                props.insert_final_newline = Some(value == "true");
                props.source = Some(shown);
            }
            "charset" if unset => props.charset = None,
            "charset" if !value.is_empty() => {
                props.charset = Some(value);
                props.source = Some(shown.clone());
                props.charset_source = Some(shown);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props_of(files: &[(&str, &str)], path: &str) -> Properties {
        let mut p = Properties::default();
        for (dir, text) in files {
            apply(text, ".editorconfig", dir, path, &mut p);
        }
        p
    }

    #[test]
    fn sections_match_by_name_or_relative_path_and_later_ones_win() {
        let t = "root = true\n\n[*]\nend_of_line = lf\ninsert_final_newline = true\n\n[*.{bat,cmd}]\nend_of_line = CRLF\n\n[docs/**.md]\ncharset = utf-8-bom\n\n[Makefile]\nend_of_line = unset\n";
        assert!(is_root(t));
        let p = props_of(&[("", t)], "scripts/x.bat");
        assert_eq!(p.end_of_line.as_deref(), Some("crlf"));
        assert_eq!(p.insert_final_newline, Some(true));
        assert_eq!(
            props_of(&[("", t)], "a.rs").end_of_line.as_deref(),
            Some("lf")
        );
        assert_eq!(
            props_of(&[("", t)], "docs/a.md").charset.as_deref(),
            Some("utf-8-bom")
        );
        assert_eq!(props_of(&[("", t)], "a.md").charset, None);
        assert_eq!(props_of(&[("", t)], "sub/Makefile").end_of_line, None);
    }

    #[test]
    fn nearer_files_win_and_root_is_read_from_the_preamble_only() {
        let far = "[*]\nend_of_line = crlf\n";
        let near = "[*.txt]\nend_of_line = lf\n";
        let p = props_of(&[("", far), ("sub", near)], "sub/a.txt");
        assert_eq!(p.end_of_line.as_deref(), Some("lf"));
        let p = props_of(&[("", far), ("sub", near)], "sub/a.rs");
        assert_eq!(p.end_of_line.as_deref(), Some("crlf"));
        assert!(!is_root("[*]\nroot = true\n"));
    }

    #[test]
    fn malformed_input_is_passed_over() {
        let t = "[*\nend_of_line = crlf\n[*]\nend_of_line = sideways\nnonsense\n=\n[{1..3}.txt]\nend_of_line = crlf\n";
        assert_eq!(props_of(&[("", t)], "1.txt"), Properties::default());
    }
}
