#![deny(missing_docs)]
//! The Wasmtime host of the file-tools component.
//!
//! A [`Runtime`] holds the engine and the compiled component; a [`Session`] is one
//! repository with one policy, limits and an audit sink:
//!
//! ```no_run
//! use file_tools_host::{Runtime, Session};
//! use file_tools_host::tools::ReadFileArgs;
//!
//! let runtime = Runtime::new()?;
//! let mut session = Session::builder(&runtime).repo("/path/to/repo").build()?;
//! let file = session.read_file(&ReadFileArgs {
//!     path: "src/lib.rs".into(),
//!     start_line: None, max_lines: Some(50), max_bytes: None, line_numbers: None,
//! })?;
//! println!("{} ({})", file.content, file.sha256);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod approval;
pub mod audit;
pub mod audit_key;
pub mod audit_log;
pub mod call;
mod case_probe;
pub mod error;
mod imports;
pub mod index_build;
#[cfg(all(feature = "watch", target_os = "linux"))]
mod listing_cache;
pub mod observe;
mod private_dir;
pub mod runtime;
pub mod session;
pub mod sharded;
#[cfg(all(feature = "watch", target_os = "linux"))]
mod tree_watch;
#[cfg(feature = "standalone")]
mod wassette;
#[cfg(feature = "watch")]
pub mod watch;

pub use imports::bindings;

pub use approval::{notice as approval_notice, ApprovalRequest, Approver};
pub use audit::{event_json, AuditSink, JsonLinesSink};
pub use bindings::agent::file_tools::types::{AuditEvent, ErrorCode, FileKind, ToolError};
pub use call::{CallOptions, CancelToken, Progress, ProgressUpdate};
pub use error::{code_name, HostError};
pub use observe::{CallObserver, CallRecord};
pub use runtime::{Runtime, RuntimeBuilder};
pub use session::{describe_tools, Limits, Session, SessionBuilder};
pub use sharded::ShardedSearch;
#[cfg(feature = "watch")]
pub use watch::{watch, Watch, WatchEvent, WatchOptions};

/// `bytes` as lower-case hex digits (keys, tokens, hashes in names).
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The typed argument and result records of every tool.
pub mod tools {
    pub use crate::bindings::exports::agent::file_tools::tools::*;
}
