//! Layer 3: what may be touched and how it is reached. The path guard, case folding,
//! classification, media types, globs, ignore rules, secret sniffing, approval rules and the
//! policy, and what applies them to the tree: path resolution (`fsx`), the host's services,
//! the walk.
//! May import `text`, `fs` and the shared vocabulary at the crate root.

pub(crate) mod approval;
pub(crate) mod classify;
pub(crate) mod fold;
pub mod fsx;
pub(crate) mod glob;
pub(crate) mod ignore_rules;
pub(crate) mod media;
pub mod path;
pub mod policy;
pub(crate) mod services;
pub(crate) mod sniff;
pub(crate) mod walk;
pub(crate) mod walk_memo;
