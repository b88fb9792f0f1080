"""Helpers shared by the tests of `file-tools mcp` under the official Python MCP SDK.

The server runs as a child process over stdio, exactly as an MCP client would start it.
Environment: FILE_TOOLS_BIN names the `file-tools` binary (scripts/test.sh sets it).
"""

import asyncio
import hashlib
import os
import shutil
import time
from pathlib import Path

from mcp import ClientSession, StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[2]
BIN = os.environ.get("FILE_TOOLS_BIN", str(ROOT / "target" / "release" / "file-tools"))
MUTATING = {"write_file", "edit_file", "apply_patch", "append_file", "delete_file", "move_file", "revert"}


def demo_repo(tmp_path: Path) -> Path:
    """A copy of the demo repository beside a sentinel file outside it."""
    dest = tmp_path / "repo"
    shutil.copytree(ROOT / "examples" / "demo-repo", dest)
    (tmp_path / "outside.txt").write_text("do not touch\n")
    return dest


def snapshot(root: Path):
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


async def with_server(repo, extra_args, body, modern=False, **client_options):
    """Starts the server (with `--repo repo` unless repo is None) and runs `body(session)`;
    `client_options` go to the SDK's ClientSession (callbacks for elicitation, roots...).
    `modern` connects as a 2026-07-28 client (`server/discover`, no `initialize`)."""
    repo_args = [] if repo is None else ["--repo", str(repo)]
    params = StdioServerParameters(
        command=BIN,
        args=[*repo_args, *extra_args, "mcp"],
        env={"FILE_TOOLS_CACHE_DIR": str(ROOT / "target" / "file-tools-cache")},
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, **client_options) as session:
            if modern:
                await session.discover()
            else:
                await session.initialize()
            return await body(session)


def run(repo, body, *extra_args, modern=False, **client_options):
    return asyncio.run(with_server(repo, list(extra_args), body, modern, **client_options))


# How long a listen stream's first notification may take (the watch's debounce on a loaded
# machine), and the quiet time in which any further ones must come.
LISTEN_WAIT = 8.0
LISTEN_QUIET = 1.5


async def heard(stream, first_within=LISTEN_WAIT):
    """The URIs a `subscriptions/listen` stream hears of: the first within FIRST_WITHIN,
    then any others in a quiet time after it."""
    import anyio

    got = []
    with anyio.move_on_after(first_within):
        async for event in stream:
            got.append(event.uri)
            break
    with anyio.move_on_after(LISTEN_QUIET):
        async for event in stream:
            got.append(event.uri)
    return got


def structured(result):
    assert result.structured_content is not None, result
    return result.structured_content


# The statuses a task ends in.
ENDED = ("completed", "failed", "cancelled")


def poll_task(get, task_id, until=(), within=60):
    """GET(task_id) (what `tasks/get` answered) until the task's status is one of UNTIL
    (an ended one at the latest), for at most WITHIN seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        got = get(task_id)
        if got["status"] in until or got["status"] in ENDED:
            return got
        time.sleep(0.05)
    raise AssertionError(f"task {task_id} still {got['status']}")


# A tree a regex search takes a while over (about 140 MB), for cancellation and progress.
LINE = "the quick brown fox jumps over the lazy dog 0123456789\n"
SLOW_SEARCH = {"query": "[a-z]+\\s[a-z]+\\s\\d", "regex": True, "case_insensitive": True, "output": "count"}


def big_tree(repo, files=64):
    for i in range(files):
        d = repo / "big" / f"d{i % 4}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"f{i}.txt").write_text(LINE * 40_000)
