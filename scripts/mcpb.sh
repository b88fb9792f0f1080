#!/usr/bin/env bash
# Builds the MCP bundle (.mcpb) of a `file-tools` binary, for one-click installation in
# desktop clients, with the official bundle tool (the npm package @anthropic-ai/mcpb, pinned
# and installed into target/mcpb-cli by scripts/setup.sh). Writes into target/mcpb/:
#   - file-tools-VERSION-PLATFORM-ARCH.mcpb: the bundle (a zip: manifest.json, icon.png,
#     server/file-tools and the two policies the user's read-only choice picks between)
#   - server.json: the repository's server.json for the MCP registry with this bundle added
#     as an `mcpb` package (its release URL and SHA-256)
#   - stage/: what was packed
# The manifest is packages/mcpb/manifest.json with the version, the entry point, the
# platform and the tool list (from the binary's `schema`) filled in. The bundle holds a
# native binary, so it serves one platform: the one this script runs on unless
# MCPB_PLATFORM (darwin, linux, win32) and MCPB_ARCH say otherwise.
#
# Usage: bash scripts/mcpb.sh [BIN]   (default: $FILE_TOOLS_BIN, else target/release/file-tools)
# FILE_TOOLS_MCPB_OUT names another output directory. Prints the bundle's path.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=${1:-${FILE_TOOLS_BIN:-$ROOT/target/release/file-tools}}
OUT=${FILE_TOOLS_MCPB_OUT:-$ROOT/target/mcpb}
MCPB=$ROOT/target/mcpb-cli/node_modules/.bin/mcpb

die() {
    echo "mcpb: $*" >&2
    exit 1
}
[ -x "$BIN" ] || die "$BIN is not an executable (build it, or pass the binary's path)"
[ -x "$MCPB" ] || die "$MCPB is missing (run scripts/setup.sh)"

case "${MCPB_PLATFORM:-$(uname -s)}" in
    linux | Linux) platform=linux ;;
    darwin | Darwin) platform=darwin ;;
    win32 | MINGW* | MSYS* | CYGWIN*) platform=win32 ;;
    *) die "unknown platform ${MCPB_PLATFORM:-$(uname -s)} (set MCPB_PLATFORM to darwin, linux or win32)" ;;
esac
arch=${MCPB_ARCH:-$(uname -m)}
exe=
[ "$platform" = win32 ] && exe=.exe

# The bundle's version is the binary's, which must be the crate's.
version=$("$BIN" --version | sed -n 's/^file-tools \([^ ]*\)$/\1/p')
crate_version=$(sed -n '/^\[workspace\.package\]/,/^\[/s/^version = "\(.*\)"$/\1/p' Cargo.toml)
[ -n "$version" ] || die "$BIN --version does not say its version"
[ "$version" = "$crate_version" ] ||
    die "$BIN is version $version, the workspace is $crate_version: build the binary again"

stage=$OUT/stage
rm -rf "$stage"
mkdir -p "$stage/server"
cp packages/mcpb/icon.png "$stage/"
cp packages/mcpb/server/read-only-true.toml packages/mcpb/server/read-only-false.toml "$stage/server/"
cp "$BIN" "$stage/server/file-tools$exe"
chmod 755 "$stage/server/file-tools$exe"
"$BIN" schema >"$OUT/schema.json"

# The manifest: the template with the version, entry point, platform and tools filled in
# (each tool's description cut to its first sentence: the full text reaches the client
# over MCP).
node - "$ROOT/packages/mcpb/manifest.json" "$OUT/schema.json" "$stage/manifest.json" \
    "$version" "server/file-tools$exe" "$platform" <<'EOF'
const fs = require("fs");
const [template, schema, out, version, entry, platform] = process.argv.slice(2);
const m = JSON.parse(fs.readFileSync(template, "utf8"));
m.version = version;
m.server.entry_point = entry;
m.compatibility.platforms = [platform];
m.tools = JSON.parse(fs.readFileSync(schema, "utf8")).map((t) => ({
  name: t.name,
  description: t.description.split(/(?<=\.)\s/)[0],
}));
const left = JSON.stringify(m).match(/@[A-Z_]+@/);
if (left) throw new Error(`manifest template placeholder ${left[0]} not filled`);
fs.writeFileSync(out, JSON.stringify(m, null, 2) + "\n");
EOF

name=file-tools-$version-$platform-$arch.mcpb
bundle=$OUT/$name
rm -f "$bundle"
"$MCPB" validate "$stage" >"$OUT/validate.log" 2>&1 ||
    die "the manifest does not validate: $(cat "$OUT/validate.log")"
"$MCPB" pack "$stage" "$bundle" >"$OUT/pack.log" 2>&1 || die "packing failed: $(cat "$OUT/pack.log")"

# server.json for the registry, with this bundle as an `mcpb` package: its URL is the
# release asset of the repository the server's name points at (io.github.OWNER/NAME).
node - "$ROOT/server.json" "$bundle" "$name" "$version" "$OUT/server.json" <<'EOF'
const fs = require("fs");
const crypto = require("crypto");
const [template, bundle, name, version, out] = process.argv.slice(2);
const s = JSON.parse(fs.readFileSync(template, "utf8"));
const m = s.name.match(/^io\.github\.([^/]+)\/(.+)$/);
if (!m) throw new Error(`server.json name ${s.name} is not io.github.OWNER/NAME`);
s.packages.push({
  registryType: "mcpb",
  identifier: `https://github.com/${m[1]}/${m[2]}/releases/download/v${version}/${name}`,
  version,
  fileSha256: crypto.createHash("sha256").update(fs.readFileSync(bundle)).digest("hex"),
  transport: { type: "stdio" },
});
fs.writeFileSync(out, JSON.stringify(s, null, 2) + "\n");
EOF
echo "$bundle"
