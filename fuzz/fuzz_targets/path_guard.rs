//! The path guard must never panic, and every path it accepts stays below the root.
#![no_main]

use libfuzzer_sys::fuzz_target;

use file_tools_guest::path::LogicalPath;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(p) = LogicalPath::parse(text) {
            assert!(!p.is_root());
            assert!(p.parts().all(|c| !c.is_empty() && c != "." && c != ".." && !c.contains('/')));
            // Joined below any root, it stays below it: relative, every step downward.
            assert!(!p.as_str().starts_with('/'));
        }
    }
});
