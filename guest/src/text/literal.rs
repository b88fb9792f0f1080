//! Substring search for literal queries, exact or ASCII case-insensitive.
//!
//! Two bytes of the needle (the rarest two by memchr's byte-frequency ranking) are compared
//! at their offsets for 64 candidate positions at once (four 16-byte vectors per step, where
//! the regex crate's prefilter takes one in the component). Only the positions where both
//! bytes match are compared whole.
//!
//! Case-insensitive needles are ASCII and compared in lowercase: a needle byte that is an
//! ASCII letter matches a haystack byte `h` when `h | 0x20` equals it (exactly its upper and
//! lower case), any other byte only itself. No lowercased copy of the haystack is made.
//! That is all of Unicode case folding for ASCII letters except two characters, which
//! `answers_for` looks out for.

use memchr::arch::all::packedpair::Pair;

use crate::text::simd::{quarter, Lanes};

const BLOCK: usize = 64;

/// A compiled literal needle.
#[derive(Debug, Clone)]
pub struct Literal {
    /// The needle, lowercased when folding.
    needle: Vec<u8>,
    /// Per needle byte: 0x20 where the byte is a folded ASCII letter, else 0.
    masks: Vec<u8>,
    /// The two probe offsets, their bytes and masks.
    probe: [(usize, u8, u8); 2],
    folds: bool,
    /// When folding a needle with a 'k' or an 's': the two non-ASCII characters that Unicode
    /// case folding equates with ASCII letters (the Kelvin sign with 'k', the long s with
    /// 's'), as literals of their own.
    unicode_forms: Vec<Literal>,
}

impl Literal {
    /// `None` for an empty needle, or a case-insensitive one that is not ASCII (the caller
    /// needs Unicode case folding then).
    pub fn new(needle: &[u8], case_insensitive: bool) -> Option<Self> {
        if needle.is_empty() || case_insensitive && !needle.is_ascii() {
            return None;
        }
        let needle = if case_insensitive {
            needle.to_ascii_lowercase()
        } else {
            needle.to_vec()
        };
        let masks: Vec<u8> = needle
            .iter()
            .map(|&b| {
                if case_insensitive && b.is_ascii_lowercase() {
                    0x20
                } else {
                    0
                }
            })
            .collect();
        let (i1, i2) = Pair::new(&needle).map_or((0, 0), |p| {
            (usize::from(p.index1()), usize::from(p.index2()))
        });
        let probe = [(i1, needle[i1], masks[i1]), (i2, needle[i2], masks[i2])];
        let mut unicode_forms = Vec::new();
        for (letter, form) in [(b'k', "\u{212A}"), (b's', "\u{17F}")] {
            if case_insensitive && needle.contains(&letter) {
                unicode_forms.extend(Literal::new(form.as_bytes(), false));
            }
        }
        Some(Literal {
            needle,
            masks,
            probe,
            folds: case_insensitive,
            unicode_forms,
        })
    }

    /// The needle (lowercased when folding).
    pub fn needle(&self) -> &[u8] {
        &self.needle
    }

    /// The needle's length in bytes.
    pub fn len(&self) -> usize {
        self.needle.len()
    }

    /// Whether this literal finds exactly what the query's regex finds in `hay`: always
    /// when matching exactly; when folding ASCII letters, unless `hay` holds a non-ASCII
    /// character that Unicode case folding equates with one of the needle's letters.
    pub fn answers_for(&self, hay: &[u8]) -> bool {
        self.unicode_forms.is_empty()
            || crate::text::bytes::is_ascii(hay)
            || self.unicode_forms.iter().all(|f| f.find(hay).is_none())
    }

    /// Whether the needle is matched ASCII case-insensitively.
    pub fn folds(&self) -> bool {
        self.folds
    }

    /// Where the first occurrence of the needle in `hay` starts.
    pub fn find(&self, hay: &[u8]) -> Option<usize> {
        if self.folds {
            self.find_with::<true>(hay)
        } else {
            self.find_with::<false>(hay)
        }
    }

    /// `find`, with the case-folding ORs compiled in or out.
    fn find_with<const FOLD: bool>(&self, hay: &[u8]) -> Option<usize> {
        let n = self.needle.len();
        // Candidate starts are 0..ends.
        let ends = hay.len().checked_sub(n)? + 1;
        let [(i1, b1, m1), (i2, b2, m2)] = self.probe;
        let (b1, m1, b2, m2) = (
            Lanes::splat(b1),
            Lanes::splat(m1),
            Lanes::splat(b2),
            Lanes::splat(m2),
        );
        let mut at = 0;
        // A block covers candidates at..at + BLOCK; every probe of it stays inside `hay`
        // because the probe offsets are below `n` and at + BLOCK <= ends.
        while at + BLOCK <= ends {
            let (Some(p1), Some(p2)) = (
                hay[at + i1..].first_chunk::<BLOCK>(),
                hay[at + i2..].first_chunk::<BLOCK>(),
            ) else {
                break;
            };
            let probe = |p, k, m| {
                let v = Lanes::load(quarter(p, k));
                if FOLD {
                    v.or(m)
                } else {
                    v
                }
            };
            let hit = |k| probe(p1, k, m1).eq(b1).and(probe(p2, k, m2).eq(b2));
            let (h0, h1, h2, h3) = (hit(0), hit(1), hit(2), hit(3));
            if h0.or(h1).or(h2.or(h3)).any() {
                let mut mask = u64::from(h0.top_bits())
                    | u64::from(h1.top_bits()) << 16
                    | u64::from(h2.top_bits()) << 32
                    | u64::from(h3.top_bits()) << 48;
                while mask != 0 {
                    let c = at + mask.trailing_zeros() as usize;
                    if self.is_at(hay, c) {
                        return Some(c);
                    }
                    mask &= mask - 1;
                }
            }
            at += BLOCK;
        }
        self.scan(hay, at, ends)
    }

    /// Candidates `from..to`, one by one.
    fn scan(&self, hay: &[u8], from: usize, to: usize) -> Option<usize> {
        let [(i1, b1, m1), (i2, b2, m2)] = self.probe;
        (from..to).find(|&c| hay[c + i1] | m1 == b1 && hay[c + i2] | m2 == b2 && self.is_at(hay, c))
    }

    fn is_at(&self, hay: &[u8], c: usize) -> bool {
        hay[c..c + self.needle.len()]
            .iter()
            .zip(self.needle.iter().zip(&self.masks))
            .all(|(&h, (&k, &m))| h | m == k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(hay: &[u8], needle: &[u8], ci: bool) -> Option<usize> {
        if needle.len() > hay.len() {
            return None;
        }
        (0..=hay.len() - needle.len()).find(|&i| {
            let w = &hay[i..i + needle.len()];
            if ci {
                w.eq_ignore_ascii_case(needle)
            } else {
                w == needle
            }
        })
    }

    #[test]
    fn finds_the_first_occurrence_at_every_offset_and_block_edge() {
        for needle in [
            &b"q"[..],
            b"EXPORT_SYMBOL_GPL",
            b"ab",
            b"zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz",
        ] {
            for len in [0usize, 1, 17, 63, 64, 65, 127, 128, 129, 200, 300] {
                let base = vec![b'.'; len];
                assert_eq!(Literal::new(needle, false).unwrap().find(&base), None);
                for at in 0..=len.saturating_sub(needle.len()) {
                    if at + needle.len() > len {
                        continue;
                    }
                    let mut hay = base.clone();
                    hay[at..at + needle.len()].copy_from_slice(needle);
                    // A near miss before it (one byte changed) must not count.
                    if at > needle.len() && needle.len() > 1 {
                        hay[at - needle.len() - 1..at - 1].copy_from_slice(needle);
                        hay[at - 2] ^= 1;
                    }
                    let want = naive(&hay, needle, false);
                    assert_eq!(
                        Literal::new(needle, false).unwrap().find(&hay),
                        want,
                        "{len} {at}"
                    );
                    let upper = hay.to_ascii_uppercase();
                    assert_eq!(
                        Literal::new(needle, true).unwrap().find(&upper),
                        naive(&upper, needle, true)
                    );
                }
            }
        }
    }

    #[test]
    fn folding_is_ascii_letters_only() {
        let l = Literal::new(b"Mutex_Lock", true).unwrap();
        assert_eq!(l.find(b"xx MUTEX_LOCK"), Some(3));
        assert_eq!(l.find(b"mutex\x7flock"), None);
        assert_eq!(l.find(b"mutex-lock"), None);
        // '@' | 0x20 is '`', never a letter: bytes that differ from a letter in bit 5 alone
        // are only its other case.
        assert_eq!(Literal::new(b"`", true).unwrap().find(b"@"), None);
        assert_eq!(Literal::new(b"a", false).unwrap().find(b"A"), None);
        assert!(Literal::new("é".as_bytes(), true).is_none());
        assert!(Literal::new(b"", false).is_none());
    }

    #[test]
    fn folding_defers_to_the_regex_only_where_unicode_forms_occur() {
        let lock = Literal::new(b"mutex_lock", true).unwrap();
        let text = Literal::new(b"mutex_text", true).unwrap();
        let plain = "caf\u{e9} mutex_lock".as_bytes();
        let kelvin = "mutex_loc\u{212A}".as_bytes();
        let long_s = "\u{17F} mutex_lock".as_bytes();
        assert!(lock.answers_for(b"mutex_lock") && lock.answers_for(plain));
        assert!(!lock.answers_for(kelvin));
        // No 's' in the needle: the long s changes nothing.
        assert!(lock.answers_for(long_s));
        assert!(text.answers_for(kelvin) && text.answers_for(long_s));
        assert!(!Literal::new(b"S", true).unwrap().answers_for(long_s));
        assert!(Literal::new(b"k", false).unwrap().answers_for(kelvin));
    }
}
