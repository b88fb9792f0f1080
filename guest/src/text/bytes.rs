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

/// Items that come nearly in the byte order of their keys (`key` gives each one's), put
/// in that order, each key once: those that break the order are set aside, and merged
/// back at the end. A walk's paths (in order but for names that sort before `/` beside a
/// directory of the same stem) then cost a comparison each and one merge, not a sort.
pub struct NearlySorted<T> {
    sorted: Vec<T>,
    aside: Vec<T>,
    key: fn(&T) -> &[u8],
}

impl<T> NearlySorted<T> {
    /// Room for `n` items.
    pub fn with_capacity(n: usize, key: fn(&T) -> &[u8]) -> Self {
        NearlySorted {
            sorted: Vec::with_capacity(n),
            aside: Vec::new(),
            key,
        }
    }

    pub fn push(&mut self, item: T) {
        let key = self.key;
        match self.sorted.last() {
            Some(last) if cmp(key(&item), key(last)).is_le() => self.aside.push(item),
            _ => self.sorted.push(item),
        }
    }

    /// The items in the order of their keys, of items with equal keys the first given
    /// only (a listing may show a name twice when the directory changes meanwhile).
    pub fn into_sorted(mut self) -> Vec<T> {
        if self.aside.is_empty() {
            return self.sorted;
        }
        let key = self.key;
        let by_key = |a: &T, b: &T| cmp(key(a), key(b));
        self.aside.sort_by(by_key);
        // Each key once, the first given: an item set aside came after every item in order
        // with its key (those that came later have greater keys than it).
        self.aside
            .dedup_by(|later, first| cmp(key(later), key(first)).is_eq());
        let sorted = &self.sorted;
        self.aside
            .retain(|a| sorted.binary_search_by(|s| cmp(key(s), key(a))).is_err());
        // Two runs in order: the stable sort finds them and merges them in one pass.
        self.sorted.append(&mut self.aside);
        self.sorted.sort_by(by_key);
        self.sorted
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

    /// `NearlySorted` gives what a stable sort keeping the first of equal keys gives, for
    /// sequences in order, nearly in order (a walk's), reversed and random, with repeated
    /// keys.
    #[test]
    fn nearly_sorted_is_a_stable_sort_keeping_the_first_of_equal_keys() {
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
            let mut expected = items.clone();
            expected.sort_by(|a, b| a.0.cmp(&b.0));
            expected.dedup_by(|later, first| later.0 == first.0);
            let mut got =
                NearlySorted::with_capacity(items.len(), |(k, _): &(Vec<u8>, usize)| k.as_slice());
            for item in items {
                got.push(item);
            }
            let got = got.into_sorted();
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
