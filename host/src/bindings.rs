//! The one place that holds `bindgen!` for the `file-tools` world.

wasmtime::component::bindgen!({
    world: "file-tools",
    path: "../wit",
    with: {
        "agent:file-tools/host-fs.dir": crate::host_dir::OpenDir,
        "agent:file-tools/host-fs.file": crate::host_dir::OpenFile,
    },
});
