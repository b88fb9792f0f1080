"""The `mcp` section of the benchmark: `file-tools mcp` against the MCP filesystem server
(the npm package @modelcontextprotocol/server-filesystem, the reference server of the MCP
project) over stdio, on the same tree, calls interleaved so that both meet the same
machine.

    python3 scripts/bench_mcp.py FILE_TOOLS_BIN FS_SERVER_JS TREE

The client is a plain JSON-RPC loop (one request line out, one answer line in, parsed with
`json.loads`), so that what is timed is each server and its transport, not a client
library's validation of the answer (the official Python SDK, for one, checks every
structured result against the tool's output schema, which costs more than the call for a
long listing). Each row is the median of ROUNDS calls after one warm-up call; the ratio is
file-tools / filesystem server. Both answers are checked to say the same.
"""

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROUNDS = 50


class Server:
    """One MCP server over stdio, initialized."""

    def __init__(self, argv, env=None):
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **(env or {})},
        )
        self.next_id = 0
        self.request("initialize", {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "file-tools-bench", "version": "1"},
        })
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message):
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            answer = json.loads(self.proc.stdout.readline())
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise SystemExit(f"{method}: {answer['error']}")
                return answer["result"]

    def call(self, tool, args):
        result = self.request("tools/call", {"name": tool, "arguments": args})
        if result.get("isError"):
            raise SystemExit(f"{tool} {args}: {result}")
        return result

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


def text_of(result):
    return "".join(c.get("text", "") for c in result["content"] if c.get("type") == "text")


def names_ours(result):
    """Entry names of a list_dir answer."""
    return sorted(e["path"].rsplit("/", 1)[-1] for e in result["structuredContent"]["entries"])


def names_theirs(result):
    """Entry names of a list_directory answer (`[FILE] name` / `[DIR] name` lines)."""
    return sorted(line.split("] ", 1)[1] for line in text_of(result).splitlines() if "] " in line)


def timed_pair(ours, theirs, call_ours, call_theirs):
    """Medians in ms of the two calls made alternately, and their last answers."""
    a, b = ours.call(*call_ours), theirs.call(*call_theirs)
    t_o, t_t = [], []
    for _ in range(ROUNDS):
        t = time.perf_counter()
        a = ours.call(*call_ours)
        t_o.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        b = theirs.call(*call_theirs)
        t_t.append((time.perf_counter() - t) * 1000)
    return statistics.median(t_o), statistics.median(t_t), a, b


def main(bin_path, server_js, tree):
    tree = Path(tree).resolve()
    cache = Path(bin_path).resolve().parents[1] / "file-tools-cache"
    ours = Server([bin_path, "--repo", str(tree), "mcp"], {"FILE_TOOLS_CACHE_DIR": str(cache)})
    theirs = Server(["node", server_js, str(tree)])
    rows = []
    for label, rel in [("the root", ""), ("a directory four levels down", "drivers/net/ethernet/intel/ice")]:
        if not (tree / rel).is_dir():
            continue
        # Every entry, as the filesystem server lists them (hidden and ignored ones too).
        every = {"path": rel or ".", "max_entries": 10000, "include_hidden": True, "respect_ignore": False}
        t_o, t_t, a, b = timed_pair(
            ours, theirs, ("list_dir", every), ("list_directory", {"path": str(tree / rel)})
        )
        n = len(names_theirs(b))
        rows.append((f"list_dir / list_directory, {label} ({n} entries)", t_o, t_t, names_ours(a) == names_theirs(b)))
    sample = "kernel/sched/loadavg.c"
    if (tree / sample).is_file():
        t_o, t_t, a, b = timed_pair(
            ours, theirs, ("read_file", {"path": sample}), ("read_text_file", {"path": str(tree / sample)})
        )
        rows.append((f"read_file / read_text_file, {sample} (whole)", t_o, t_t, a["structuredContent"]["content"] == text_of(b)))
        t_o, t_t, _, _ = timed_pair(
            ours, theirs, ("file_info", {"path": sample}), ("get_file_info", {"path": str(tree / sample)})
        )
        rows.append(("file_info / get_file_info", t_o, t_t, True))
    ours.close()
    theirs.close()
    print("| call (file-tools / filesystem server) | file-tools | filesystem server | ratio | same answer |")
    print("|---|---|---|---|---|")
    for label, t_o, t_t, same in rows:
        print(f"| {label} | {t_o:.2f} ms | {t_t:.2f} ms | {t_o / t_t:.2f}x | {'yes' if same else 'NO'} |")


if __name__ == "__main__":
    main(*sys.argv[1:4])
