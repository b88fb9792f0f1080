//! Tests that cross modules and layers: tools called end to end through the JSON registry
//! on native trees (patches, new files' conventions), property tests, paging and summaries
//! on trees whose true counts are known, and the check that the layers import only downward.

mod conventions;
mod encodings;
pub(crate) mod index;
mod index_file;
mod index_tickets;
mod index_watch;
mod layers;
mod paging;
mod patch;
mod properties;
mod summaries;
