#!/usr/bin/env bash
# Sets up the machine, then builds everything (guest component included) and runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo test --release --workspace
