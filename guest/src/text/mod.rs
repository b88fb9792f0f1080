//! Layer 2: byte and text algorithms that touch no file and know no rule (vectors of
//! sixteen bytes, literal search, diffs, snippets, invisible characters spelled out, text
//! encodings, base64).
//! May import `fs` and the shared vocabulary at the crate root.

pub(crate) mod base64;
pub(crate) mod bytes;
pub(crate) mod diff;
pub(crate) mod encoding;
pub(crate) mod keyhash;
pub(crate) mod literal;
pub(crate) mod prefixes;
pub(crate) mod simd;
pub(crate) mod snippet;
pub(crate) mod trigram;
pub(crate) mod visible;
