//! file-tools: repository file tools for AI agents, as a WebAssembly component.
//!
//! The logic lives in plain modules that also build natively and are unit-tested there,
//! grouped by layer; each layer imports only the layers below it:
//!
//! ```text
//! component   the shell: binds the tools to the `file-tools` WIT world (wasm only)
//!   tools     session, transactions, the tools, the JSON registry
//!   rules     path guard, classification, policy, resolution, walks
//!   text      byte and text algorithms, no file access
//!   fs        the filesystem port: one name per operation, never a link
//! ```
//!
//! Beside them, at the crate root, the vocabulary every layer shares: the contract's
//! argument and result types (`api`), error codes (`error`), audit records (`audit`) and
//! the fault-injection points (`fault`). `tests` (test builds only) checks the direction.

pub mod api;
pub mod audit;
pub mod error;
pub(crate) mod fault;

mod fs;
mod rules;
mod text;
pub mod tools;

#[cfg(target_arch = "wasm32")]
mod component;

#[cfg(test)]
mod tests;

// The public surface, at the paths the fuzz targets, the benchmarks and the host's tests
// use: the path guard, the resolved tree, the policy, a session and the tools called natively.
pub use rules::{fsx, path, policy};
pub use tools::{list, patch, read, search, session};
