#!/usr/bin/env bash
# Load benchmark of the MCP server over HTTP (1, 4, 16 clients on 1 and 4 repositories) and
# stdio, on loopback; prints a table (cli/examples/bench_mcp.rs says what it measures).
set -euo pipefail
cd "$(dirname "$0")/.."
FILE_TOOLS_SETUP_RUST_ONLY=1 bash scripts/setup.sh
cargo build --release --workspace --bin file-tools --example bench_mcp
target/release/examples/bench_mcp
