//! The one place that holds `bindgen!` for the `file-tools` world.

wasmtime::component::bindgen!({
    world: "file-tools",
    path: "../wit",
});
