//! file-tools: repository file tools for AI agents, as a WebAssembly component.
//!
//! The logic lives in plain modules that also build natively and are unit-tested there:
//! the path guard (`path`), classification (`classify`), policy (`policy`), symlink
//! resolution (`fsx`), walks (`walk`) and the tools themselves. `component` is the thin
//! shell that binds them to the `file-tools` WIT world.

pub mod api;
pub mod approval;
pub mod audit;
pub mod baseline;
pub mod bytes;
pub mod changes;
pub mod classify;
pub mod conventions;
pub mod cursor;
pub mod diff;
pub mod edit;
pub mod error;
pub mod fault;
pub mod fold;
pub mod fsx;
pub mod glob;
pub mod hash;
pub mod ignore_rules;
pub mod journal;
pub mod list;
pub mod literal;
pub mod mutate;
#[cfg(test)]
mod paging;
pub mod patch;
pub mod path;
pub mod policy;
pub mod port;
pub mod prefixes;
pub mod progress;
#[cfg(test)]
mod properties;
pub mod read;
pub mod search;
pub mod services;
pub mod session;
pub mod simd;
pub mod sniff;
pub mod snippet;
#[cfg(test)]
mod summaries;
pub mod text;
pub mod tools;
pub mod txn;
pub mod visible;
pub mod walk;
pub mod workspace;

#[cfg(target_arch = "wasm32")]
mod component;
