#!/usr/bin/env bash
# Sets up the machine, builds file-tools, and runs a short session of tool calls against a
# copy of examples/demo-repo (or the directory given as the first argument), printing each
# call and its JSON answer. The original directory is never changed.
set -euo pipefail
cd "$(dirname "$0")/.."
FILE_TOOLS_SETUP_RUST_ONLY=1 bash scripts/setup.sh
# Only the `file-tools` binary and what the demo needs: none of the tests, their
# dev-dependencies or the fault-injection component, and neither the MCP server nor the
# standalone component (the features `mcp` and `standalone`, on by default: `file-tools mcp`
# and `file-tools component --standalone` in this build say what is missing). `--workspace`
# makes cargo resolve features over every member, as the test command does, so both share
# one build of Wasmtime and a later `scripts/test.sh` compiles no dependency again.
cargo build --release --workspace --bin file-tools --no-default-features
bin="$PWD/target/release/file-tools"
src="${1:-examples/demo-repo}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp -a "$src" "$work/repo"
echo "outside the repository" > "$work/outside.txt"
ln -s ../outside.txt "$work/repo/escape-link"
audit="$work/audit.jsonl"
state="$work/state"

run() {
    echo
    echo "\$ file-tools call $1 '$2'"
    set +e
    "$bin" --repo "$work/repo" --audit-log "$audit" --state-dir "$state" call "$1" "$2"
    echo "(exit $?)"
    set -e
}

run list_dir '{}'
run find_files '{"patterns":["*.rs"]}'
run read_file '{"path":"src/lib.rs","start_line":1,"max_lines":8,"line_numbers":true}'
run search_text '{"query":"fn \\w+","regex":true,"include":["*.rs"]}'
run file_info '{"path":".env"}'
run read_file '{"path":".env"}'
run read_file '{"path":"../outside.txt"}'
run read_file '{"path":"escape-link"}'
run read_many '{"paths":["README.md","docs/usage.md","missing.txt"]}'
run edit_file '{"path":"src/lib.rs","edits":[{"old_text":"    a - b\n","new_text":"    a.saturating_sub(b)\n"}]}'
run edit_file '{"path":"src/lib.rs","edits":[{"old_text":"a + b","new_text":"b + a"}],"expected_sha256":"0000000000000000000000000000000000000000000000000000000000000000"}'
run apply_patch '{"patch":"--- a/docs/usage.md\n+++ b/docs/usage.md\n@@ -1 +1,2 @@\n Call `add` or `sub` with two integers.\n+Both saturate instead of overflowing.\n"}'
run write_file '{"path":".env","content":"STOLEN=1\n"}'
run write_file '{"path":"README.md","content":"overwritten unread\n"}'
run write_file '{"path":"src/ops/mul.rs","content":"pub fn mul(a: i64, b: i64) -> i64 {\n    a * b\n}\n"}'
run diff_workspace '{}'
run revert '{"paths":["docs/usage.md"]}'
run diff_workspace '{"stat_only":true}'
echo
echo "audit log ($(wc -l < "$audit") events):"
cat "$audit"
