"""Approval and cancellation over `file-tools mcp --http`, with the official Python MCP SDK
as the client: a 2026-07-28 client approves by retrying with the sealed state (on any
server process that shares the cursor key), and a client that gives up on a long call
frees the repository for the next one."""

import asyncio
import shutil
import time

import httpx2
import pytest
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client

from http_harness import ROOT, server
from mcp_harness import SLOW_SEARCH, big_tree

POLICY = "[approval]\ndelete = true\npaths = [\"docs/**\"]\n"
ACCEPT = {"action": "accept", "content": {"approve": True}}
WRITE = {"path": "docs/new.md", "content": "approved text\n"}


@pytest.fixture()
def repo(tmp_path):
    dest = tmp_path / "repo"
    shutil.copytree(ROOT / "examples" / "demo-repo", dest)
    return dest


async def never_called(context, params):  # declares elicitation; never asked in 2026 mode
    raise AssertionError("a 2026-07-28 client got an elicitation request")


def session(url, body, modern=False, named=None):
    """Runs BODY with an SDK client session at URL (as the File-Tools-Session NAMED)."""

    async def go():
        headers = {"file-tools-session": named} if named else {}
        client = httpx2.AsyncClient(headers=headers, timeout=120)
        async with client, streamable_http_client(url, http_client=client) as (read, write, *_):
            async with ClientSession(read, write, elicitation_callback=never_called) as s:
                await (s.discover() if modern else s.initialize())
                return await body(s)

    return asyncio.run(go())


def ask(url, named=None, **retry):
    """One write_file call of WRITE as a 2026-07-28 client (a retry when given RETRY)."""
    return session(url, lambda s: s.call_tool("write_file", WRITE, allow_input_required=True, **retry),
                   modern=True, named=named)


def test_an_approval_asked_by_one_process_is_answered_at_another(repo, tmp_path):
    policy = tmp_path / "policy.toml"
    policy.write_text(POLICY)
    args = ["--repo", str(repo), "--policy", str(policy)]
    target = repo / "docs" / "new.md"
    with server(tmp_path, args) as a, server(tmp_path, args) as b, \
            server(tmp_path, args, state_home=tmp_path / "other-state") as stranger:
        first = ask(a + "/mcp")
        assert isinstance(first, types.InputRequiredResult), first
        assert "+approved text" in first.input_requests["approve"].params.message
        assert not target.exists()
        state = first.request_state
        # A server with another cursor key cannot open the state: refused as a forgery.
        elsewhere = ask(stranger + "/mcp", request_state=state, input_responses={"approve": ACCEPT})
        assert isinstance(elsewhere, types.CallToolResult) and elsewhere.is_error, elsewhere
        assert "APPROVAL_REQUIRED" in elsewhere.content[0].text, elsewhere
        assert not target.exists()
        # Nor does another session of the same server take it.
        other = ask(b + "/mcp", named="someone-else", request_state=state, input_responses={"approve": ACCEPT})
        assert isinstance(other, types.CallToolResult) and other.is_error, other
        assert not target.exists()
        # A decline at the second process writes nothing.
        declined = ask(b + "/mcp", request_state=state, input_responses={"approve": {"action": "decline"}})
        assert isinstance(declined, types.CallToolResult) and declined.is_error, declined
        assert not target.exists()
        # Positive control: the approval, answered at the second process, writes the change.
        done = ask(b + "/mcp", request_state=state, input_responses={"approve": ACCEPT})
        assert isinstance(done, types.CallToolResult) and not done.is_error, done
        assert target.read_text() == "approved text\n"
        # The state approved its plan once: replayed after the file went, it is asked about
        # again and writes nothing.
        target.unlink()
        replayed = ask(b + "/mcp", request_state=state, input_responses={"approve": ACCEPT})
        assert isinstance(replayed, types.InputRequiredResult), replayed
        assert not target.exists()


def test_a_client_that_gives_up_on_a_long_call_frees_the_repository(repo, tmp_path):
    big_tree(repo)
    with server(tmp_path, ["--repo", str(repo)]) as base:
        url = base + "/mcp"

        async def body(s):
            # Positive control: uncancelled, the search takes a while.
            started = time.monotonic()
            full = await s.call_tool("search_text", SLOW_SEARCH)
            full_time = time.monotonic() - started
            assert not full.is_error, full
            task = asyncio.create_task(s.call_tool("search_text", SLOW_SEARCH))
            await asyncio.sleep(0.1)
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
            return full_time

        full_time = session(url, body)

        async def next_call(s):
            started = time.monotonic()
            read = await s.call_tool("read_file", {"path": "README.md"})
            return read, time.monotonic() - started

        read, after_cancel = session(url, next_call)
    assert full_time > 0.3, full_time
    assert not read.is_error, read
    assert after_cancel < full_time / 2, (after_cancel, full_time)


def test_a_long_search_over_http_sends_progress(repo, tmp_path):
    big_tree(repo)
    seen = []

    async def on_progress(progress, total, message):
        seen.append((progress, message))

    async def body(s):
        long = await s.call_tool("search_text", {**SLOW_SEARCH, "output": "files"}, progress_callback=on_progress)
        heard = len(seen)
        # Positive control of the throttle and the token: a quick call hears nothing.
        quick = await s.call_tool("read_file", {"path": "README.md"}, progress_callback=on_progress)
        return long, heard, quick

    with server(tmp_path, ["--repo", str(repo)]) as base:
        long, heard, quick = session(base + "/mcp", body)
    assert not long.is_error and not quick.is_error
    assert heard >= 1, seen
    assert len(seen) == heard, seen
    counts = [p for p, _ in seen]
    assert counts == sorted(counts), counts


def test_an_older_client_over_http_is_refused_approval_at_once(repo, tmp_path):
    """Stateless HTTP cannot carry an elicitation's answer back: a client of an earlier
    revision that declares elicitation gets APPROVAL_REQUIRED promptly, and nothing is
    written."""
    policy = tmp_path / "policy.toml"
    policy.write_text(POLICY)
    asked = []

    async def answer(context, params):
        asked.append(params)
        return types.ElicitResult(action="accept", content={"approve": True})

    async def go(url):
        async with streamable_http_client(url) as (read, write, *_):
            async with ClientSession(read, write, elicitation_callback=answer) as s:
                await s.initialize()
                started = time.monotonic()
                r = await asyncio.wait_for(s.call_tool("write_file", WRITE), 30)
                return r, time.monotonic() - started

    with server(tmp_path, ["--repo", str(repo), "--policy", str(policy)]) as base:
        result, took = asyncio.run(go(base + "/mcp"))
    assert result.is_error and "APPROVAL_REQUIRED" in result.content[0].text, result
    assert took < 10, took
    assert not (repo / "docs" / "new.md").exists()
