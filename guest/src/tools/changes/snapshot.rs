//! A snapshot: what every visible file of a tree was at one moment (metadata, and the
//! sha256 of the content where the policy lets it be read), in a compact binary form, and
//! the difference between two snapshots.
//!
//! The stored form is the 8 bytes `ftsnap3\n`, the time it was taken (u64), the length
//! (u64) and bytes of the walk's memo (what the walk decided for each entry, reused by the
//! next scan: [`crate::rules::walk_memo`]), then one record per file: a flags byte (bits
//! 0-2: modification time, status change time and inode are known; bit 3: a sha256
//! follows; bits 4-5: what is [`Shown`]), the size, modification time, status change time
//! and inode (u64 each, 0 where unknown), the 32 bytes of the sha256 when flagged, the
//! path's length (u32) and the path (a logical path: UTF-8 without control characters).
//! Numbers are little-endian. Files are in path order (byte order of the path text), each
//! once. (`ftsnap2`, the form before the memo, is read as one without a memo; the text
//! form `ftsnap1` of earlier versions took a third of a `changes_since` call to parse on a
//! large tree: its snapshots read as expired.)
//!
//! A stored snapshot is read in place ([`Snapshot::decode`] borrows each path from the
//! bytes), since a call reads the earlier snapshot only to walk it once beside the new one.

use std::cmp::Ordering;

use crate::api::{Change, ChangeKind};
use crate::text::bytes::{self, Reader};

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
    const ALL: [Shown; 4] = [Shown::Content, Shown::Size, Shown::Name, Shown::Link];

    fn bits(self) -> u8 {
        match self {
            Shown::Content => 0,
            Shown::Size => 1,
            Shown::Name => 2,
            Shown::Link => 3,
        }
    }
}

/// A sha256, kept as its 32 bytes (a snapshot holds one per file).
#[derive(Clone, Copy, Eq)]
pub struct Sha256([u8; 32]);

impl PartialEq for Sha256 {
    fn eq(&self, other: &Self) -> bool {
        bytes::eq_short(&self.0, &other.0)
    }
}

impl Sha256 {
    /// `hex` if it is 64 hex digits (of either case).
    pub fn parse(hex: &str) -> Option<Self> {
        crate::fs::hash::unhex32(hex).map(Sha256)
    }

    /// The 64 lowercase hex digits every tool reports.
    pub fn to_hex(self) -> String {
        crate::fs::hash::hex(&self.0)
    }
}

impl std::fmt::Debug for Sha256 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_hex())
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
    pub sha256: Option<Sha256>,
}

impl Rec {
    /// True when this record tells what `other` does: equal, or both name-only (a secret's
    /// metadata moving is never told).
    pub fn tells_same(&self, other: &Rec) -> bool {
        self == other || (self.shown == Shown::Name && other.shown == Shown::Name)
    }

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
/// just taken and borrowed from the stored bytes (`&str`) in one read back.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot<P = String> {
    pub taken: u64,
    pub files: Vec<(P, Rec)>,
}

const MAGIC: &[u8; 8] = b"ftsnap3\n";
/// The form without a memo.
const MAGIC_2: &[u8; 8] = b"ftsnap2\n";
const KNOWN_MTIME: u8 = 1;
const KNOWN_CTIME: u8 = 2;
const KNOWN_INODE: u8 = 4;
const HAS_SHA256: u8 = 8;
const SHOWN_SHIFT: u32 = 4;

/// How many records `rest` holds, by their length fields alone (the layout [`read_rec`]
/// reads): a damaged record is found when it is read, and only ends the count here.
fn count_records(mut rest: &[u8]) -> usize {
    let mut n = 0;
    while let Some(&flags) = rest.first() {
        let fixed = 1 + 4 * 8 + if flags & HAS_SHA256 != 0 { 32 } else { 0 };
        let Some(len) = rest.get(fixed..fixed + 4).and_then(|b| b.try_into().ok()) else {
            break;
        };
        let len = usize::try_from(u32::from_le_bytes(len)).unwrap_or(usize::MAX);
        n += 1;
        rest = rest
            .get(fixed.saturating_add(4).saturating_add(len)..)
            .unwrap_or(&[]);
    }
    n
}

/// A path as the stored form may hold it: not empty, no control character.
pub(super) fn plain_path(path: &str) -> bool {
    let ascii_ok = |b: &u8| *b >= 0x20 && *b != 0x7f;
    let bytes = path.as_bytes();
    if bytes.is_empty() {
        return false;
    }
    if !bytes.is_ascii() {
        return !path.chars().any(char::is_control);
    }
    // Eight bytes at a time (every path of a large tree is read back once per call): no
    // byte below 0x20 and none 0x7f, by the word tricks for "has a byte less than n" and
    // "has a zero byte" (exact about whether one exists; every byte is below 0x80 here).
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        let Ok(word) = <[u8; 8]>::try_from(word) else {
            return false;
        };
        let x = u64::from_le_bytes(word);
        let del = x ^ (ONES * 0x7f);
        let control = x.wrapping_sub(ONES * 0x20) & !x & HIGH;
        let deleted = del.wrapping_sub(ONES) & !del & HIGH;
        if control | deleted != 0 {
            return false;
        }
    }
    words.remainder().iter().all(ascii_ok)
}

/// One record of the stored form, read from `r`.
pub(super) fn read_rec<'a>(r: &mut Reader<'a>) -> Option<(&'a str, Rec)> {
    let flags = r.take(1)?[0];
    if flags & 0b1100_0000 != 0 {
        return None;
    }
    let shown = Shown::ALL[usize::from(flags >> SHOWN_SHIFT)];
    let size = r.u64()?;
    let known = |bit: u8, v: u64| (flags & bit != 0).then_some(v);
    let mtime = known(KNOWN_MTIME, r.u64()?);
    let ctime = known(KNOWN_CTIME, r.u64()?);
    let inode = known(KNOWN_INODE, r.u64()?);
    let sha256 = match flags & HAS_SHA256 {
        0 => None,
        _ => Some(Sha256(r.take(32)?.try_into().ok()?)),
    };
    let len = usize::try_from(r.u32()?).ok()?;
    let path = std::str::from_utf8(r.take(len)?).ok()?;
    if !plain_path(path) {
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

/// Appends one record of the stored form (the layout [`read_rec`] reads) to `out`.
pub(super) fn write_rec(out: &mut Vec<u8>, path: &str, r: &Rec) {
    let bit = |v: Option<u64>, b: u8| if v.is_some() { b } else { 0 };
    let flags = bit(r.mtime, KNOWN_MTIME)
        | bit(r.ctime, KNOWN_CTIME)
        | bit(r.inode, KNOWN_INODE)
        | if r.sha256.is_some() { HAS_SHA256 } else { 0 }
        | r.shown.bits() << SHOWN_SHIFT;
    out.push(flags);
    for v in [Some(r.size), r.mtime, r.ctime, r.inode] {
        out.extend_from_slice(&v.unwrap_or(0).to_le_bytes());
    }
    if let Some(d) = &r.sha256 {
        out.extend_from_slice(&d.0);
    }
    // A logical path is far shorter than 4 GiB.
    out.extend_from_slice(&(path.len() as u32).to_le_bytes());
    out.extend_from_slice(path.as_bytes());
}

/// The parts of a stored snapshot: the time taken, the memo and the records.
fn parts(bytes: &[u8]) -> Option<(u64, &[u8], &[u8])> {
    if let Some(rest) = bytes.strip_prefix(MAGIC_2) {
        let mut r = Reader(rest);
        return Some((r.u64()?, &[], r.0));
    }
    let mut r = Reader(bytes.strip_prefix(MAGIC)?);
    let taken = r.u64()?;
    let len = usize::try_from(r.u64()?).ok()?;
    let memo = r.take(len)?;
    Some((taken, memo, r.0))
}

/// The walk's memo kept in the stored snapshot `bytes` (empty when it has none).
pub fn memo_of(bytes: &[u8]) -> &[u8] {
    parts(bytes).map_or(&[], |(_, memo, _)| memo)
}

impl<P: AsRef<str>> Snapshot<P> {
    /// The stored form (see the module docs), keeping `memo` with it.
    pub fn encode(&self, memo: &[u8]) -> Vec<u8> {
        let paths: usize = self.files.iter().map(|(p, _)| p.as_ref().len()).sum();
        let mut out =
            Vec::with_capacity(24 + memo.len() + self.files.len() * (1 + 32 + 32 + 4) + paths);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&self.taken.to_le_bytes());
        out.extend_from_slice(&(memo.len() as u64).to_le_bytes());
        out.extend_from_slice(memo);
        for (path, r) in &self.files {
            write_rec(&mut out, path.as_ref(), r);
        }
        out
    }

    /// True when `other` tells the same as this snapshot: the same files, equal records,
    /// except that a name-only file's metadata is not compared (a new token for a tree
    /// whose only change is a secret's would tell that it moved). (A scan finds this as
    /// it goes: `ScanStats::same_as_old`; this is the tests' reference.)
    #[cfg(test)]
    pub fn same_visible<Q: AsRef<str>>(&self, other: &Snapshot<Q>) -> bool {
        self.files.len() == other.files.len()
            && self
                .files
                .iter()
                .zip(&other.files)
                .all(|((pa, a), (pb, b))| {
                    bytes::eq_short(pa.as_ref().as_bytes(), pb.as_ref().as_bytes())
                        && a.tells_same(b)
                })
    }
}

impl<'a> Snapshot<&'a str> {
    /// Reads the stored form, borrowing each path from `bytes`; `None` for anything else
    /// (also for paths out of order or repeated, and for the text form of earlier
    /// versions).
    pub fn decode(bytes: &'a [u8]) -> Option<Self> {
        let (taken, _, records) = parts(bytes)?;
        let mut r = Reader(records);
        // Room for every record at once: the list is not grown (and copied) midway.
        let mut files: Vec<(&str, Rec)> = Vec::with_capacity(count_records(r.0));
        while !r.0.is_empty() {
            let (path, rec) = read_rec(&mut r)?;
            if files
                .last()
                .is_some_and(|(last, _)| bytes::cmp(last.as_bytes(), path.as_bytes()).is_ge())
            {
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
            r.sha256.map(|h| h.to_hex())
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
    paired(&old.files, &new.files, |path, a, b| match (a, b) {
        (None, Some(rb)) => out.push(created(path, rb)),
        (Some(ra), Some(rb)) => {
            if modified(ra, rb) {
                let mut c = created(path, rb);
                c.change = ChangeKind::Modified;
                out.push(c);
            }
        }
        (_, None) => out.push(Change {
            path: path.to_string(),
            change: ChangeKind::Deleted,
            size: None,
            sha256: None,
        }),
    });
    out
}

/// Goes over two lists of records in path order side by side, calling `each` once per
/// path with its record in `old` and in `new` (`None` where the list does not hold it).
pub(super) fn paired<'p, P: AsRef<str>, Q: AsRef<str>>(
    old: &'p [(P, Rec)],
    new: &'p [(Q, Rec)],
    mut each: impl FnMut(&'p str, Option<&'p Rec>, Option<&'p Rec>),
) {
    let mut a = old.iter().map(|(p, r)| (p.as_ref(), r)).peekable();
    let mut b = new.iter().map(|(p, r)| (p.as_ref(), r)).peekable();
    loop {
        let order = match (a.peek(), b.peek()) {
            (None, None) => break,
            (None, Some(_)) => Ordering::Greater,
            (Some(_), None) => Ordering::Less,
            (Some((pa, _)), Some((pb, _))) => bytes::cmp(pa.as_bytes(), pb.as_bytes()),
        };
        match order {
            Ordering::Greater => {
                if let Some((pb, rb)) = b.next() {
                    each(pb, None, Some(rb));
                }
            }
            Ordering::Equal => {
                if let (Some((_, ra)), Some((pb, rb))) = (a.next(), b.next()) {
                    each(pb, Some(ra), Some(rb));
                }
            }
            Ordering::Less => {
                if let Some((pa, ra)) = a.next() {
                    each(pa, Some(ra), None);
                }
            }
        }
    }
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
            sha256: sha.map(|h| Sha256::parse(h).unwrap()),
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

    /// The stored form of files named `paths` in that order (not checked), each a small
    /// file of known size only.
    fn stored(paths: &[&[u8]]) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&1u64.to_le_bytes());
        out.extend_from_slice(&0u64.to_le_bytes());
        for p in paths {
            out.push(Shown::Size.bits() << SHOWN_SHIFT);
            out.extend_from_slice(&[0; 32]);
            out.extend_from_slice(&(p.len() as u32).to_le_bytes());
            out.extend_from_slice(p);
        }
        out
    }

    #[test]
    fn a_plain_path_is_one_without_a_control_character_anywhere() {
        let ascii_ok = |c: u8| c >= 0x20 && c != 0x7f;
        for len in 1..20 {
            for at in 0..len {
                for c in 0u8..0x80 {
                    let mut p = vec![b'a'; len];
                    p[at] = c;
                    let p = String::from_utf8(p).unwrap();
                    assert_eq!(plain_path(&p), ascii_ok(c), "{p:?}");
                }
            }
        }
        assert!(!plain_path(""));
        assert!(plain_path("dir/ü.txt"));
        assert!(!plain_path("dir/ü\u{85}.txt"));
        assert!(!plain_path("dir/\u{9f}.txt"));
    }

    #[test]
    fn the_stored_form_round_trips_and_refuses_junk() {
        let s = snap(
            42,
            vec![
                ("a b/c d.txt", rec(3, 1, Shown::Content, Some(A))),
                ("é/ü.txt", rec(3, 1, Shown::Name, None)),
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
                        inode: Some(u64::MAX),
                        ..rec(0, 0, Shown::Size, None)
                    },
                ),
            ],
        );
        let bytes = s.encode(b"the memo");
        let back = Snapshot::decode(&bytes).unwrap();
        assert_eq!(back.taken, 42);
        assert_eq!(back.files.len(), s.files.len());
        for ((pa, a), (pb, b)) in back.files.iter().zip(&s.files) {
            assert_eq!((*pa, a), (pb.as_str(), b));
        }
        assert_eq!(memo_of(&bytes), b"the memo");
        assert_eq!(back.encode(memo_of(&bytes)), bytes);
        // The form before the memo reads as one without it.
        let mut v2 = MAGIC_2.to_vec();
        v2.extend_from_slice(&bytes[8..16]);
        v2.extend_from_slice(&bytes[24 + 8..]);
        assert_eq!(Snapshot::decode(&v2).unwrap(), back);
        assert_eq!(memo_of(&v2), b"");
        // A memo longer than what is left: no snapshot, and no memo.
        let mut long_memo = bytes.clone();
        long_memo[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(Snapshot::decode(&long_memo).is_none());
        assert_eq!(memo_of(&long_memo), b"");
        // The count that sizes the list up front is the records' (and, on a cut or
        // damaged form, no more than the bytes can hold: it only sizes a list).
        let records = &bytes[24 + 8..];
        assert_eq!(count_records(records), s.files.len());
        for end in 0..records.len() {
            assert!(count_records(&records[..end]) <= s.files.len());
        }
        // A length past the end (and past any address): one record, then the end.
        let mut past = vec![0; 37];
        past[33..].fill(0xFF);
        assert_eq!(count_records(&past), 1);
        // A digest is read in either case and told in lowercase.
        assert_eq!(Sha256::parse(&A.to_uppercase()), Sha256::parse(A));
        assert_eq!(Sha256::parse(&B.to_uppercase()).unwrap().to_hex(), B);
        for bad in [&A[1..], "g".repeat(64).as_str(), &format!("{}é", &A[..62])] {
            assert_eq!(Sha256::parse(bad), None, "{bad}");
        }
        let mut unknown_flag = stored(&[b"a"]);
        unknown_flag[24] |= 0x40;
        let mut cut = bytes.clone();
        cut.pop();
        let mut too_long = stored(&[b"a"]);
        too_long[24 + 33] = 2;
        for (why, junk) in [
            ("empty", Vec::new()),
            ("the text form", b"ftsnap1 1\nf 1 - - - s - a\n".to_vec()),
            ("no time", MAGIC.to_vec()),
            ("cut short", cut),
            ("an unknown flag", unknown_flag),
            ("a path past the end", too_long),
            ("an empty path", stored(&[b""])),
            ("a control character", stored(&[b"a\x01b"])),
            ("a C1 control character", stored(&["a\u{85}b".as_bytes()])),
            ("not UTF-8", stored(&[b"a\xffb"])),
            ("out of order", stored(&[b"b", b"a"])),
            ("twice", stored(&[b"a", b"a"])),
        ] {
            assert!(Snapshot::decode(&junk).is_none(), "{why}");
        }
        // The same paths in order: a control for the last two.
        let in_order = stored(&[b"a", "b/é".as_bytes()]);
        let ok = Snapshot::decode(&in_order).unwrap();
        assert_eq!(
            ok.files.iter().map(|f| f.0).collect::<Vec<_>>(),
            ["a", "b/é"]
        );
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
