//! The one place that holds `bindgen!` for the `file-tools` world.

wasmtime::component::bindgen!({
    world: "file-tools",
    path: "wit",
    with: {
        "agent:file-tools/host-fs.dir": crate::imports::host_fs::handles::OpenDir,
        "agent:file-tools/host-fs.file": crate::imports::host_fs::handles::OpenFile,
    },
});
