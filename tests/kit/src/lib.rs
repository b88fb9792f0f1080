//! What only the tests need, kept out of the crates a user builds.

/// The path of the guest component built with the `fault-injection` feature: its tools can
/// be told to trap, exhaust memory or loop, so that the host's handling of each is tested.
pub const FAULT_WASM: &str = env!("FILE_TOOLS_GUEST_FAULT_WASM");
