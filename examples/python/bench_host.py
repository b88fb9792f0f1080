"""Start-up and per-call costs of the Python host, printed as rows of the benchmark table
(`FILE_TOOLS_BENCH=hosts bash scripts/bench.sh`, beside the Rust host's overhead rows).

    python bench_host.py WASM FILES_DIR

FILES_DIR holds the benchmark's generated files (1k.txt, 300k.txt). Each start runs in a
new Python process, so "first start" compiles the component and "cached start" loads what
the first one kept (in a cache directory of its own, removed at the end).
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

START = """
import sys, time
t = time.perf_counter()
sys.path.insert(0, {here!r})
from file_tools import FileTools
tools = FileTools({wasm!r}, {repo!r})
tools.call("file_info", {{"path": "1k.txt"}})
print(time.perf_counter() - t)
"""


def start(wasm, repo, cache):
    env = dict(os.environ, FILE_TOOLS_CACHE_DIR=cache)
    code = START.format(here=HERE, wasm=wasm, repo=repo)
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True,
                         capture_output=True, text=True).stdout
    return float(out.strip())


def p50(samples):
    samples = sorted(samples)
    return samples[len(samples) // 2]


def timed(n, f):
    out = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        out.append(time.perf_counter() - t)
    return out


def main():
    wasm, repo = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    cache = tempfile.mkdtemp(prefix="file-tools-bench-cache-")
    try:
        first = start(wasm, repo, cache)
        cached = min(start(wasm, repo, cache) for _ in range(5))
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    sys.path.insert(0, HERE)
    from file_tools import FileTools, ToolError

    os.environ["FILE_TOOLS_CACHE_DIR"] = "off"
    rows = [("first start (compiles the component), import + open + file_info", first),
            ("cached start (best of 5), import + open + file_info", cached)]
    for label, audit in (("no audit listener", None), ("with an audit listener", lambda e: None)):
        tools = FileTools(wasm, repo, on_audit=audit)

        def refused():
            try:
                tools.call("read_file", {"path": "../x"})
            except ToolError:
                pass
        rows.append((f"warm trivial call (a refused read), {label}", p50(timed(500, refused))))
        rows.append((f"warm file_info of a 1 KB file, {label}",
                     p50(timed(500, lambda: tools.call("file_info", {"path": "1k.txt"})))))
        rows.append((f"warm read_file of a 1 KB file, {label}",
                     p50(timed(500, lambda: tools.call("read_file", {"path": "1k.txt"})))))
        rows.append((f"warm read_file of a 300 KB file, {label}",
                     p50(timed(50, lambda: tools.call("read_file", {"path": "300k.txt"})))))
    print("\n## Python host (PyPI wasmtime)\n")
    print("| measure | figure |")
    print("|---|---|")
    for label, seconds in rows:
        figure = f"{seconds * 1e3:.1f} ms" if seconds >= 0.01 else f"{seconds * 1e6:.0f} µs"
        print(f"| {label} | {figure} |")


if __name__ == "__main__":
    main()
