//! Layer 1, the bottom: the filesystem port (one name per operation, never following a
//! link), hashing of what it reads, and the system's randomness. Imports nothing from the
//! other layers, only the shared vocabulary at the crate root (`error`, `api`, `audit`,
//! `fault`).

pub(crate) mod hash;
pub(crate) mod port;
pub(crate) mod random;
