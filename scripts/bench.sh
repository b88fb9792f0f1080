#!/usr/bin/env bash
# Prepares the benchmark corpus and prints the benchmark table.
#   bash scripts/bench.sh [CORPUS_DIR]     (default: target/bench-corpus)
# The corpus is the Linux 6.1 source tree from Debian's linux-source-6.1 package (about
# 78,000 files, 1.3 GB) plus generated files; ripgrep comes from Debian's ripgrep package.
set -euo pipefail
cd "$(dirname "$0")/.."
FILE_TOOLS_SETUP_RUST_ONLY=1 bash scripts/setup.sh
corpus="${1:-$PWD/target/bench-corpus}"
mkdir -p "$corpus"
corpus="$(cd "$corpus" && pwd)"
# FILE_TOOLS_BENCH names the sections (default: all but large); only search, walk, index,
# changes and mcp need the Linux tree. `large` generates trees of 100,000 and 500,000 files
# below the corpus directory (other sizes: FILE_TOOLS_BENCH_LARGE=100000,250000).
sections=",${FILE_TOOLS_BENCH:-search,walk,index,ops,overhead,changes,hosts,mcp},"
linux_wanted() { [[ $sections =~ ,(search|walk|index|changes|mcp), ]]; }
need=()
command -v rg >/dev/null 2>&1 || need+=(ripgrep)
if linux_wanted && [ ! -f /usr/src/linux-source-6.1.tar.xz ]; then need+=(linux-source-6.1); fi
if [ "${#need[@]}" -gt 0 ]; then
    sudo_cmd=""
    [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
    $sudo_cmd apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q "${need[@]}"
fi
if linux_wanted && [ ! -f "$corpus/linux/.extracted" ]; then
    echo "extracting the Linux source tree into $corpus/linux"
    rm -rf "$corpus/linux" "$corpus/linux-source-6.1"
    tar -xf /usr/src/linux-source-6.1.tar.xz -C "$corpus"
    mv "$corpus/linux-source-6.1" "$corpus/linux"
    # Debian's packaging appends "/*" and "!/debian/" to the root .gitignore, which would
    # ignore the whole tree; the benchmark searches the tree as upstream ships it.
    sed -i '/^\/\*$/d; /^!\/debian\/$/d' "$corpus/linux/.gitignore"
    touch "$corpus/linux/.extracted"
fi
python3 - "$corpus/files" <<'PY'
import os, sys
d = sys.argv[1]
os.makedirs(d, exist_ok=True)
def make(name, size):
    p = os.path.join(d, name)
    lines, n = [], 0
    while n < size:
        l = f"line {len(lines):05d} of the file, with some text to make it longer\n"
        lines.append(l); n += len(l)
    open(p, "w").write("".join(lines))
make("1k.txt", 1024)
make("300k.txt", 300 * 1024)
make("10m.txt", 10 * 1024 * 1024)
open(os.path.join(d, "patch.txt"), "w").write("".join(f"patch line {i:05d}\n" for i in range(10000)))
PY
# Features resolved over the whole workspace, as the demo and the tests do: one Wasmtime build.
cargo build --release --workspace --features file-tools-host/watch --example bench
target/release/examples/bench "$corpus"
if [[ $sections == *,hosts,* ]]; then
    # The Python and Node hosts over the same generated files (scripts/setup.sh installed
    # their packages; the component is written from the release build).
    bash scripts/setup.sh >/dev/null
    cargo build --release --workspace --bin file-tools
    target/release/file-tools component target/file-tools.wasm >/dev/null
    target/venv/bin/python examples/python/bench_host.py target/file-tools.wasm "$corpus/files"
    (cd examples/node && FILE_TOOLS_WASM="$PWD/../../target/file-tools.wasm" npm run -s transpile &&
        node bench-host.mjs "$corpus/files")
fi
if [[ $sections == *,mcp,* ]]; then
    # `file-tools mcp` against the MCP project's filesystem server (the npm package
    # @modelcontextprotocol/server-filesystem, pinned) over stdio on the Linux tree.
    fs_server=target/bench-mcp/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js
    if [ ! -f "$fs_server" ]; then
        mkdir -p target/bench-mcp
        npm install --silent --no-audit --no-fund --prefix target/bench-mcp \
            @modelcontextprotocol/server-filesystem@2026.8.31
    fi
    cargo build --release --workspace --bin file-tools
    echo
    echo "## MCP over stdio: file-tools against the MCP filesystem server (median of 50, interleaved)"
    echo
    python3 scripts/bench_mcp.py target/release/file-tools "$fs_server" "$corpus/linux"
fi
