//! Random numbers no one outside the instance can predict, for keys (the session's
//! cursor key, the seeds of the maps keyed by repository paths).
//!
//! In the component they come from WASI's `random` interface, the host's secure source.
//! The standard library's hash keys come from `insecure-seed` instead, which a host may
//! answer with anything, even a constant. Natively (tests, benchmarks) the standard
//! library's keys do: it takes them from the operating system's randomness.

/// A random 64-bit number from the system's secure source.
pub fn random_u64() -> u64 {
    #[cfg(target_os = "wasi")]
    {
        wasip2::random::random::get_random_u64()
    }
    #[cfg(not(target_os = "wasi"))]
    {
        use std::hash::BuildHasher;
        // Each `RandomState` is keyed anew from keys drawn once from the system.
        std::collections::hash_map::RandomState::new().hash_one(0u64)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn draws_differ() {
        let draws: std::collections::BTreeSet<u64> = (0..64).map(|_| super::random_u64()).collect();
        assert_eq!(draws.len(), 64);
    }
}
