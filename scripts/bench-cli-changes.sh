#!/usr/bin/env bash
# The CLI's `changes_since` on an unchanged tree against `git status --porcelain`, one
# process per call as a user's shell runs them. Each binary gets a state directory and a
# token of its own (a token two seconds old, so that no file is racily clean); then ROUNDS
# rounds run every binary and git in turn, and the medians of wall, user and system time
# are printed. Identical binaries differ by about 5% between runs on this machine: compare
# binaries within one run.
#
#   bash scripts/bench-cli-changes.sh [BIN...]     (default: target/release/file-tools)
#
# The tree is the benchmark's git copy of the Linux tree (`scripts/bench.sh` makes it).
set -euo pipefail
cd "$(dirname "$0")/.."
tree=${FILE_TOOLS_BENCH_TREE:-target/bench-corpus/linux-changes}
rounds=${ROUNDS:-15}
[ -d "$tree/.git" ] || { echo "no git tree at $tree: run FILE_TOOLS_BENCH=changes bash scripts/bench.sh first" >&2; exit 1; }
[ $# -gt 0 ] || set -- target/release/file-tools
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

token_of() { python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["token"])'; }

for i in $(seq $#); do
    bin=${!i}
    mkdir -p "$work/state$i"
    first=$("$bin" --repo "$tree" --state-dir "$work/state$i" call changes_since '{}' | token_of)
    sleep 2.2
    "$bin" --repo "$tree" --state-dir "$work/state$i" call changes_since "{\"token\":\"$first\"}" |
        token_of >"$work/token$i"
done

for _ in $(seq "$rounds"); do
    for i in $(seq $#); do
        bin=${!i}
        /usr/bin/time -f "bin$i %e %U %S" "$bin" --repo "$tree" --state-dir "$work/state$i" \
            call changes_since "{\"token\":\"$(cat "$work/token$i")\"}" 2>&1 >/dev/null | tail -1
    done
    /usr/bin/time -f "git %e %U %S" git -C "$tree" status --porcelain 2>&1 >/dev/null | tail -1
done | python3 -c '
import collections, statistics, sys
names = dict(("bin%d" % (i + 1), b) for i, b in enumerate(sys.argv[1:]))
runs = collections.defaultdict(list)
for line in sys.stdin:
    key, *t = line.split()
    runs[key].append([float(x) for x in t])
print("| binary | wall | user | sys |")
print("|---|---|---|---|")
for key in sorted(runs, key=lambda k: (k == "git", k)):
    med = [statistics.median(r[j] for r in runs[key]) for j in range(3)]
    label = "`git status --porcelain`" if key == "git" else names[key]
    print(f"| {label} | {med[0]:.3f} s | {med[1]:.3f} s | {med[2]:.3f} s |")
' "$@"
