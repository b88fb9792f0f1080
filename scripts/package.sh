#!/usr/bin/env bash
# Builds the three packages of file-tools into target/dist (or $1), from the release build
# of the workspace (built here if missing):
#   - file-tools-host-VERSION.crate: the host crate, with the components it embeds copied
#     into host/component/ (not kept in git) since a packaged crate has no ../guest, and
#     file-tools-contract-VERSION.crate, the names host and component share, which it needs;
#   - agent_file_tools-VERSION-py3-none-any.whl: examples/python/file_tools.py as the module
#     file_tools with the component as package data (packages/python/pyproject.toml,
#     setuptools from target/venv, as pinned in tests/python/requirements.txt);
#   - agent-file-tools-VERSION.tgz: examples/node/file-tools.mjs and host-fs.mjs and the
#     component's `jco transpile` output, `npm pack`ed (packages/node/package.json).
# Needs `bash scripts/setup.sh` first (target/venv, examples/node/node_modules).
# tests/packages/test_packages.py installs each package into a clean place and uses it.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DIST=$(mkdir -p "${1:-target/dist}" && cd "${1:-target/dist}" && pwd)
STAGE=$ROOT/target/packages
BIN=$ROOT/target/release/file-tools

cargo build --release --offline --workspace --bin file-tools
VERSION=$("$BIN" --version | awk '{print $2}')

echo "== package: Rust crate file-tools-host $VERSION"
rm -rf host/component
mkdir -p host/component
"$BIN" component host/component/file_tools.wasm >/dev/null
"$BIN" component --standalone host/component/file_tools_standalone.wasm >/dev/null
# Not verified here: cargo's verification would build the crate in the dev profile, a cold
# build of Wasmtime. tests/packages/test_packages.py builds the unpacked crate in release,
# with the workspace's target directory, instead. --allow-dirty: the components in
# host/component are not in git (cargo counts ignored files it packages as changes).
# Both crates in one call: cargo then resolves the host's dependency on the contract crate
# against the contract crate it has just packaged, not against the registry.
cargo package -p file-tools-contract -p file-tools-host --offline --no-verify --allow-dirty --quiet
cp "target/package/file-tools-contract-$VERSION.crate" "target/package/file-tools-host-$VERSION.crate" "$DIST/"

echo "== package: Python wheel agent-file-tools"
rm -rf "$STAGE/python"
mkdir -p "$STAGE/python/file_tools"
cp packages/python/pyproject.toml packages/python/README.md "$STAGE/python/"
cp examples/python/file_tools.py "$STAGE/python/file_tools/__init__.py"
"$BIN" component "$STAGE/python/file_tools/file-tools.wasm" >/dev/null
grep -qx "version = \"$VERSION\"" "$STAGE/python/pyproject.toml" ||
    { echo "package: packages/python/pyproject.toml's version is not $VERSION" >&2; exit 1; }
target/venv/bin/pip wheel --quiet --disable-pip-version-check --no-deps --no-build-isolation \
    --wheel-dir "$DIST" "$STAGE/python"

echo "== package: npm agent-file-tools"
rm -rf "$STAGE/node"
mkdir -p "$STAGE/node"
cp packages/node/package.json packages/node/README.md examples/node/file-tools.mjs examples/node/host-fs.mjs \
    "$STAGE/node/"
"$BIN" component "$STAGE/node/file-tools.wasm" >/dev/null
examples/node/node_modules/.bin/jco transpile "$STAGE/node/file-tools.wasm" -o "$STAGE/node/gen" \
    --instantiation async --name file-tools --quiet
node examples/node/patch-glue.mjs "$STAGE/node/gen/file-tools.js"
rm "$STAGE/node/file-tools.wasm"
node -e 'const p = require(process.argv[1]); if (p.version !== process.argv[2]) { console.error(`package: packages/node/package.json version ${p.version} is not ${process.argv[2]}`); process.exit(1); }' \
    "$STAGE/node/package.json" "$VERSION"
(cd "$STAGE/node" && npm pack --silent --pack-destination "$DIST" >/dev/null)

ls -1 "$DIST"
