//! The hashing of the maps keyed by paths and names (the index's records, a search's
//! listings, the walk memo, the policy's per-call verdicts): foldhash, several times
//! faster than the standard library's SipHash on short keys such as paths, which half a
//! million files look up a few times each.
//!
//! The keys come from the repository, which is hostile: with known seeds, an attacker
//! could name files whose hashes collide and make every look-up a scan of the whole map.
//! So the seed foldhash's compression depends on, which every map of an instance shares,
//! is drawn from the system's secure randomness ([`crate::fs::random`]), never from
//! addresses or the clock, which a WebAssembly instance makes predictable. (No map's order
//! reaches an output: one that did could tell an observer something of that seed.)

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use foldhash::fast::SeedableRandomState;
use foldhash::SharedSeed;

use crate::fs::random::random_u64;

/// A map whose keys come from the repository.
pub type KeyMap<K, V> = HashMap<K, V, KeyHash>;

/// Builds the hashers of [`KeyMap`]: foldhash with random seeds.
#[derive(Clone, Debug)]
pub struct KeyHash(SeedableRandomState);

/// The seed every [`KeyHash`] of this instance shares, drawn once: the secret the hashes
/// depend on (foldhash keeps it by reference).
fn shared_seed() -> &'static SharedSeed {
    static SHARED: OnceLock<SharedSeed> = OnceLock::new();
    SHARED.get_or_init(|| SharedSeed::from_u64(random_u64()))
}

impl Default for KeyHash {
    /// A hasher whose own seed is a count of the maps made: it only has to differ from
    /// the other maps' (the secret is the shared seed), and counting spares a call to the
    /// host for each map (a search makes one per directory it lists).
    fn default() -> Self {
        static MAPS: AtomicU64 = AtomicU64::new(0);
        let per_map = MAPS.fetch_add(1, Ordering::Relaxed);
        KeyHash(SeedableRandomState::with_seed(per_map, shared_seed()))
    }
}

impl BuildHasher for KeyHash {
    type Hasher = foldhash::fast::FoldHasher<'static>;

    fn build_hasher(&self) -> Self::Hasher {
        self.0.build_hasher()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_keys_hash_alike_within_a_map_and_seeds_differ_between_maps() {
        let (a, b) = (KeyHash::default(), KeyHash::default());
        let path = "src/rules/walk.rs";
        assert_eq!(a.hash_one(path), a.hash_one(String::from(path)));
        assert_ne!(a.hash_one(path), a.hash_one("src/rules/walk.rt"));
        // Two maps hash alike only by chance: their own seeds differ.
        assert_ne!(a.hash_one(path), b.hash_one(path));
        let mut m: KeyMap<String, u32> = KeyMap::default();
        for i in 0..1000 {
            m.insert(format!("d/{i}"), i);
        }
        assert!((0..1000).all(|i| m[&format!("d/{i}")] == i));
    }
}
