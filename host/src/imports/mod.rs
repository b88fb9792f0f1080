//! The host's side of the `file-tools` world: the bindings, and one module per imported
//! WIT interface (`audit`, `approval`, `progress`, `types`, `host-fs`), each implemented on
//! the store's data, [`state::HostState`].

mod approval;
mod audit;
// Generated from the WIT: an item has the docs its WIT item has, and the glue bindgen adds
// (linker functions, instance types) has none of its own.
#[allow(missing_docs)]
pub mod bindings;
pub(crate) mod host_fs;
mod progress;
pub(crate) mod state;
mod types;
