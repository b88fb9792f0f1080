# Sourced by scripts/demo.sh and scripts/test.sh. Starts the build of the component that
# host/build.rs would make (its nested cargo: the profile `guest`, wasm32-wasip2, the same
# target directory) in the background, so that it runs beside the compiling of Wasmtime
# instead of after it: cargo starts the host's build script late, since few units wait on
# it (about 300 s into a cold build on two cores). The build script then finds the
# component built, or waits for this build on cargo's lock of that directory, and builds
# nothing again. Keep the command equal to host/build/guest.rs's.
start_guest_build() {
    cargo build -q --profile guest --target wasm32-wasip2 -p file-tools-guest \
        --target-dir "${FILE_TOOLS_GUEST_TARGET_DIR:-target/guest}" &
    guest_build_pid=$!
}

# Waits for the build start_guest_build began; fails as it failed.
finish_guest_build() {
    wait "$guest_build_pid"
}
