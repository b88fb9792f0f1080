//! Where any of a few short literal prefixes may start, sixteen positions at a time.
//!
//! The first four bytes of each prefix are its fingerprint. Prefixes are put in at most
//! eight buckets (one bit each) by their first byte. For each of the four offsets, two
//! sixteen-entry tables give the buckets that allow a byte with a given low or high nibble
//! there; a position is a candidate when some bucket allows all four bytes from it. Looking
//! a nibble up is one vector shuffle in the component, so sixteen positions cost a few dozen
//! vector operations and no branch, where a multi-literal automaton takes a step per byte.
//! Candidates are only likely starts: the caller compares them whole.

use crate::text::simd::Lanes;

/// Bytes of each prefix in its fingerprint (every prefix is at least this long).
pub const WIDTH: usize = 4;
const LANES: usize = 16;
/// Starts tested per step: four vectors' worth, so that one branch covers them.
const BLOCK: usize = 4 * LANES;

/// Fingerprint tables for a set of prefixes.
#[derive(Debug, Clone, Copy)]
pub struct Prefixes {
    /// Per offset: buckets allowing each low nibble there.
    low: [[u8; 16]; WIDTH],
    /// Per offset: buckets allowing each high nibble there.
    high: [[u8; 16]; WIDTH],
}

impl Prefixes {
    /// Tables for `prefixes`. A constant evaluation fails to compile if a prefix is shorter
    /// than `WIDTH` or the prefixes start with more than eight distinct bytes.
    pub const fn new(prefixes: &[&[u8]]) -> Prefixes {
        let mut firsts = [0u8; 8];
        let mut buckets = 0;
        let mut low = [[0u8; 16]; WIDTH];
        let mut high = [[0u8; 16]; WIDTH];
        let mut p = 0;
        while p < prefixes.len() {
            let prefix = prefixes[p];
            assert!(
                prefix.len() >= WIDTH,
                "a prefix is shorter than the fingerprint"
            );
            let mut bucket = 0;
            while bucket < buckets && firsts[bucket] != prefix[0] {
                bucket += 1;
            }
            if bucket == buckets {
                assert!(buckets < 8, "more than eight distinct first bytes");
                firsts[bucket] = prefix[0];
                buckets += 1;
            }
            let mut k = 0;
            while k < WIDTH {
                low[k][(prefix[k] & 15) as usize] |= 1 << bucket;
                high[k][(prefix[k] >> 4) as usize] |= 1 << bucket;
                k += 1;
            }
            p += 1;
        }
        Prefixes { low, high }
    }

    /// Calls `is_one` with each candidate start in `hay`, in order, until it answers true;
    /// whether one did. Every real start of a prefix is a candidate (a start closer than
    /// `WIDTH` to the end holds no prefix).
    pub fn any(&self, hay: &[u8], mut is_one: impl FnMut(usize) -> bool) -> bool {
        let tables = Tables {
            low: self.low.map(|t| Lanes::load(&t)),
            high: self.high.map(|t| Lanes::load(&t)),
            nibble: Lanes::splat(0x0F),
        };
        let zero = Lanes::splat(0);
        let mut at = 0;
        // A block tests starts at..at + BLOCK and reads up to at + BLOCK + WIDTH - 1.
        while at + BLOCK + WIDTH - 1 <= hay.len() {
            let q: [Lanes; 4] = core::array::from_fn(|i| tables.allowed(hay, at + i * LANES));
            if q[0].or(q[1]).or(q[2].or(q[3])).any() {
                let mut starts = q.iter().enumerate().fold(0u64, |m, (i, v)| {
                    m | u64::from(!v.eq(zero).top_bits()) << (i * LANES)
                });
                while starts != 0 {
                    if is_one(at + starts.trailing_zeros() as usize) {
                        return true;
                    }
                    starts &= starts - 1;
                }
            }
            at += BLOCK;
        }
        let last = hay.len().saturating_sub(WIDTH - 1);
        (at..last).any(|c| self.allows(&hay[c..c + WIDTH]) && is_one(c))
    }

    /// Whether some bucket allows these `WIDTH` bytes.
    fn allows(&self, bytes: &[u8]) -> bool {
        let mut buckets = 0xFF;
        for (k, &b) in bytes.iter().enumerate().take(WIDTH) {
            buckets &= self.low[k][usize::from(b & 15)] & self.high[k][usize::from(b >> 4)];
        }
        buckets != 0
    }
}

/// The tables as vectors.
struct Tables {
    low: [Lanes; WIDTH],
    high: [Lanes; WIDTH],
    nibble: Lanes,
}

impl Tables {
    /// Per lane, the buckets allowing the `WIDTH` bytes from `at + lane`; the caller keeps
    /// `at + LANES + WIDTH - 1` within `hay`.
    #[inline(always)]
    fn allowed(&self, hay: &[u8], at: usize) -> Lanes {
        let mut allowed = Lanes::splat(0xFF);
        for k in 0..WIDTH {
            let Some(bytes) = hay.get(at + k..).and_then(|h| h.first_chunk::<LANES>()) else {
                return Lanes::splat(0);
            };
            let v = Lanes::load(bytes);
            let by_low = v.and(self.nibble).look_up_in(self.low[k]);
            let by_high = v.high_nibbles().look_up_in(self.high[k]);
            allowed = allowed.and(by_low).and(by_high);
        }
        allowed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SET: Prefixes = Prefixes::new(&[b"ghp_", b"github_pat_", b"AKIA", b"sk-ant-", b"xoxb-"]);
    const ALL: &[&[u8]] = &[b"ghp_", b"github_pat_", b"AKIA", b"sk-ant-", b"xoxb-"];

    fn candidates(hay: &[u8]) -> Vec<usize> {
        let mut seen = vec![];
        SET.any(hay, |c| {
            seen.push(c);
            false
        });
        seen
    }

    #[test]
    fn every_real_start_is_a_candidate_at_every_offset_and_block_edge() {
        for len in 0..140 {
            for at in 0..len {
                for p in ALL {
                    let mut hay = vec![b'.'; len];
                    let end = (at + p.len()).min(len);
                    hay[at..end].copy_from_slice(&p[..end - at]);
                    let cands = candidates(&hay);
                    let whole = at + p.len() <= len;
                    if whole {
                        assert!(cands.contains(&at), "{len} {at} {}", p.len());
                    }
                    // Filler holds no fingerprint: the only candidate is the planted one.
                    assert!(cands.iter().all(|&c| c == at), "{len} {at} {cands:?}");
                    assert!(cands.windows(2).all(|w| w[0] < w[1]));
                }
            }
        }
    }

    #[test]
    fn the_first_confirmed_candidate_stops_the_scan() {
        let hay = b"xx AKIA ghp_ yy ghp_ zz".repeat(3);
        let mut asked = vec![];
        let found = SET.any(&hay, |c| {
            asked.push(c);
            hay[c..].starts_with(b"ghp_")
        });
        assert!(found);
        assert_eq!(asked, vec![3, 8]);
        assert!(!SET.any(&hay, |_| false));
    }

    #[test]
    fn text_without_the_fingerprints_yields_few_candidates() {
        let text = include_bytes!("../tools/search/mod.rs");
        let cands = candidates(text);
        // Every candidate shares each fingerprint byte's nibbles with some prefix of its bucket.
        assert!(cands.len() < text.len() / 200, "{}", cands.len());
        assert!(cands.iter().all(|&c| SET.allows(&text[c..c + WIDTH])));
    }
}
