//! Unified diffs in git's format (`diff --git`, `new file mode`, `/dev/null`,
//! `\ No newline at end of file`), so that what the tools show can be applied by `git apply`
//! and by `apply_patch`.

use similar::{DiffOp, TextDiff};

/// Lines of context around each change.
pub const CONTEXT: usize = 3;

/// A file's diff and its line counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileDiff {
    pub text: String,
    pub insertions: u32,
    pub deletions: u32,
}

/// Line counts of a change from `old` to `new`.
pub fn stats(old: &str, new: &str) -> (u32, u32) {
    let diff = TextDiff::configure()
        .algorithm(similar::Algorithm::Myers)
        .diff_lines(old, new);
    count_ops(diff.ops())
}

fn count_ops(ops: &[DiffOp]) -> (u32, u32) {
    let (mut ins, mut del) = (0usize, 0usize);
    for op in ops {
        match *op {
            DiffOp::Insert { new_len, .. } => ins += new_len,
            DiffOp::Delete { old_len, .. } => del += old_len,
            DiffOp::Replace {
                old_len, new_len, ..
            } => {
                ins += new_len;
                del += old_len;
            }
            DiffOp::Equal { .. } => {}
        }
    }
    (ins as u32, del as u32)
}

/// What one side of a diff holds.
#[derive(Debug, Clone, Copy)]
pub enum Side<'a> {
    /// The file does not exist on this side.
    Absent,
    /// UTF-8 text.
    Text(&'a str),
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
    if old_text == new_text {
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
    let diff = TextDiff::configure()
        .algorithm(similar::Algorithm::Myers)
        .diff_lines(old_text, new_text);
    let (insertions, deletions) = count_ops(diff.ops());
    text.push_str(&format!("--- {a}\n+++ {b}\n"));
    let mut udiff = diff.unified_diff();
    udiff.context_radius(CONTEXT).missing_newline_hint(true);
    for hunk in udiff.iter_hunks() {
        text.push_str(&hunk.to_string());
    }
    FileDiff {
        text,
        insertions,
        deletions,
    }
}

fn side_text<'a>(s: Side<'a>) -> &'a str {
    match s {
        Side::Text(t) => t,
        _ => "",
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

    #[test]
    fn modification_in_git_format() {
        let d = file_diff(
            "a.txt",
            "a.txt",
            Side::Text("one\ntwo\nthree\n"),
            Side::Text("one\n2\nthree\n"),
        );
        assert_eq!(
            d.text,
            "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"
        );
        assert_eq!((d.insertions, d.deletions), (1, 1));
    }

    #[test]
    fn creation_deletion_and_missing_newline() {
        let d = file_diff("n.txt", "n.txt", Side::Absent, Side::Text("x\ny"));
        assert!(d.text.starts_with("diff --git a/n.txt b/n.txt\nnew file mode 100644\n--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+x\n+y\n\\ No newline at end of file\n"), "{}", d.text);
        let d = file_diff("n.txt", "n.txt", Side::Text("x\n"), Side::Absent);
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
