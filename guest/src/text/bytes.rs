//! Byte comparisons. In the component, `==` and `cmp` on slices call wasi-libc's `memcmp`,
//! which compares one byte at a time. The comparisons for large buffers here compare 64-byte
//! blocks with a flat XOR-and-OR loop that the compiler turns into SIMD (`simd128`), then
//! finish byte-wise; [`cmp`] and [`eq_short`], for paths and names, compare eight bytes at a
//! step.

use crate::text::simd::{quarter, Lanes};

const BLOCK: usize = 64;

fn block_differs(a: &[u8], b: &[u8]) -> bool {
    let mut diff = 0u8;
    for (x, y) in a.iter().zip(b) {
        diff |= x ^ y;
    }
    diff != 0
}

/// How many leading bytes `a` and `b` share.
pub fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + BLOCK <= n && !block_differs(&a[i..i + BLOCK], &b[i..i + BLOCK]) {
        i += BLOCK;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

/// How many trailing bytes `a` and `b` share, at most `max`.
pub fn common_suffix(a: &[u8], b: &[u8], max: usize) -> usize {
    let n = a.len().min(b.len()).min(max);
    let (la, lb) = (a.len(), b.len());
    let mut i = 0;
    while i + BLOCK <= n && !block_differs(&a[la - i - BLOCK..la - i], &b[lb - i - BLOCK..lb - i]) {
        i += BLOCK;
    }
    while i < n && a[la - i - 1] == b[lb - i - 1] {
        i += 1;
    }
    i
}

/// Whether every byte is ASCII, 64 bytes per step (the standard library's check goes four
/// bytes at a time in the component).
pub fn is_ascii(a: &[u8]) -> bool {
    let mut rest = a;
    while let Some((b, r)) = rest.split_first_chunk::<BLOCK>() {
        let seen = (0..4).fold(Lanes::splat(0), |acc, k| acc.or(Lanes::load(quarter(b, k))));
        if seen.top_bits() != 0 {
            return false;
        }
        rest = r;
    }
    rest.is_ascii()
}

/// Whether `a` is UTF-8: runs of ASCII passed over 64 bytes per step, and only the bytes
/// around each other character checked by the standard library. Source code that is
/// mostly ASCII is checked at nearly the speed of [`is_ascii`].
pub fn is_utf8(a: &[u8]) -> bool {
    let mut i = 0;
    while i < a.len() {
        // Pass over whole blocks of ASCII.
        while let Some(b) = a.get(i..).and_then(<[u8]>::first_chunk::<BLOCK>) {
            let seen = (0..4).fold(Lanes::splat(0), |acc, k| acc.or(Lanes::load(quarter(b, k))));
            if seen.top_bits() != 0 {
                break;
            }
            i += BLOCK;
        }
        // The block (or the tail) that holds other characters, up to the next ASCII byte:
        // a UTF-8 sequence holds none, so both ends are character boundaries.
        let mut end = (i + BLOCK).min(a.len());
        while end < a.len() && !a[end].is_ascii() {
            end += 1;
        }
        if std::str::from_utf8(&a[i..end]).is_err() {
            return false;
        }
        i = end;
    }
    true
}

/// `a == b`.
pub fn eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && common_prefix(a, b) == a.len()
}

/// `a.cmp(b)`, eight bytes per step: for paths, which share long prefixes
/// (`drivers/net/ethernet/intel/...`) and are compared many times in a sort or a merge.
pub fn cmp(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    let (mut x, mut y) = (a, b);
    while let (Some((wx, rx)), Some((wy, ry))) =
        (x.split_first_chunk::<8>(), y.split_first_chunk::<8>())
    {
        let (u, v) = (u64::from_le_bytes(*wx), u64::from_le_bytes(*wy));
        if u != v {
            // Read little-endian, the first differing byte is the lowest one that differs.
            let shift = (u ^ v).trailing_zeros() & !7;
            return ((u >> shift) & 0xFF).cmp(&((v >> shift) & 0xFF));
        }
        (x, y) = (rx, ry);
    }
    for (p, q) in x.iter().zip(y) {
        if p != q {
            return p.cmp(q);
        }
    }
    x.len().cmp(&y.len())
}

/// `a == b` for short slices (paths, names), eight bytes per step.
pub fn eq_short(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && cmp(a, b).is_eq()
}

/// `a == b` for optional contents (absent equals only absent).
pub fn eq_opt(a: Option<&[u8]>, b: Option<&[u8]>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => eq(a, b),
        (None, None) => true,
        _ => false,
    }
}

/// `items` in the byte order of their keys (`key` gives each one's), each key once, for
/// items that come nearly in that order: those that break it are set aside, sorted, and
/// merged back as the items are taken. A walk's paths (in order but for names that sort
/// before `/` beside a directory of the same stem) then cost a pass, not a sort.
pub fn in_order<T>(items: Vec<T>, key: fn(&T) -> &[u8]) -> impl Iterator<Item = T> {
    let mut main: Vec<T> = Vec::with_capacity(items.len());
    let mut aside = Vec::new();
    for item in items {
        match main.last() {
            Some(last) if cmp(key(&item), key(last)).is_lt() => aside.push(item),
            _ => main.push(item),
        }
    }
    aside.sort_by(|a, b| cmp(key(a), key(b)));
    Merged {
        main: main.into_iter().peekable(),
        aside: aside.into_iter().peekable(),
        key,
    }
}

/// Two sequences in key order, merged (see [`in_order`]).
struct Merged<T> {
    main: std::iter::Peekable<std::vec::IntoIter<T>>,
    aside: std::iter::Peekable<std::vec::IntoIter<T>>,
    key: fn(&T) -> &[u8],
}

impl<T> Iterator for Merged<T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        let key = self.key;
        let from_aside = match (self.main.peek(), self.aside.peek()) {
            (Some(m), Some(a)) => cmp(key(a), key(m)).is_lt(),
            (None, Some(_)) => true,
            (_, None) => false,
        };
        let item = if from_aside {
            self.aside.next()
        } else {
            self.main.next()
        }?;
        // The same key again, on either side: passed over.
        while self
            .main
            .next_if(|m| eq_short(key(m), key(&item)))
            .is_some()
        {}
        while self
            .aside
            .next_if(|a| eq_short(key(a), key(&item)))
            .is_some()
        {}
        Some(item)
    }
}

/// Bytes read from the front, every length checked: `None` past the end. Integers are
/// little-endian.
pub struct Reader<'a>(pub &'a [u8]);

impl<'a> Reader<'a> {
    pub fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }

    pub fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes(self.take(2)?.try_into().ok()?))
    }

    pub fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    pub fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_suffixes_and_equality_at_every_offset() {
        let base: Vec<u8> = (0..300u32).map(|i| (i * 7 % 251) as u8).collect();
        for at in 0..base.len() {
            let mut other = base.clone();
            other[at] ^= 0x55;
            assert_eq!(common_prefix(&base, &other), at);
            assert_eq!(
                common_suffix(&base, &other, usize::MAX),
                base.len() - at - 1
            );
            assert!(!eq(&base, &other));
        }
        assert!(eq(&base, &base.clone()));
        assert!(!eq(&base, &base[..299]));
        assert_eq!(common_prefix(&base, &base[..100]), 100);
        assert_eq!(common_suffix(&base, &base[200..], 50), 50);
        assert!(eq_opt(None, None));
        assert!(!eq_opt(Some(b"a"), None));
        assert!(eq_opt(Some(b"ab"), Some(b"ab")));
        for at in 0..base.len() {
            let mut text = vec![b'a'; base.len()];
            assert!(is_utf8(&text));
            assert!(is_ascii(&text[..at]));
            text[at] = 0x80;
            assert!(!is_ascii(&text), "{at}");
        }
    }

    /// `in_order` gives what a sort and a removal of repeated keys give, for sequences in
    /// order, nearly in order (a walk's), reversed and random, with repeated keys.
    #[test]
    fn in_order_is_a_sort_without_repeats() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut draw = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let alphabet = [b'-', b'.', b'/', b'0', b'a', b'b'];
        for round in 0..400 {
            let len = draw(60) as usize;
            let mut items: Vec<(Vec<u8>, usize)> = (0..len)
                .map(|i| {
                    let n = 1 + draw(4) as usize;
                    let k = (0..n).map(|_| alphabet[draw(6) as usize]).collect();
                    (k, i)
                })
                .collect();
            match round % 4 {
                0 => items.sort(),
                1 => {
                    // Sorted, then a few items moved later (as a walk visits them).
                    items.sort();
                    for _ in 0..3 {
                        if items.len() > 2 {
                            let from = draw(items.len() as u64) as usize;
                            let it = items.remove(from);
                            let to = draw(items.len() as u64 + 1) as usize;
                            items.insert(to.max(from), it);
                        }
                    }
                }
                2 => items.sort_by(|a, b| b.cmp(a)),
                _ => {}
            }
            let mut expected: Vec<Vec<u8>> = items.iter().map(|(k, _)| k.clone()).collect();
            expected.sort();
            expected.dedup();
            let got: Vec<Vec<u8>> = in_order(items, |(k, _)| k.as_slice())
                .map(|(k, _)| k)
                .collect();
            assert_eq!(got, expected, "round {round}");
        }
    }

    /// The word-wise order is the standard library's for every pair of a set of paths
    /// that share prefixes of every length, differ at every offset of a word, and differ
    /// in bytes above 0x7F (where a signed comparison would err).
    #[test]
    fn word_wise_order_agrees_with_the_standard_order() {
        let base = b"drivers/net/ethernet/intel/ice/ice_main.c";
        let mut set: Vec<Vec<u8>> = vec![Vec::new(), b"a".to_vec(), b"\xFF".to_vec()];
        for at in 0..base.len() {
            set.push(base[..at].to_vec());
            for d in [1u8, 0x80, 0xFF] {
                let mut v = base.to_vec();
                v[at] = v[at].wrapping_add(d);
                set.push(v.clone());
                v.truncate(at + 1);
                set.push(v);
            }
        }
        set.push(base.to_vec());
        for a in &set {
            for b in &set {
                assert_eq!(cmp(a, b), a.cmp(b), "{a:?} {b:?}");
                assert_eq!(eq_short(a, b), a == b);
            }
        }
    }

    /// The block-wise check agrees with the standard library's at every offset, for valid
    /// text and for every kind of break in it.
    #[test]
    fn utf8_checked_by_blocks_agrees_with_the_standard_check() {
        let text = "abc déf 𝄞 “q” ".repeat(20);
        let bytes = text.as_bytes();
        assert!(is_utf8(bytes));
        let breaks: [&[u8]; 5] = [b"\xFF", b"\xC3", b"\xE2\x80", b"\xED\xA0\x80", b"\x80"];
        for at in 0..bytes.len() {
            for bad in breaks {
                let mut v = bytes[..at].to_vec();
                v.extend_from_slice(bad);
                v.extend_from_slice(&bytes[at..]);
                assert_eq!(is_utf8(&v), std::str::from_utf8(&v).is_ok(), "{at} {bad:?}");
                assert_eq!(
                    is_utf8(&v[..at + 1]),
                    std::str::from_utf8(&v[..at + 1]).is_ok()
                );
            }
        }
    }
}
