//! Trigram filters: a compact, lossy record of which three-byte sequences a text holds.
//!
//! A text's trigrams are its overlapping windows of three bytes, ASCII letters folded to
//! lowercase (so one filter serves exact and case-insensitive queries; other bytes are
//! kept as they are). A [`Filter`] is a bit set in which each distinct trigram of the text
//! sets two bits chosen by a hash (a Bloom filter with two probes). It answers "may hold"
//! or "certainly does not hold": with [`BITS_PER_TRIGRAM`] bits per distinct trigram a
//! trigram the text lacks passes by mistake about one time in twenty, and a query needs all
//! of its trigrams to pass, so a literal of six bytes (four trigrams) lets through about
//! one file in 150,000 that lacks it. A filter never says "does not hold" of a trigram
//! the text holds, which is all that the search's use of it needs: it only decides which
//! files need not be read.

/// Bits of filter per distinct trigram of the text.
pub const BITS_PER_TRIGRAM: usize = 8;

/// A trigram: three bytes, ASCII letters lowercased, in the low 24 bits.
pub type Trigram = u32;

/// The trigram of three bytes.
fn trigram(a: u8, b: u8, c: u8) -> Trigram {
    u32::from(a.to_ascii_lowercase()) << 16
        | u32::from(b.to_ascii_lowercase()) << 8
        | u32::from(c.to_ascii_lowercase())
}

/// The two bit positions of `t` in a filter of `bits` bits.
fn probes(t: Trigram, bits: u64) -> [u64; 2] {
    let h = u64::from(t).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let hi = h >> 32;
    let lo = h & 0xFFFF_FFFF;
    [(hi * bits) >> 32, (lo * bits) >> 32]
}

/// Reusable working memory for [`Filter::of`]: a bit per possible trigram (2 MiB) and the
/// list of those set, so that each text is deduplicated in one pass and cleared after.
pub struct Scratch {
    seen: Vec<u64>,
    found: Vec<Trigram>,
}

impl Default for Scratch {
    fn default() -> Self {
        Scratch {
            seen: vec![0; (1 << 24) / 64],
            found: Vec::new(),
        }
    }
}

impl std::fmt::Debug for Scratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Scratch")
    }
}

/// Which trigrams a text may hold.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Filter {
    words: Vec<u64>,
}

impl Filter {
    /// The filter of `text`.
    pub fn of(text: &[u8], scratch: &mut Scratch) -> Filter {
        scratch.found.clear();
        for w in text.windows(3) {
            let t = trigram(w[0], w[1], w[2]);
            let (word, bit) = ((t >> 6) as usize, 1u64 << (t & 63));
            if scratch.seen[word] & bit == 0 {
                scratch.seen[word] |= bit;
                scratch.found.push(t);
            }
        }
        let n = scratch.found.len();
        let words = (n * BITS_PER_TRIGRAM).div_ceil(64);
        let mut filter = Filter {
            words: vec![0; words],
        };
        let bits = words as u64 * 64;
        for &t in &scratch.found {
            scratch.seen[(t >> 6) as usize] = 0;
            for p in probes(t, bits) {
                filter.words[(p >> 6) as usize] |= 1 << (p & 63);
            }
        }
        filter
    }

    /// A filter from its stored words (see [`Filter::words`]).
    pub fn from_words(words: Vec<u64>) -> Filter {
        Filter { words }
    }

    /// The filter's bits, for storing.
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// False when the text certainly does not hold `t`.
    pub fn may_hold(&self, t: Trigram) -> bool {
        let bits = self.words.len() as u64 * 64;
        if bits == 0 {
            return false;
        }
        probes(t, bits)
            .iter()
            .all(|&p| self.words[(p >> 6) as usize] & (1 << (p & 63)) != 0)
    }

    /// False when the text certainly lacks one of `ts`.
    pub fn may_hold_all(&self, ts: &[Trigram]) -> bool {
        ts.iter().all(|&t| self.may_hold(t))
    }
}

/// The trigrams of `needle` that every text holding it holds, leaving out each window
/// `keep` refuses (a caller leaves out windows whose bytes another spelling could match).
pub fn of_needle(needle: &[u8], keep: impl Fn(&[u8]) -> bool) -> Vec<Trigram> {
    let mut out: Vec<Trigram> = needle
        .windows(3)
        .filter(|w| keep(w))
        .map(|w| trigram(w[0], w[1], w[2]))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filter_holds_every_trigram_of_its_text_in_either_case() {
        let mut s = Scratch::default();
        let text = b"fn Main() { let x = \xc3\xa9t\xc3\xa9; }\r\n";
        let f = Filter::of(text, &mut s);
        for w in text.windows(3) {
            assert!(f.may_hold(trigram(w[0], w[1], w[2])), "{w:?}");
        }
        assert!(f.may_hold_all(&of_needle(b"MAIN()", |_| true)));
        assert!(f.may_hold_all(&of_needle("été".as_bytes(), |_| true)));
    }

    #[test]
    fn a_filter_rejects_most_trigrams_its_text_lacks() {
        let mut s = Scratch::default();
        let text: Vec<u8> = (0..4000u32)
            .flat_map(|i| format!("word{i} ").into_bytes())
            .collect();
        let f = Filter::of(&text, &mut s);
        // Needles of six letters the text never uses: none is in it.
        let letters = b"abcefghijklmnpqstuvxyz";
        let mut passed = 0;
        for i in 0..10_000usize {
            let needle: Vec<u8> = (0..6)
                .map(|j| letters[(i * 7919 + j * 104_729) / (j + 1) % letters.len()])
                .collect();
            let ts = of_needle(&needle, |_| true);
            passed += usize::from(f.may_hold_all(&ts));
        }
        // Four trigrams at about 5% each: well under one in a thousand pass by mistake.
        assert!(passed < 10, "{passed} of 10000 absent needles passed");
    }

    #[test]
    fn the_scratch_is_clean_after_each_text() {
        let mut s = Scratch::default();
        let _ = Filter::of(b"abcdefgh", &mut s);
        let second = Filter::of(b"abcdefgh", &mut s);
        assert_eq!(second, Filter::of(b"abcdefgh", &mut Scratch::default()));
        assert!(s.seen.iter().all(|&w| w == 0));
    }

    #[test]
    fn a_short_or_empty_text_holds_no_trigram() {
        let mut s = Scratch::default();
        for text in [&b""[..], b"ab"] {
            let f = Filter::of(text, &mut s);
            assert!(!f.may_hold(trigram(b'a', b'b', b'c')));
            assert!(f.words().is_empty());
        }
    }

    #[test]
    fn needles_keep_only_the_windows_asked_for() {
        let all = of_needle(b"mask", |_| true);
        assert_eq!(all.len(), 2);
        let without_s = of_needle(b"mantis", |w| !w.contains(&b's'));
        let expected: Vec<Trigram> = [b"man", b"ant", b"nti"]
            .iter()
            .map(|w| trigram(w[0], w[1], w[2]))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        assert_eq!(without_s, expected);
        assert!(of_needle(b"ab", |_| true).is_empty());
    }
}
