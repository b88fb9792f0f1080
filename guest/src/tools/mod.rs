//! Layer 4: the tools and what they share. The session every call works against, paging
//! cursors, progress, the baseline, the transaction and its crash journal, text files and
//! the repository's conventions for new ones, each tool, and the registry that dispatches
//! a JSON call to its tool. May import every lower layer (`rules`, `text`, `fs`) and the
//! shared vocabulary at the crate root, never the component shell.

pub(crate) mod baseline;
pub(crate) mod changes;
pub(crate) mod conventions;
pub(crate) mod cursor;
mod dispatch;
pub(crate) mod edit;
pub(crate) mod index;
pub(crate) mod journal;
pub mod list;
pub mod media;
pub(crate) mod mutate;
pub mod patch;
pub(crate) mod progress;
pub mod read;
pub mod search;
pub mod session;
pub(crate) mod text_file;
pub(crate) mod txn;
pub(crate) mod workspace;

pub use dispatch::*;
