//! The patch parser must never panic, and what it accepts must name at least one file.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok((patches, _)) = file_tools_guest::patch::parse(text) {
            assert!(!patches.is_empty());
        }
    }
});
