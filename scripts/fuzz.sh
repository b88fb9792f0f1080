#!/usr/bin/env bash
# Runs a fuzz target of the guest's parsers for a while (default: each target 60 s).
#   bash scripts/fuzz.sh [patch_parser|path_guard|all] [SECONDS]
# Installs cargo-fuzz on first use. libFuzzer needs nightly compiler flags; on a stable
# toolchain RUSTC_BOOTSTRAP=1 enables them.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${1:-all}"
secs="${2:-60}"
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked
targets=(patch_parser path_guard)
[ "$target" != all ] && targets=("$target")
for t in "${targets[@]}"; do
    echo "fuzzing $t for ${secs}s"
    (cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run "$t" -- -max_total_time="$secs")
done
