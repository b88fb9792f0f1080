//! Tests that cross modules and layers: property tests, paging and summaries on trees
//! whose true counts are known, and the check that the layers import only downward.

mod layers;
mod paging;
mod properties;
mod summaries;
