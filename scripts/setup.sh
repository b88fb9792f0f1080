#!/usr/bin/env bash
# One-time set-up of a fresh machine: everything the build and the tests need.
# Safe to run again: each step checks before it installs.
set -euo pipefail

if ! command -v cargo >/dev/null 2>&1; then
    echo "setup: cargo is not installed; install Rust (rustup) first" >&2
    exit 1
fi
if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-wasip2; then
    echo "setup: adding the wasm32-wasip2 Rust target"
    rustup target add wasm32-wasip2
fi
