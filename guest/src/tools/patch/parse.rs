//! Parsing patches into [`FilePatch`]es. Two input forms are accepted.
//!
//! **Unified diff** (as `diff -u` and `git diff` write it):
//!
//! ```text
//! patch       := { junk-line | file-patch }
//! file-patch  := [ "diff --git " a-path " " b-path NL { extended-header NL } ]
//!                [ "--- " old-path [TAB junk] NL "+++ " new-path [TAB junk] NL ]
//!                { hunk }
//! extended    := "new file mode " M | "deleted file mode " M | "old mode " M | "new mode " M
//!              | "rename from " P | "rename to " P | "similarity index " N "%"
//!              | "dissimilarity index " N "%" | "index " H ".." H [ " " M ]
//!              | "Binary files " .. " differ" | "GIT binary patch"
//! hunk        := "@@ -" start [ "," count ] " +" start [ "," count ] " @@" [ text ] NL { hunk-line }
//!              | "@@" [ text ] NL { hunk-line }          (no ranges: located by its context)
//! hunk-line   := ( " " | "-" | "+" ) text NL | NL           (an empty line is empty context)
//!              | "\" text NL                             (no newline at end of the line above)
//! ```
//!
//! Paths may be C-quoted (`"a/sp ace\t.txt"`); `/dev/null` is the absent side; `a/` and
//! `b/` prefixes are removed. A counted hunk whose counts do not fit its lines is read again
//! as an uncounted one, with a warning.
//!
//! **Envelope** (the form many models emit):
//!
//! ```text
//! "*** Begin Patch" NL
//! { "*** Add File: " P NL { "+" text NL }
//! | "*** Delete File: " P NL
//! | "*** Update File: " P NL [ "*** Move to: " P NL ]
//!     { [ "@@" [ " " anchor ] NL ] { ( " " | "-" | "+" ) text NL } [ "*** End of File" NL ] } }
//! "*** End Patch" [ NL ]
//! ```
//!
//! `*** …` marker lines may be padded with spaces or tabs on either side, as models often
//! write them; hunk lines are never trimmed (so `@@` must start its line: ` @@` is context).
//! Inside an update, a line that reads as a file marker or `*** End Patch` once trimmed
//! ends the hunk, even when it starts with a space.

use super::{FilePatch, Hunk};
use crate::error::{ErrorCode, ToolError, ToolResult};

fn parse_err(line: usize, msg: impl std::fmt::Display) -> ToolError {
    ToolError::new(
        ErrorCode::PatchParseError,
        format!("patch line {line}: {msg}"),
    )
    .with_detail("line", line.to_string())
}

/// Parses either form.
///
/// # Errors
/// `PATCH_PARSE_ERROR` naming the line.
pub fn parse(text: &str) -> ToolResult<(Vec<FilePatch>, Vec<String>)> {
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let (patches, warnings) = if first.trim() == "*** Begin Patch" {
        (parse_envelope(text)?, Vec::new())
    } else {
        parse_unified(text)?
    };
    if patches.is_empty() {
        return Err(parse_err(1, "no file changes found; give a unified diff (--- / +++ / @@) or a *** Begin Patch envelope"));
    }
    Ok((patches, warnings))
}

/// Lines with their terminators, numbered from 1.
fn numbered(text: &str) -> Vec<(usize, &str)> {
    text.split_inclusive('\n')
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .collect()
}

fn strip_nl(l: &str) -> &str {
    let l = l.strip_suffix('\n').unwrap_or(l);
    l.strip_suffix('\r').unwrap_or(l)
}

/// Undoes git's C-style quoting of a path.
fn unquote(s: &str, line: usize) -> ToolResult<String> {
    let Some(inner) = s.strip_prefix('"').and_then(|r| r.strip_suffix('"')) else {
        return Ok(s.to_string());
    };
    let mut bytes = Vec::with_capacity(inner.len());
    let mut it = inner.bytes().peekable();
    while let Some(b) = it.next() {
        if b != b'\\' {
            bytes.push(b);
            continue;
        }
        let e = it
            .next()
            .ok_or_else(|| parse_err(line, "quoted path ends with a backslash"))?;
        match e {
            b'n' => bytes.push(b'\n'),
            b't' => bytes.push(b'\t'),
            b'r' => bytes.push(b'\r'),
            b'a' => bytes.push(7),
            b'b' => bytes.push(8),
            b'f' => bytes.push(12),
            b'v' => bytes.push(11),
            b'"' | b'\\' => bytes.push(e),
            b'0'..=b'7' => {
                let mut v = u32::from(e - b'0');
                for _ in 0..2 {
                    match it.peek() {
                        Some(&d @ b'0'..=b'7') => {
                            v = v * 8 + u32::from(d - b'0');
                            it.next();
                        }
                        _ => break,
                    }
                }
                bytes.push(
                    u8::try_from(v).map_err(|_| parse_err(line, "octal escape out of range"))?,
                );
            }
            other => {
                return Err(parse_err(
                    line,
                    format!("unknown escape \\{} in a quoted path", other as char),
                ))
            }
        }
    }
    String::from_utf8(bytes).map_err(|_| parse_err(line, "quoted path is not UTF-8"))
}

/// A path from a `---`/`+++` line: quotes undone, timestamp dropped; `None` for /dev/null.
fn header_path(raw: &str, line: usize) -> ToolResult<Option<String>> {
    let raw = strip_nl(raw);
    let p = if raw.starts_with('"') {
        // Find the closing quote that is not escaped.
        let mut close = None;
        let b = raw.as_bytes();
        let mut i = 1;
        while i < b.len() {
            match b[i] {
                b'\\' => i += 2,
                b'"' => {
                    close = Some(i + 1);
                    break;
                }
                _ => i += 1,
            }
        }
        let end = close.ok_or_else(|| parse_err(line, "unterminated quoted path"))?;
        unquote(&raw[..end], line)?
    } else {
        raw.split('\t').next().unwrap_or("").trim_end().to_string()
    };
    if p == "/dev/null" {
        return Ok(None);
    }
    if p.is_empty() {
        return Err(parse_err(line, "missing path"));
    }
    Ok(Some(p))
}

fn strip_prefix(p: Option<String>, prefix: &str) -> Option<String> {
    p.map(|p| p.strip_prefix(prefix).map(str::to_string).unwrap_or(p))
}

/// The two paths of a `diff --git` line, when they can be told apart.
fn git_line_paths(rest: &str, line: usize) -> ToolResult<Option<(String, String)>> {
    let rest = strip_nl(rest);
    if rest.starts_with('"') {
        let mut parts = Vec::new();
        let mut cur = rest;
        for _ in 0..2 {
            cur = cur.trim_start();
            if cur.starts_with('"') {
                let b = cur.as_bytes();
                let mut i = 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                let end = (i + 1).min(cur.len());
                parts.push(unquote(&cur[..end], line)?);
                cur = &cur[end..];
            } else {
                parts.push(cur.to_string());
                cur = "";
            }
        }
        return Ok(Some((parts[0].clone(), parts[1].clone())));
    }
    // Unquoted: "a/X b/X" where both halves name the same file is the common case.
    for (i, _) in rest.match_indices(' ') {
        let (a, b) = (&rest[..i], &rest[i + 1..]);
        if let (Some(x), Some(y)) = (a.split_once('/'), b.split_once('/')) {
            if x.1 == y.1 {
                return Ok(Some((a.to_string(), b.to_string())));
            }
        }
    }
    Ok(None)
}

/// True when a git header line ends in a symlink (120000) or submodule (160000) mode.
fn special_mode(h: &str) -> bool {
    h.ends_with(" 120000") || h.ends_with(" 160000")
}

fn drop_first_component(p: String) -> String {
    match p.split_once('/') {
        Some((_, rest)) if !rest.is_empty() => rest.to_string(),
        _ => p,
    }
}

/// Parses `@@ -a,b +c,d @@`; `None` ranges when the header has none.
fn hunk_ranges(l: &str, line: usize) -> ToolResult<Option<(usize, usize, usize, usize)>> {
    let body = strip_nl(l).trim_start_matches('@');
    let body = body.trim_start();
    if !body.starts_with('-') {
        return Ok(None);
    }
    let end = body
        .find("@@")
        .ok_or_else(|| parse_err(line, "hunk header is missing its closing @@"))?;
    let mut it = body[..end].split_whitespace();
    let (Some(old), Some(new)) = (it.next(), it.next()) else {
        return Err(parse_err(
            line,
            "hunk header needs -start,count +start,count",
        ));
    };
    let range = |s: &str, sign: char| -> ToolResult<(usize, usize)> {
        let s = s
            .strip_prefix(sign)
            .ok_or_else(|| parse_err(line, format!("expected {sign} range in hunk header")))?;
        let (a, b) = s.split_once(',').unwrap_or((s, "1"));
        let a = a
            .parse()
            .map_err(|_| parse_err(line, format!("bad line number '{a}' in hunk header")))?;
        let b = b
            .parse()
            .map_err(|_| parse_err(line, format!("bad line count '{b}' in hunk header")))?;
        Ok((a, b))
    };
    let (os, oc) = range(old, '-')?;
    let (ns, nc) = range(new, '+')?;
    Ok(Some((os, oc, ns, nc)))
}

fn is_hunk_line(l: &str) -> bool {
    matches!(l.as_bytes().first(), Some(b' ' | b'+' | b'-' | b'\\')) || l == "\n" || l == "\r\n"
}

/// Reads hunk lines starting at `i`; returns the hunk and the index after it.
fn read_hunk(
    lines: &[(usize, &str)],
    mut i: usize,
    counts: Option<(usize, usize)>,
) -> Result<(Hunk, usize), String> {
    let mut h = Hunk::default();
    let (mut old_left, mut new_left) = counts.unwrap_or((usize::MAX, usize::MAX));
    // 1 = last line went to old, 2 = to new, 3 = to both.
    let mut last = 0u8;
    while i < lines.len() {
        let (_, l) = lines[i];
        if counts.is_some() && old_left == 0 && new_left == 0 {
            // Only a no-newline marker may still follow.
            if l.starts_with('\\') {
                mark_no_newline(&mut h, last);
                i += 1;
            }
            break;
        }
        if counts.is_none() {
            if !is_hunk_line(l)
                || l.starts_with("--- ")
                    && lines.get(i + 1).is_some_and(|n| n.1.starts_with("+++ "))
            {
                break;
            }
            if (l == "\n" || l == "\r\n")
                && !lines[i + 1..]
                    .first()
                    .is_some_and(|n| is_hunk_line(n.1) && !n.1.starts_with("diff "))
            {
                // A blank line at the end of an uncounted hunk is a separator, not context.
                break;
            }
        }
        let (kind, text) = match l.as_bytes().first() {
            Some(b' ') => (3, &l[1..]),
            Some(b'-') => (1, &l[1..]),
            Some(b'+') => (2, &l[1..]),
            Some(b'\\') => {
                mark_no_newline(&mut h, last);
                i += 1;
                continue;
            }
            _ if l == "\n" || l == "\r\n" => (3, l),
            _ => {
                return Err(format!(
                    "unexpected line in hunk: {:?}",
                    strip_nl(l).chars().take(60).collect::<String>()
                ))
            }
        };
        let text = if text.is_empty() { "\n" } else { text };
        if kind & 1 != 0 {
            if old_left == 0 {
                return Err("hunk has more old lines than its header counts".into());
            }
            old_left = old_left.saturating_sub(1);
            h.old.push(text.to_string());
        }
        if kind & 2 != 0 {
            if new_left == 0 {
                return Err("hunk has more new lines than its header counts".into());
            }
            new_left = new_left.saturating_sub(1);
            h.new.push(text.to_string());
        }
        last = kind;
        i += 1;
    }
    if counts.is_some() && (old_left != 0 || new_left != 0) {
        return Err(format!(
            "hunk ends early: {old_left} old and {new_left} new lines missing"
        ));
    }
    Ok((h, i))
}

fn mark_no_newline(h: &mut Hunk, last: u8) {
    if last & 1 != 0 {
        if let Some(l) = h.old.last_mut() {
            trim_terminator(l);
        }
    }
    if last & 2 != 0 {
        if let Some(l) = h.new.last_mut() {
            trim_terminator(l);
        }
    }
}

fn trim_terminator(l: &mut String) {
    if l.ends_with('\n') {
        l.pop();
    }
}

fn parse_unified(text: &str) -> ToolResult<(Vec<FilePatch>, Vec<String>)> {
    let lines = numbered(text);
    let mut out: Vec<FilePatch> = Vec::new();
    let mut warnings = Vec::new();
    let mut cur: Option<FilePatch> = None;
    let mut i = 0;
    while i < lines.len() {
        let (n, l) = lines[i];
        if let Some(rest) = l.strip_prefix("diff --git ") {
            out.extend(cur.take());
            let mut fp = FilePatch {
                line: n,
                git: true,
                ..Default::default()
            };
            if let Some((a, b)) = git_line_paths(rest, n)? {
                fp.old_path = Some(drop_first_component(a));
                fp.new_path = Some(drop_first_component(b));
            }
            i += 1;
            while i < lines.len() {
                let (hn, h) = lines[i];
                let h = strip_nl(h);
                if let Some(p) = h
                    .strip_prefix("rename from ")
                    .or_else(|| h.strip_prefix("copy from "))
                {
                    if h.starts_with("copy") {
                        return Err(parse_err(
                            hn,
                            "copies are not supported; add the new file with its full content",
                        ));
                    }
                    fp.old_path = Some(unquote(p, hn)?);
                } else if let Some(p) = h.strip_prefix("rename to ") {
                    fp.new_path = Some(unquote(p, hn)?);
                } else if h.starts_with("new file mode ") {
                    fp.created = true;
                    fp.special_mode |= special_mode(h);
                } else if h.starts_with("deleted file mode ") {
                    fp.deleted = true;
                    fp.special_mode |= special_mode(h);
                } else if h.starts_with("old mode ") || h.starts_with("new mode ") {
                    fp.mode_change = true;
                    fp.special_mode |= special_mode(h);
                } else if h.starts_with("Binary files ") || h == "GIT binary patch" {
                    fp.binary = true;
                } else if h.starts_with("index ") && special_mode(h) {
                    fp.special_mode = true;
                } else if !(h.starts_with("index ")
                    || h.starts_with("similarity index ")
                    || h.starts_with("dissimilarity index "))
                {
                    break;
                }
                i += 1;
            }
            if fp.created {
                fp.old_path = None;
            }
            if fp.deleted {
                fp.new_path = None;
            }
            cur = Some(fp);
            continue;
        }
        if l.starts_with("--- ") && lines.get(i + 1).is_some_and(|x| x.1.starts_with("+++ ")) {
            let old = header_path(&l[4..], n)?;
            let new = header_path(&lines[i + 1].1[4..], n + 1)?;
            let fp = match cur.take() {
                Some(fp) if fp.git && fp.hunks.is_empty() && !fp.has_headers => fp,
                other => {
                    out.extend(other);
                    FilePatch {
                        line: n,
                        ..Default::default()
                    }
                }
            };
            let mut fp = fp;
            fp.has_headers = true;
            if fp.git {
                fp.old_path = old.map(drop_first_component);
                fp.new_path = new.map(drop_first_component);
            } else {
                fp.old_path = strip_prefix(old, "a/");
                fp.new_path = strip_prefix(new, "b/");
            }
            fp.created |= fp.old_path.is_none();
            fp.deleted |= fp.new_path.is_none();
            cur = Some(fp);
            i += 2;
            continue;
        }
        if l.starts_with("@@") {
            let Some(fp) = cur.as_mut() else {
                return Err(parse_err(
                    n,
                    "hunk before any file header (--- and +++ lines)",
                ));
            };
            let ranges = hunk_ranges(l, n)?;
            let counts = ranges.map(|(_, oc, _, nc)| (oc, nc));
            let (mut hunk, next) = match read_hunk(&lines, i + 1, counts) {
                Ok(r) => r,
                Err(msg) if counts.is_some() => {
                    let (h, next) =
                        read_hunk(&lines, i + 1, None).map_err(|_| parse_err(n, &msg))?;
                    warnings.push(format!(
                        "patch line {n}: {msg}; the hunk was read up to its last line instead"
                    ));
                    (h, next)
                }
                Err(msg) => return Err(parse_err(n, msg)),
            };
            if hunk.old.is_empty() && hunk.new.is_empty() {
                return Err(parse_err(n, "empty hunk"));
            }
            hunk.line = n;
            hunk.old_start = ranges.map(|(os, _, _, _)| os);
            fp.hunks.push(hunk);
            i = next;
            continue;
        }
        // Anything else between file patches is commentary (commit message, "index" lines of
        // plain diffs, and so on).
        i += 1;
    }
    out.extend(cur);
    for fp in &out {
        if fp.old_path.is_none() && fp.new_path.is_none() {
            return Err(parse_err(fp.line, "file header names no path"));
        }
    }
    Ok((out, warnings))
}

/// True when `m` (a trimmed line) starts a file's part or ends the envelope.
fn is_file_marker(m: &str) -> bool {
    m == "*** End Patch"
        || ["*** Add File: ", "*** Delete File: ", "*** Update File: "]
            .iter()
            .any(|p| m.starts_with(p))
}

fn parse_envelope(text: &str) -> ToolResult<Vec<FilePatch>> {
    let lines = numbered(text);
    let mut i = lines
        .iter()
        .position(|(_, l)| strip_nl(l).trim() == "*** Begin Patch")
        .map_or(0, |p| p + 1);
    let mut out = Vec::new();
    let mut ended = false;
    while i < lines.len() {
        let (n, l) = lines[i];
        let s = strip_nl(l).trim();
        if s == "*** End Patch" {
            ended = true;
            break;
        }
        if s.trim().is_empty() {
            i += 1;
            continue;
        }
        if let Some(p) = s.strip_prefix("*** Add File: ") {
            let mut fp = FilePatch {
                line: n,
                envelope: true,
                created: true,
                new_path: Some(p.trim().to_string()),
                ..Default::default()
            };
            let mut h = Hunk {
                line: n,
                ..Default::default()
            };
            i += 1;
            while i < lines.len() && lines[i].1.starts_with('+') {
                h.new.push(lines[i].1[1..].to_string());
                ensure_nl(h.new.last_mut());
                i += 1;
            }
            fp.hunks.push(h);
            out.push(fp);
        } else if let Some(p) = s.strip_prefix("*** Delete File: ") {
            out.push(FilePatch {
                line: n,
                envelope: true,
                deleted: true,
                old_path: Some(p.trim().to_string()),
                ..Default::default()
            });
            i += 1;
        } else if let Some(p) = s.strip_prefix("*** Update File: ") {
            let mut fp = FilePatch {
                line: n,
                envelope: true,
                old_path: Some(p.trim().to_string()),
                new_path: Some(p.trim().to_string()),
                ..Default::default()
            };
            i += 1;
            if let Some(to) = lines
                .get(i)
                .and_then(|(_, l)| strip_nl(l).trim().strip_prefix("*** Move to: "))
            {
                fp.new_path = Some(to.trim().to_string());
                i += 1;
            }
            let mut cur: Option<Hunk> = None;
            while i < lines.len() {
                let (hn, l) = lines[i];
                let s = strip_nl(l);
                let m = s.trim();
                if s.starts_with("*** ") && m != "*** End of File" || is_file_marker(m) {
                    break;
                }
                if m == "*** End of File" {
                    let h = cur.get_or_insert_with(|| Hunk {
                        line: hn,
                        ..Default::default()
                    });
                    h.at_eof = true;
                    i += 1;
                    continue;
                }
                if let Some(anchor) = s.strip_prefix("@@") {
                    fp.hunks.extend(
                        cur.take()
                            .filter(|h| !h.old.is_empty() || !h.new.is_empty()),
                    );
                    let anchor = anchor.trim();
                    cur = Some(Hunk {
                        line: hn,
                        anchor: (!anchor.is_empty()).then(|| anchor.to_string()),
                        ..Default::default()
                    });
                    i += 1;
                    continue;
                }
                let h = cur.get_or_insert_with(|| Hunk {
                    line: hn,
                    ..Default::default()
                });
                let (kind, text) = match l.as_bytes().first() {
                    Some(b' ') => (3, &l[1..]),
                    Some(b'-') => (1, &l[1..]),
                    Some(b'+') => (2, &l[1..]),
                    _ if s.is_empty() => (3, "\n"),
                    _ => {
                        return Err(parse_err(
                            hn,
                            format!(
                                "expected a line starting with ' ', '-' or '+', found {:?}",
                                s.chars().take(60).collect::<String>()
                            ),
                        ))
                    }
                };
                let mut text = text.to_string();
                if !text.ends_with('\n') {
                    text.push('\n');
                }
                if kind & 1 != 0 {
                    h.old.push(text.clone());
                }
                if kind & 2 != 0 {
                    h.new.push(text);
                }
                i += 1;
            }
            fp.hunks.extend(
                cur.take()
                    .filter(|h| !h.old.is_empty() || !h.new.is_empty() || h.at_eof),
            );
            if fp.hunks.is_empty() && fp.old_path == fp.new_path {
                return Err(parse_err(n, "Update File has no changes"));
            }
            out.push(fp);
        } else {
            return Err(parse_err(n, format!("expected *** Add File, *** Delete File, *** Update File or *** End Patch, found {:?}", s.chars().take(60).collect::<String>())));
        }
    }
    if !ended {
        return Err(parse_err(
            lines.len().max(1),
            "the patch has no *** End Patch line",
        ));
    }
    Ok(out)
}

fn ensure_nl(l: Option<&mut String>) {
    if let Some(l) = l {
        if !l.ends_with('\n') {
            l.push('\n');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_diff_with_create_delete_rename_and_no_newline() {
        let p = "diff --git a/src/a.rs b/src/a.rs\nindex 1..2 100644\n--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\n\
diff --git a/new.txt b/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hello\n\
diff --git a/old.txt b/old.txt\ndeleted file mode 100644\n--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n\
diff --git a/x y.txt b/z.txt\nsimilarity index 100%\nrename from x y.txt\nrename to z.txt\n\
diff --git a/empty b/empty\nnew file mode 100644\nindex 0000000..e69de29\n";
        let (fps, w) = parse(p).unwrap();
        assert!(w.is_empty());
        assert_eq!(fps.len(), 5);
        assert_eq!(fps[0].old_path.as_deref(), Some("src/a.rs"));
        assert_eq!(fps[0].hunks[0].old, ["a\n", "b\n"]);
        assert_eq!(fps[0].hunks[0].new, ["a\n", "c"]);
        assert_eq!(fps[0].hunks[0].old_start, Some(1));
        assert!(fps[1].created && fps[1].old_path.is_none());
        assert!(fps[2].deleted && fps[2].new_path.is_none());
        assert_eq!(
            (fps[3].old_path.as_deref(), fps[3].new_path.as_deref()),
            (Some("x y.txt"), Some("z.txt"))
        );
        assert!(fps[4].created && fps[4].hunks.is_empty());
    }

    #[test]
    fn symlink_and_submodule_modes_are_flagged() {
        let (fps, _) = parse("diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+/etc/passwd\n\\ No newline at end of file\n").unwrap();
        assert!(fps[0].special_mode);
        let (fps, _) = parse("diff --git a/m b/m\nindex 1234567..89abcde 160000\n--- a/m\n+++ b/m\n@@ -1 +1 @@\n-Subproject commit 1\n+Subproject commit 2\n").unwrap();
        assert!(fps[0].special_mode);
    }

    #[test]
    fn quoted_paths_and_plain_diffs() {
        let p = "--- \"a/sp ace\\t\\303\\251.txt\"\n+++ \"b/sp ace\\t\\303\\251.txt\"\n@@ -1 +1 @@\n-x\n+y\n";
        let (fps, _) = parse(p).unwrap();
        assert_eq!(fps[0].new_path.as_deref(), Some("sp ace\té.txt"));
        let p = "--- src/x.c\t2020-01-01 00:00:00\n+++ src/x.c\t2020-01-02 00:00:00\n@@ -3,1 +3,1 @@\n-a\n+b\n";
        let (fps, _) = parse(p).unwrap();
        assert_eq!(fps[0].old_path.as_deref(), Some("src/x.c"));
    }

    #[test]
    fn omitted_counts_and_headerless_hunks() {
        let (fps, _) = parse("--- a/f\n+++ b/f\n@@ -2 +2 @@\n-x\n+y\n").unwrap();
        assert_eq!(
            (fps[0].hunks[0].old.len(), fps[0].hunks[0].new.len()),
            (1, 1)
        );
        let (fps, _) = parse("--- a/f\n+++ b/f\n@@\n a\n-x\n+y\n\n b\n").unwrap();
        assert_eq!(fps[0].hunks[0].old, ["a\n", "x\n", "\n", "b\n"]);
        assert_eq!(fps[0].hunks[0].old_start, None);
    }

    #[test]
    fn miscounted_hunks_are_read_to_their_end_with_a_warning() {
        let (fps, w) = parse("--- a/f\n+++ b/f\n@@ -1,5 +1,5 @@\n a\n-x\n+y\n").unwrap();
        assert_eq!(fps[0].hunks[0].old, ["a\n", "x\n"]);
        assert_eq!(w.len(), 1);
    }

    #[test]
    fn envelope_form() {
        let p = "*** Begin Patch\n*** Add File: docs/new.md\n+# New\n+text\n*** Update File: src/a.rs\n*** Move to: src/b.rs\n@@ fn main() {\n-    old();\n+    new();\n*** End of File\n*** Delete File: gone.txt\n*** End Patch\n";
        let fps = parse(p).unwrap().0;
        assert_eq!(fps.len(), 3);
        assert_eq!(fps[0].hunks[0].new, ["# New\n", "text\n"]);
        assert_eq!(fps[1].new_path.as_deref(), Some("src/b.rs"));
        let h = &fps[1].hunks[0];
        assert_eq!(h.anchor.as_deref(), Some("fn main() {"));
        assert!(h.at_eof);
        assert_eq!(h.old, ["    old();\n"]);
        assert!(fps[2].deleted);
    }

    #[test]
    fn envelope_markers_padded_with_spaces_are_accepted() {
        // Regression: " *** Begin Patch", "*** End Patch " and "  *** Update File: x" were
        // refused (or, with a trailing space on the begin marker, parsed as a unified diff).
        let p = " *** Begin Patch \n  *** Update File: src/a.rs  \n@@ fn f() {\n-    x  \n+    y\t\n *** End of File \n\t*** Add File: b.txt\n+b\n*** Delete File: c.txt \n*** End Patch \n";
        let fps = parse(p).unwrap().0;
        assert_eq!(fps.len(), 3);
        assert_eq!(fps[0].old_path.as_deref(), Some("src/a.rs"));
        // Hunk bodies are kept as written, trailing whitespace included.
        assert_eq!(fps[0].hunks[0].old, ["    x  \n"]);
        assert_eq!(fps[0].hunks[0].new, ["    y\t\n"]);
        assert!(fps[0].hunks[0].at_eof);
        assert_eq!(fps[1].new_path.as_deref(), Some("b.txt"));
        assert_eq!(fps[2].old_path.as_deref(), Some("c.txt"));
        let fps = parse(
            "*** Begin Patch \n*** Update File: a\n  *** Move to: b \n@@\n-x\n+y\n*** End Patch",
        )
        .unwrap()
        .0;
        assert_eq!(fps[0].new_path.as_deref(), Some("b"));
    }

    #[test]
    fn malformed_patches_name_the_line() {
        for (p, line) in [
            ("@@ -1 +1 @@\n-a\n+b\n", "1"),
            ("--- a/f\n+++ b/f\n@@ -x +1 @@\n", "3"),
            ("--- a/f\n+++ b/f\n@@ -1,1 +1,1\n-a\n+b\n", "3"),
            ("*** Begin Patch\n*** Frobnicate: x\n*** End Patch\n", "2"),
            ("*** Begin Patch\n*** Add File: x\n+a\n", "3"),
            ("just some text\n", "1"),
        ] {
            let e = parse(p).unwrap_err();
            assert_eq!(e.code, ErrorCode::PatchParseError, "{p}");
            assert_eq!(
                e.details.get("line").map(String::as_str),
                Some(line),
                "{p}: {}",
                e.message
            );
        }
    }

    #[test]
    fn no_prefix_of_a_valid_patch_panics() {
        let p = "diff --git a/src/a.rs b/src/a.rs\n--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\n*** Begin Patch\n*** Update File: \"q\\\"\n@@\n";
        for end in 0..=p.len() {
            if p.is_char_boundary(end) {
                let _ = parse(&p[..end]);
            }
        }
    }
}
