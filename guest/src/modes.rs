//! Permission bits. WASI has no call to read or set them, so a replaced file would lose its
//! executable bit; the host's `host-fs.copy-mode` import puts it back before the rename.
//! Natively (unit tests) nothing is done.

use crate::path::LogicalPath;

/// Asks the host to give `to` the permission bits of `from`. Failure is not an error: the
/// content is what the call promises, the bits are a courtesy.
pub fn copy_mode(from: &LogicalPath, to: &LogicalPath) -> bool {
    #[cfg(target_arch = "wasm32")]
    {
        crate::component::copy_mode(&from.to_string(), &to.to_string())
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        let _ = (from, to);
        false
    }
}
