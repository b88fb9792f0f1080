//! Fault injection for tests of the host's trap handling. In the normal build `point` is a
//! no-op; the `fault-injection` build panics when the environment variable
//! `FILE_TOOLS_FAULT` names the point reached (`call:<tool>` when a call starts, `commit`
//! after a mutation's temporary files are written and before any rename).

/// Marks a point where a test may inject a panic.
#[inline]
pub fn point(name: &str) {
    #[cfg(feature = "fault-injection")]
    if std::env::var(file_tools_contract::env::FAULT).is_ok_and(|v| v == name) {
        panic!("fault injected at {name}");
    }
    #[cfg(not(feature = "fault-injection"))]
    let _ = name;
}

/// The point `call:<tool>` where a call starts (its name made only in the
/// fault-injection build: every call passes here).
#[inline]
pub fn call_starts(tool: &str) {
    #[cfg(feature = "fault-injection")]
    point(&format!("call:{tool}"));
    #[cfg(not(feature = "fault-injection"))]
    let _ = tool;
}
