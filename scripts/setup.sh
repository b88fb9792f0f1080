#!/usr/bin/env bash
# One-time set-up of a fresh machine: everything the build and the tests need.
# Safe to run again: each step checks before it installs.
#   - the wasm32-wasip2 Rust target (the component's build target)
#   - the wasmtime CLI 48 from the Rust package registry (tests of the standalone component)
#   - a Python virtualenv in target/venv with tests/python/requirements.txt (MCP client,
#     PyPI wasmtime, pytest)
#   - Wassette, the MCP runner for Wasm components (scripts/setup-wassette.sh)
#   - the Node example host's npm packages (jco, preview2-shim)
#   - downloads for the package tests' clean installs (tests/packages): PyPI's wasmtime
#     wheel in target/wheels, preview2-shim in the npm cache target/npm-cache
#   - the official MCP conformance suite (the npm registry's @modelcontextprotocol/conformance)
#     in target/conformance, and the Node 22 it needs (the npm registry's package `node`, a
#     Node binary) in target/node22 (scripts/conformance.sh)
#   - the MCP bundle tool (the npm registry's @anthropic-ai/mcpb) in target/mcpb-cli, which
#     scripts/mcpb.sh packs the desktop clients' bundle with
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null 2>&1; then
    echo "setup: cargo is not installed; install Rust (rustup) first" >&2
    exit 1
fi
if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-wasip2; then
    echo "setup: adding the wasm32-wasip2 Rust target"
    rustup target add wasm32-wasip2
fi

if [ "${FILE_TOOLS_SETUP_RUST_ONLY:-0}" = 1 ]; then
    exit 0
fi

CARGO_BIN="${CARGO_HOME:-$HOME/.cargo}/bin"
if ! "$CARGO_BIN/wasmtime" --version 2>/dev/null | grep -q '^wasmtime 48\.'; then
    echo "setup: installing the wasmtime CLI 48 from the Rust package registry (a few minutes, once)"
    # Only what `wasmtime run --invoke` needs: far fewer crates than the default CLI.
    cargo install --locked wasmtime-cli@48.0.0 --no-default-features \
        --features run,cranelift,component-model
fi

# The case-insensitive file system of tests/python/test_casefold_fs.py is a FUSE mount:
# Debian's fuse (fusermount) and libfuse2 (PyPI's fusepy, in the requirements, loads it).
if ! ldconfig -p 2>/dev/null | grep -q 'libfuse\.so\.2' || ! command -v fusermount >/dev/null 2>&1; then
    echo "setup: Debian's fuse and libfuse2 (the case-insensitive file system test)"
    sudo_cmd=""
    [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
    $sudo_cmd apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q fuse libfuse2 >/dev/null
fi

# The CLI test of the index build's progress line runs it on a terminal through script(1),
# from Debian's bsdutils (essential, so almost always present).
if ! command -v script >/dev/null 2>&1; then
    echo "setup: Debian's bsdutils (script, for the terminal test of the CLI)"
    sudo_cmd=""
    [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
    $sudo_cmd apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q bsdutils >/dev/null
fi

if ! command -v python3 >/dev/null 2>&1; then
    echo "setup: python3 is needed for the MCP and Python host tests" >&2
    exit 1
fi
VENV=target/venv
REQ=tests/python/requirements.txt
# A virtualenv moved with its checkout keeps scripts that name the old place: made again.
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/pip" --version >/dev/null 2>&1 \
    || ! cmp -s "$REQ" "$VENV/requirements.txt"; then
    echo "setup: Python packages into $VENV"
    python3 -m venv --clear "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check -r "$REQ"
    cp "$REQ" "$VENV/requirements.txt"
fi

# The clean virtualenv of tests/packages installs with --no-index from here.
WASMTIME_PY=$(sed -n 's/^wasmtime==//p' "$REQ")
if ! ls target/wheels/wasmtime-"$WASMTIME_PY"-*.whl >/dev/null 2>&1; then
    echo "setup: PyPI's wasmtime $WASMTIME_PY wheel into target/wheels"
    "$VENV/bin/pip" download --quiet --disable-pip-version-check --dest target/wheels \
        "wasmtime==$WASMTIME_PY"
fi

# When Wassette cannot be set up, the script says why and tests/python/test_wassette.py
# fails with that reason; the other tests do not need it.
if ! bash scripts/setup-wassette.sh; then
    echo "setup: continuing without Wassette (its test will fail with the reason above)" >&2
fi

if ! command -v npm >/dev/null 2>&1; then
    echo "setup: node and npm are needed for the Node host example" >&2
    exit 1
fi
if [ ! -d examples/node/node_modules ] || [ examples/node/package-lock.json -nt examples/node/node_modules ]; then
    echo "setup: npm packages for examples/node"
    # `npm install`, not `npm ci`: npm 11 writes lock files without the other platforms'
    # optional packages and then refuses them in `npm ci`. The versions are pinned in
    # package.json and the lock file.
    (cd examples/node && npm install --no-audit --no-fund --loglevel=error)
    touch examples/node/node_modules
fi

# The clean npm project of tests/packages installs with --offline from this cache.
SHIM=$(node -p 'require("./examples/node/package.json").dependencies["@bytecodealliance/preview2-shim"]')
if [ ! -f "target/npm-cache/.preview2-shim-$SHIM" ]; then
    echo "setup: preview2-shim $SHIM into the npm cache target/npm-cache"
    rm -rf target/npm-cache-fill
    mkdir -p target/npm-cache-fill
    (cd target/npm-cache-fill && echo '{"private": true}' >package.json &&
        npm install --no-audit --no-fund --loglevel=error --cache ../npm-cache \
            "@bytecodealliance/preview2-shim@$SHIM")
    rm -rf target/npm-cache-fill
    touch "target/npm-cache/.preview2-shim-$SHIM"
fi

# The MCP conformance suite needs Node 22; the machine's node may be older, so a Node binary
# from the npm registry goes to target/node22. Both versions are pinned.
NODE22_VERSION=22.23.3
CONFORMANCE_VERSION=0.1.16
if ! target/node22/node_modules/.bin/node --version 2>/dev/null | grep -qx "v$NODE22_VERSION"; then
    echo "setup: Node $NODE22_VERSION into target/node22 (for the MCP conformance suite)"
    rm -rf target/node22
    npm install --prefix target/node22 --no-audit --no-fund --loglevel=error "node@$NODE22_VERSION"
fi
CONFORMANCE_PKG=target/conformance/node_modules/@modelcontextprotocol/conformance/package.json
if [ "$(node -p "try { require('./$CONFORMANCE_PKG').version } catch { '' }")" != "$CONFORMANCE_VERSION" ]; then
    echo "setup: the MCP conformance suite $CONFORMANCE_VERSION into target/conformance"
    rm -rf target/conformance
    npm install --prefix target/conformance --no-audit --no-fund --loglevel=error \
        "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION"
fi

# The MCP bundle tool (scripts/mcpb.sh, tests/packages/test_mcpb.py), pinned.
MCPB_VERSION=2.1.2
MCPB_PKG=target/mcpb-cli/node_modules/@anthropic-ai/mcpb/package.json
if [ "$(node -p "try { require('./$MCPB_PKG').version } catch { '' }")" != "$MCPB_VERSION" ]; then
    echo "setup: the MCP bundle tool $MCPB_VERSION into target/mcpb-cli"
    rm -rf target/mcpb-cli
    npm install --prefix target/mcpb-cli --no-audit --no-fund --loglevel=error \
        "@anthropic-ai/mcpb@$MCPB_VERSION"
fi
