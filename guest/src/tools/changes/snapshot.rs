//! A snapshot: what every visible file of a tree was at one moment (metadata, and the
//! sha256 of the content where the policy lets it be read), in a compact line form, and
//! the difference between two snapshots.
//!
//! The text form is `ftsnap1 <taken_ns>` on the first line, then one line per file:
//! `<type> <size> <mtime_ns> <ctime_ns> <inode> <shown> <sha256> <path>`, where an unknown
//! number or a missing sha256 is `-`, and the path (a logical path: no control characters,
//! so no line break) runs to the end of the line. Files are in path order (byte order of
//! the path text), each once.
//!
//! A stored snapshot is read in place ([`Snapshot::decode`] borrows each path from the
//! text), since a call reads the earlier snapshot only to walk it once beside the new one.

use crate::api::{Change, ChangeKind};
use crate::fs::hash::is_sha256;

/// What of a file's change may be reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// Size and sha256: a regular file the policy lets be read, hashed.
    Content,
    /// Size only: a regular file too large to hash.
    Size,
    /// Nothing but the name's appearing and going: a secret (by name or by content) or a
    /// file with several hard links. Its modifications are never reported.
    Name,
    /// A symlink: appearing, going and being replaced (no size, no hash).
    Link,
}

impl Shown {
    fn letter(self) -> char {
        match self {
            Shown::Content => 'c',
            Shown::Size => 's',
            Shown::Name => 'n',
            Shown::Link => 'l',
        }
    }

    fn from_letter(c: &str) -> Option<Self> {
        Some(match c {
            "c" => Shown::Content,
            "s" => Shown::Size,
            "n" => Shown::Name,
            "l" => Shown::Link,
            _ => return None,
        })
    }
}

/// A sha256 as its 64 lowercase hex digits, kept inline (a snapshot holds one per file).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct HexDigest([u8; 64]);

impl HexDigest {
    /// `hex` if it is 64 hex digits (of either case; kept in lowercase).
    pub fn parse(hex: &str) -> Option<Self> {
        if !is_sha256(hex) {
            return None;
        }
        let mut digits = [0; 64];
        digits.copy_from_slice(hex.as_bytes());
        digits.make_ascii_lowercase();
        Some(HexDigest(digits))
    }

    pub fn as_str(&self) -> &str {
        // Only `parse` makes one, from ASCII digits.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

impl std::fmt::Debug for HexDigest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One file of a snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rec {
    pub size: u64,
    /// Modification time, nanoseconds since the Unix epoch.
    pub mtime: Option<u64>,
    /// Status change time, nanoseconds since the Unix epoch.
    pub ctime: Option<u64>,
    pub inode: Option<u64>,
    pub shown: Shown,
    /// The content's sha256, for [`Shown::Content`] only.
    pub sha256: Option<HexDigest>,
}

impl Rec {
    /// True when the metadata that "unchanged" is judged by is the same: size,
    /// modification time, status change time and inode.
    pub fn same_metadata(&self, other: &Rec) -> bool {
        self.size == other.size
            && self.mtime == other.mtime
            && self.ctime == other.ctime
            && self.inode == other.inode
            && (self.shown == Shown::Link) == (other.shown == Shown::Link)
    }
}

/// Every visible file of a tree at `taken` (nanoseconds since the Unix epoch, read before
/// the first file was looked at), in path order; a path is owned (`String`) in a snapshot
/// just taken and borrowed from the stored text (`&str`) in one read back.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot<P = String> {
    pub taken: u64,
    pub files: Vec<(P, Rec)>,
}

const MAGIC: &str = "ftsnap1";

/// Writes `v`, or `-` for an unknown number, and a space.
fn put_num(out: &mut String, v: Option<u64>) {
    use std::fmt::Write;
    match v {
        // Writing to a String cannot fail.
        Some(n) => drop(write!(out, "{n} ")),
        None => out.push_str("- "),
    }
}

/// A number of the text form: decimal digits (at most `u64::MAX`), or `-` for unknown.
fn parse_num(s: &str) -> Result<Option<u64>, ()> {
    if s == "-" {
        return Ok(None);
    }
    parse_u64(s).map(Some).ok_or(())
}

/// Decimal digits only (no sign, unlike `str::parse`), checked for overflow only past the
/// 19 digits that always fit.
fn parse_u64(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    if b.len() < 20 {
        return Some(b.iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0')));
    }
    b.iter().try_fold(0u64, |n, d| {
        n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
    })
}

/// The next space-separated field of `rest`, which moves past it.
fn field<'a>(rest: &mut &'a str) -> Option<&'a str> {
    let i = rest.bytes().position(|c| c == b' ')?;
    let (f, tail) = (&rest[..i], &rest[i + 1..]);
    *rest = tail;
    Some(f)
}

/// One line of the text form, parsed.
fn parse_line(line: &str) -> Option<(&str, Rec)> {
    let mut rest = line;
    if field(&mut rest)? != "f" {
        return None;
    }
    let size = parse_u64(field(&mut rest)?)?;
    let mtime = parse_num(field(&mut rest)?).ok()?;
    let ctime = parse_num(field(&mut rest)?).ok()?;
    let inode = parse_num(field(&mut rest)?).ok()?;
    let shown = Shown::from_letter(field(&mut rest)?)?;
    let sha256 = match field(&mut rest)? {
        "-" => None,
        s => Some(HexDigest::parse(s)?),
    };
    // The path runs to the end of the line.
    let path = rest;
    if path.is_empty() || path.chars().any(char::is_control) {
        return None;
    }
    let rec = Rec {
        size,
        mtime,
        ctime,
        inode,
        shown,
        sha256,
    };
    Some((path, rec))
}

impl<P: AsRef<str>> Snapshot<P> {
    /// The text form (see the module docs).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = format!("{MAGIC} {}\n", self.taken);
        out.reserve(self.files.len() * 120);
        for (path, r) in &self.files {
            out.push_str("f ");
            put_num(&mut out, Some(r.size));
            put_num(&mut out, r.mtime);
            put_num(&mut out, r.ctime);
            put_num(&mut out, r.inode);
            out.push(r.shown.letter());
            out.push(' ');
            out.push_str(r.sha256.as_ref().map_or("-", HexDigest::as_str));
            out.push(' ');
            out.push_str(path.as_ref());
            out.push('\n');
        }
        out.into_bytes()
    }

    /// True when `other` tells the same as this snapshot: the same files, equal records,
    /// except that a name-only file's metadata is not compared (a new token for a tree
    /// whose only change is a secret's would tell that it moved).
    pub fn same_visible<Q: AsRef<str>>(&self, other: &Snapshot<Q>) -> bool {
        self.files.len() == other.files.len()
            && self
                .files
                .iter()
                .zip(&other.files)
                .all(|((pa, a), (pb, b))| {
                    pa.as_ref() == pb.as_ref()
                        && (a == b || (a.shown == Shown::Name && b.shown == Shown::Name))
                })
    }
}

impl<'a> Snapshot<&'a str> {
    /// Parses the text form, borrowing each path from `bytes`; `None` for anything else
    /// (also for paths out of order or repeated).
    pub fn decode(bytes: &'a [u8]) -> Option<Self> {
        let text = std::str::from_utf8(bytes).ok()?;
        let mut lines = text.split_terminator('\n');
        let head = lines.next()?;
        let taken = parse_u64(head.strip_prefix(MAGIC)?.strip_prefix(' ')?)?;
        let mut files: Vec<(&str, Rec)> = Vec::new();
        for line in lines {
            let (path, rec) = parse_line(line)?;
            if files.last().is_some_and(|(last, _)| *last >= path) {
                return None;
            }
            files.push((path, rec));
        }
        Some(Snapshot { taken, files })
    }
}

/// What may be told of a file that appeared.
fn created(path: &str, r: &Rec) -> Change {
    let content = r.shown == Shown::Content;
    Change {
        path: path.to_string(),
        change: ChangeKind::Created,
        size: matches!(r.shown, Shown::Content | Shown::Size).then_some(r.size),
        sha256: if content {
            r.sha256.map(|h| h.as_str().to_string())
        } else {
            None
        },
    }
}

/// Whether a file present in both snapshots changed, as far as may be told.
fn modified(old: &Rec, new: &Rec) -> bool {
    match (old.shown, new.shown) {
        // A secret stays a secret: what it holds, and whether that moved, is never told.
        (Shown::Name, Shown::Name) => false,
        (a, b) if a != b => true,
        (Shown::Content, Shown::Content) => old.sha256 != new.sha256,
        _ => !old.same_metadata(new),
    }
}

/// The changes from `old` to `new`, in path order. A rename is a deletion of the old path
/// and a creation of the new one.
pub fn diff<P: AsRef<str>, Q: AsRef<str>>(old: &Snapshot<P>, new: &Snapshot<Q>) -> Vec<Change> {
    let mut out = Vec::new();
    let mut a = old.files.iter().map(|(p, r)| (p.as_ref(), r)).peekable();
    let mut b = new.files.iter().map(|(p, r)| (p.as_ref(), r)).peekable();
    loop {
        match (a.peek(), b.peek()) {
            (None, None) => break,
            (Some((pa, _)), Some((pb, rb))) if pb < pa => {
                out.push(created(pb, rb));
                b.next();
            }
            (None, Some((pb, rb))) => {
                out.push(created(pb, rb));
                b.next();
            }
            (Some((pa, ra)), Some((pb, rb))) if pa == pb => {
                if modified(ra, rb) {
                    let mut c = created(pb, rb);
                    c.change = ChangeKind::Modified;
                    out.push(c);
                }
                a.next();
                b.next();
            }
            (Some((pa, _)), _) => {
                out.push(Change {
                    path: pa.to_string(),
                    change: ChangeKind::Deleted,
                    size: None,
                    sha256: None,
                });
                a.next();
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn rec(size: u64, mtime: u64, shown: Shown, sha: Option<&str>) -> Rec {
        Rec {
            size,
            mtime: Some(mtime),
            ctime: Some(mtime),
            inode: Some(7),
            shown,
            sha256: sha.map(|h| HexDigest::parse(h).unwrap()),
        }
    }

    /// A snapshot of `files`, put in path order.
    fn snap(taken: u64, mut files: Vec<(&str, Rec)>) -> Snapshot {
        files.sort_by_key(|(p, _)| *p);
        Snapshot {
            taken,
            files: files.into_iter().map(|(p, r)| (p.to_string(), r)).collect(),
        }
    }

    const A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    const B: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

    #[test]
    fn the_text_form_round_trips_and_refuses_junk() {
        let s = snap(
            42,
            vec![
                ("a b/c d.txt", rec(3, 1, Shown::Content, Some(A))),
                (
                    "x",
                    Rec {
                        mtime: None,
                        ctime: None,
                        inode: None,
                        ..rec(0, 0, Shown::Link, None)
                    },
                ),
                (
                    "big",
                    Rec {
                        size: u64::MAX,
                        mtime: Some(0),
                        ..rec(0, 0, Shown::Size, None)
                    },
                ),
            ],
        );
        let bytes = s.encode();
        let back = Snapshot::decode(&bytes).unwrap();
        assert!(back.same_visible(&s) && s.same_visible(&back));
        assert_eq!(back.taken, 42);
        assert_eq!(back.encode(), bytes);
        assert_eq!(HexDigest::parse(&A.to_uppercase()), HexDigest::parse(A));
        for junk in [
            &b""[..],
            b"ftsnap2 1\n",
            b"ftsnap1 x\n",
            b"ftsnap1 1\nf 1 - - - c zz p\n",
            b"ftsnap1 1\nf 1 - - - q - p\n",
            b"ftsnap1 1\nf 1 - - - c -\n",
            b"ftsnap1 1\nf +1 - - - s - p\n",
            b"ftsnap1 1\nf 18446744073709551616 - - - s - p\n",
            b"ftsnap1 1\nf 1 - - - s - a\x01b\n",
            b"ftsnap1 1\nf 1 - - - s - \n",
            // Out of order, and twice.
            b"ftsnap1 1\nf 1 - - - s - b\nf 1 - - - s - a\n",
            b"ftsnap1 1\nf 1 - - - s - a\nf 1 - - - s - a\n",
        ] {
            assert!(Snapshot::decode(junk).is_none(), "{junk:?}");
        }
        // The same lines in order: a control for the last two.
        assert!(Snapshot::decode(b"ftsnap1 1\nf 1 - - - s - a\nf 1 - - - s - b\n").is_some());
    }

    #[test]
    fn the_diff_tells_only_what_may_be_told() {
        let old = snap(
            0,
            vec![
                ("same", rec(1, 1, Shown::Content, Some(A))),
                ("edit", rec(1, 1, Shown::Content, Some(A))),
                ("secret", rec(1, 1, Shown::Name, None)),
                ("big", rec(1, 1, Shown::Size, None)),
                ("gone", rec(1, 1, Shown::Content, Some(A))),
            ],
        );
        let new = snap(
            0,
            vec![
                ("same", rec(1, 9, Shown::Content, Some(A))),
                ("edit", rec(1, 1, Shown::Content, Some(B))),
                ("secret", rec(5, 9, Shown::Name, None)),
                ("big", rec(2, 2, Shown::Size, None)),
                ("new", rec(4, 1, Shown::Name, None)),
            ],
        );
        let d = diff(&old, &new);
        let got: Vec<(&str, ChangeKind, Option<u64>, Option<&str>)> = d
            .iter()
            .map(|c| (c.path.as_str(), c.change, c.size, c.sha256.as_deref()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("big", ChangeKind::Modified, Some(2), None),
                ("edit", ChangeKind::Modified, Some(1), Some(B)),
                ("gone", ChangeKind::Deleted, None, None),
                ("new", ChangeKind::Created, None, None),
            ]
        );
    }
}
