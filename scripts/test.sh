#!/usr/bin/env bash
# Sets up the machine, then builds everything (guest component included) and runs every test:
# the Rust unit and integration tests (the wasmtime CLI ones included), the MCP server under
# the official Python MCP SDK, the official MCP conformance suite against the HTTP server,
# the component under Wassette, the Python and Node example
# hosts, the packages (crate, wheel, npm) installed into clean places and used there, and the
# MCP bundle for desktop clients (scripts/mcpb.sh) validated, unpacked and served from.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The wasmtime CLI tests use the binary setup.sh installed, wherever PATH points.
export WASMTIME="${WASMTIME:-${CARGO_HOME:-$HOME/.cargo}/bin/wasmtime}"
# The demo's build (scripts/demo.sh): the binary without its MCP server and without the
# standalone component must compile and answer `mcp` and `component --standalone` with a
# usage error naming the feature it lacks. The tests then build the whole binary over it.
cargo build --release --workspace --bin file-tools --no-default-features
for lacking in "mcp:mcp" "standalone:component --standalone target/lean-standalone.wasm"; do
    feature="${lacking%%:*}"
    set +e
    # shellcheck disable=SC2086 # the command's words
    lean="$(target/release/file-tools ${lacking#*:} 2>&1)"
    lean_exit=$?
    set -e
    if [ "$lean_exit" != 2 ] || [[ "$lean" != *"feature \`$feature\`"* ]]; then
        echo "the binary built without the $feature feature answered '${lacking#*:}' with exit $lean_exit: $lean" >&2
        exit 1
    fi
done
cargo test --release --workspace

BIN="$PWD/target/release/file-tools"
"$BIN" component target/file-tools.wasm >/dev/null
"$BIN" component --wassette target/file-tools-wassette.wasm >/dev/null

echo "== MCP server (Python MCP SDK), Wassette and the Python host (PyPI wasmtime)"
# The server keeps default session state in the user's state directory: keep it in target/.
XDG_STATE_HOME="$PWD/target/test-state" FILE_TOOLS_BIN="$BIN" FILE_TOOLS_WASM="$PWD/target/file-tools.wasm" \
    FILE_TOOLS_WASSETTE_WASM="$PWD/target/file-tools-wassette.wasm" WASSETTE_RUN="$PWD/target/venv/bin/wassette-run" \
    target/venv/bin/python -m pytest -q -p no:cacheprovider tests/python examples/python

echo "== The official MCP conformance suite against the HTTP server"
FILE_TOOLS_BIN="$BIN" bash scripts/conformance.sh

echo "== Node host (jco + preview2-shim)"
(cd examples/node && FILE_TOOLS_WASM="$PWD/../../target/file-tools.wasm" npm run -s transpile && npm test --silent)

echo "== Packages: the crate, the wheel and the npm package, installed into clean places; the MCP bundle"
bash scripts/package.sh >/dev/null
# tests/packages/test_mcpb.py builds the bundle itself (scripts/mcpb.sh) from this binary.
FILE_TOOLS_BIN="$BIN" target/venv/bin/python -m pytest -q -p no:cacheprovider tests/packages
