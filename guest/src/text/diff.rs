//! Unified diffs in git's format (`diff --git`, `new file mode`, `/dev/null`,
//! `\ No newline at end of file`), so that what the tools show can be applied by `git apply`
//! and by `apply_patch`.

use imara_diff::{Algorithm, Diff, InternedInput};

/// Lines of context around each change.
pub const CONTEXT: u32 = 3;

/// A file's diff and its line counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileDiff {
    pub text: String,
    pub insertions: u32,
    pub deletions: u32,
}

/// The changed line ranges from `old` to `new` (Myers, as git by default, with its slider
/// heuristics), as hunks of whole-file line numbers. Lines both texts share at their start
/// and end are set aside first, as git does: an edit of one line in a large file then
/// diffs a few lines, not all of them.
fn line_changes(old: &str, new: &str) -> Vec<imara_diff::Hunk> {
    let (head, head_lines, tail) = common_ends(old.as_bytes(), new.as_bytes());
    let old_mid = &old[head..old.len() - tail];
    let new_mid = &new[head..new.len() - tail];
    let input = InternedInput::new(old_mid, new_mid);
    let mut diff = Diff::compute(Algorithm::Myers, &input);
    diff.postprocess_lines(&input);
    diff.hunks()
        .map(|h| imara_diff::Hunk {
            before: h.before.start + head_lines..h.before.end + head_lines,
            after: h.after.start + head_lines..h.after.end + head_lines,
        })
        .collect()
}

/// The common start of `a` and `b` as whole lines (bytes, lines) and their common end as
/// whole lines (bytes), never overlapping the start.
fn common_ends(a: &[u8], b: &[u8]) -> (usize, u32, usize) {
    let same = crate::text::bytes::common_prefix(a, b);
    // Back to the end of the last whole common line.
    let head = memchr::memrchr(b'\n', &a[..same]).map_or(0, |i| i + 1);
    let head_lines = memchr::memchr_iter(b'\n', &a[..head]).count() as u32;
    let room = a.len().min(b.len()) - head;
    let mut tail = crate::text::bytes::common_suffix(a, b, room);
    // Forward to the start of the first whole common line: the byte before the tail
    // must end a line in both texts (it is the same byte in both only when inside the
    // common part, so look at each).
    while tail > 0 && !(ends_line(a, a.len() - tail) && ends_line(b, b.len() - tail)) {
        tail -= 1;
    }
    (head, head_lines, tail)
}

/// True when position `i` of `t` starts a line.
fn ends_line(t: &[u8], i: usize) -> bool {
    i == 0 || t[i - 1] == b'\n'
}

/// The lines of `text`, each with its line break (like `split_inclusive('\n')`, found
/// with SIMD).
fn split_lines(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in memchr::memchr_iter(b'\n', text.as_bytes()) {
        out.push(&text[start..=i]);
        start = i + 1;
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

fn count(changes: &[imara_diff::Hunk]) -> (u32, u32) {
    changes.iter().fold((0, 0), |(ins, del), h| {
        (ins + h.after.len() as u32, del + h.before.len() as u32)
    })
}

/// `start,count` as unified diffs write a range (`count` left out when it is 1).
fn range(start: u32, count: u32) -> String {
    let first = if count == 0 { start } else { start + 1 };
    if count == 1 {
        first.to_string()
    } else {
        format!("{first},{count}")
    }
}

fn push_line(out: &mut String, prefix: char, line: &str) {
    out.push(prefix);
    out.push_str(line);
    if !line.ends_with('\n') {
        out.push_str("\n\\ No newline at end of file\n");
    }
}

/// The hunks of a unified diff of `old` and `new`, with line counts.
fn hunks(old: &str, new: &str) -> (String, u32, u32) {
    let changes = line_changes(old, new);
    let old_lines = split_lines(old);
    let new_lines = split_lines(new);
    let mut out = String::new();
    let mut i = 0;
    while i < changes.len() {
        // Changes closer than twice the context share one hunk.
        let mut j = i;
        while j + 1 < changes.len()
            && changes[j + 1].before.start - changes[j].before.end <= 2 * CONTEXT
        {
            j += 1;
        }
        let lead = changes[i].before.start.min(CONTEXT);
        let trail = (old_lines.len() as u32 - changes[j].before.end).min(CONTEXT);
        let old_start = changes[i].before.start - lead;
        let new_start = changes[i].after.start - lead;
        let old_count = changes[j].before.end + trail - old_start;
        let new_count = changes[j].after.end + trail - new_start;
        out.push_str(&format!(
            "@@ -{} +{} @@\n",
            range(old_start, old_count),
            range(new_start, new_count)
        ));
        let mut pos = old_start as usize;
        for c in &changes[i..=j] {
            for l in &old_lines[pos..c.before.start as usize] {
                push_line(&mut out, ' ', l);
            }
            for l in &old_lines[c.before.start as usize..c.before.end as usize] {
                push_line(&mut out, '-', l);
            }
            for l in &new_lines[c.after.start as usize..c.after.end as usize] {
                push_line(&mut out, '+', l);
            }
            pos = c.before.end as usize;
        }
        for l in &old_lines[pos..(changes[j].before.end + trail) as usize] {
            push_line(&mut out, ' ', l);
        }
        i = j + 1;
    }
    let (ins, del) = count(&changes);
    (out, ins, del)
}

/// What one side of a diff holds.
#[derive(Debug, Clone)]
pub enum Side<'a> {
    /// The file does not exist on this side.
    Absent,
    /// The file's text (decoded, when it is in another encoding than UTF-8).
    Text(std::borrow::Cow<'a, str>),
    /// Content that is shown only as "differ" (binary or secret).
    Opaque,
}

/// The diff of one file from `old` (at `old_path`) to `new` (at `new_path`).
pub fn file_diff(old_path: &str, new_path: &str, old: Side<'_>, new: Side<'_>) -> FileDiff {
    let mut text = format!("diff --git a/{old_path} b/{new_path}\n");
    if matches!(old, Side::Absent) {
        text.push_str("new file mode 100644\n");
    }
    if matches!(new, Side::Absent) {
        text.push_str("deleted file mode 100644\n");
    }
    if old_path != new_path {
        text.push_str(&format!("rename from {old_path}\nrename to {new_path}\n"));
    }
    let a = if matches!(old, Side::Absent) {
        "/dev/null".to_string()
    } else {
        format!("a/{old_path}")
    };
    let b = if matches!(new, Side::Absent) {
        "/dev/null".to_string()
    } else {
        format!("b/{new_path}")
    };
    let (old_text, new_text) = match (old, new) {
        (Side::Opaque, _) | (_, Side::Opaque) => {
            text.push_str(&format!("Binary files {a} and {b} differ\n"));
            return FileDiff {
                text,
                insertions: 0,
                deletions: 0,
            };
        }
        (o, n) => (side_text(o), side_text(n)),
    };
    let (old_text, new_text) = (old_text.as_ref(), new_text.as_ref());
    if crate::text::bytes::eq(old_text.as_bytes(), new_text.as_bytes()) {
        return FileDiff {
            text: if old_path != new_path {
                text
            } else {
                String::new()
            },
            insertions: 0,
            deletions: 0,
        };
    }
    let (body, insertions, deletions) = hunks(old_text, new_text);
    text.push_str(&format!("--- {a}\n+++ {b}\n"));
    text.push_str(&body);
    FileDiff {
        text,
        insertions,
        deletions,
    }
}

fn side_text(s: Side<'_>) -> std::borrow::Cow<'_, str> {
    match s {
        Side::Text(t) => t,
        _ => std::borrow::Cow::Borrowed(""),
    }
}

/// Cuts a diff to at most `max` bytes at a line boundary; true when it was cut.
pub fn bound(text: &mut String, max: usize) -> bool {
    if text.len() <= max {
        return false;
    }
    let cut = text[..max].rfind('\n').map_or(0, |i| i + 1);
    text.truncate(cut);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> std::borrow::Cow<'_, str> {
        std::borrow::Cow::Borrowed(s)
    }

    #[test]
    fn modification_in_git_format() {
        let d = file_diff(
            "a.txt",
            "a.txt",
            Side::Text(t("one\ntwo\nthree\n")),
            Side::Text(t("one\n2\nthree\n")),
        );
        assert_eq!(
            d.text,
            "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"
        );
        assert_eq!((d.insertions, d.deletions), (1, 1));
    }

    #[test]
    fn creation_deletion_and_missing_newline() {
        let d = file_diff("n.txt", "n.txt", Side::Absent, Side::Text(t("x\ny")));
        assert!(d.text.starts_with("diff --git a/n.txt b/n.txt\nnew file mode 100644\n--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+x\n+y\n\\ No newline at end of file\n"), "{}", d.text);
        let d = file_diff("n.txt", "n.txt", Side::Text(t("x\n")), Side::Absent);
        assert!(
            d.text.contains(
                "deleted file mode 100644\n--- a/n.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
            ),
            "{}",
            d.text
        );
    }

    #[test]
    fn opaque_content_is_never_shown() {
        let d = file_diff("k.pem", "k.pem", Side::Opaque, Side::Absent);
        assert!(d.text.contains("Binary files a/k.pem and /dev/null differ"));
    }

    #[test]
    fn bounding_cuts_at_a_line() {
        let mut t = "aaa\nbbb\nccc\n".to_string();
        assert!(bound(&mut t, 9));
        assert_eq!(t, "aaa\nbbb\n");
        assert!(!bound(&mut t, 100));
    }
}
