#!/usr/bin/env bash
# Runs the official MCP conformance suite (the npm registry's @modelcontextprotocol/conformance,
# installed by scripts/setup.sh with the Node 22 it needs) against `file-tools mcp --http`:
# the server scenarios that need no fixture tools, each against a server on a free loopback
# port serving a small temporary repository. Fails when any check of any scenario fails.
#
# Environment: FILE_TOOLS_BIN names the `file-tools` binary (default target/release/file-tools).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=${FILE_TOOLS_BIN:-$ROOT/target/release/file-tools}
NODE=$ROOT/target/node22/node_modules/.bin/node
SUITE=$ROOT/target/conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js
SCENARIOS=(
    server-initialize
    ping
    tools-list
    resources-list
    completion-complete
    dns-rebinding-protection
)
for need in "$BIN" "$NODE" "$SUITE"; do
    if [ ! -e "$need" ]; then
        echo "conformance: $need is missing (run scripts/setup.sh and build first)" >&2
        exit 1
    fi
done

work=$(mktemp -d)
pid=
cleanup() {
    if [ -n "$pid" ]; then
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/repo/src"
printf '# conformance\n\nA repository served to the MCP conformance suite.\n' >"$work/repo/README.md"
printf 'pub fn answer() -> u32 {\n    42\n}\n' >"$work/repo/src/lib.rs"

FILE_TOOLS_CACHE_DIR="$ROOT/target/file-tools-cache" XDG_STATE_HOME="$work/state" \
    "$BIN" --repo "$work/repo" mcp --http 127.0.0.1:0 2>"$work/server.err" &
pid=$!
url=
for _ in $(seq 600); do
    url=$(sed -n 's/.*serving MCP on \(http:[^ ]*\).*/\1/p' "$work/server.err" | head -n 1)
    [ -n "$url" ] && break
    if ! kill -0 "$pid" 2>/dev/null; then
        echo "conformance: the server did not start:" >&2
        cat "$work/server.err" >&2
        exit 1
    fi
    sleep 0.2
done
if [ -z "$url" ]; then
    echo "conformance: the server did not start within 120 s" >&2
    exit 1
fi

failed=()
for scenario in "${SCENARIOS[@]}"; do
    echo "== conformance: $scenario"
    if ! (cd "$work" && "$NODE" "$SUITE" server --url "$url/mcp" --scenario "$scenario"); then
        failed+=("$scenario")
    fi
done
if [ "${#failed[@]}" -gt 0 ]; then
    echo "conformance: failed: ${failed[*]}" >&2
    echo "conformance: the server's stderr:" >&2
    cat "$work/server.err" >&2
    exit 1
fi
echo "conformance: all ${#SCENARIOS[@]} scenarios pass"
