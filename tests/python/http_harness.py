"""Helpers of the tests of `file-tools mcp --http`: a server process on a free loopback
port, and raw stateless calls.

Environment: FILE_TOOLS_BIN names the `file-tools` binary (scripts/test.sh sets it).
"""

import os
import re
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

import httpx2

ROOT = Path(__file__).resolve().parents[2]
BIN = os.environ.get("FILE_TOOLS_BIN", str(ROOT / "target" / "release" / "file-tools"))
HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2025-11-25",
}


@contextmanager
def server(tmp_path, global_args, *mcp_args, bind="127.0.0.1:0", state_home=None):
    """A running `file-tools GLOBAL_ARGS mcp --http BIND MCP_ARGS`; yields its base URL once
    it listens. Its user state directory (the cursor key) is STATE_HOME, else tmp_path/state."""
    err = tmp_path / f"server-{time.monotonic_ns()}.err"
    env = dict(
        os.environ,
        FILE_TOOLS_CACHE_DIR=str(ROOT / "target" / "file-tools-cache"),
        XDG_STATE_HOME=str(state_home or tmp_path / "state"),
    )
    with open(err, "w") as sink:
        proc = subprocess.Popen([BIN, *global_args, "mcp", "--http", bind, *mcp_args], stderr=sink, env=env)
    try:
        deadline = time.monotonic() + 120
        while True:
            found = re.search(r"serving MCP on (http://\S+)", err.read_text())
            if found:
                break
            assert proc.poll() is None, err.read_text()
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.2)
        yield found.group(1)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def tools_call(tool, arguments, rid=1):
    """The JSON-RPC request of one tools/call."""
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}


def call(url, tool, arguments, headers=None, rid=1):
    """One stateless tools/call as a raw POST; returns (status, JSON body or None)."""
    body = tools_call(tool, arguments, rid)
    r = httpx2.post(url, json=body, headers={**HEADERS, **(headers or {})}, timeout=60)
    return r.status_code, (r.json() if r.headers.get("content-type", "").startswith("application/json") else None)
