"""Long calls over MCP. Cancellation: `notifications/cancelled` (sent by the SDK when the
awaiting task is cancelled) stops a long search at once, releases the session for the next
call, and the audit log records the call as CANCELLED. Progress: a call with a progress
token hears how many files were scanned and matches found so far."""

import asyncio
import json
import time

from mcp_harness import SLOW_SEARCH, big_tree, run

def test_a_cancelled_search_returns_promptly_and_the_next_call_runs_at_once(repo, tmp_path):
    big_tree(repo)
    log = tmp_path / "audit.jsonl"

    async def body(s):
        # Positive control: uncancelled, the search takes a while.
        started = time.monotonic()
        full = await s.call_tool("search_text", SLOW_SEARCH)
        full_time = time.monotonic() - started
        assert not full.is_error, full

        # Cancelled once it is running (its first progress report), not after a fixed
        # time: on a loaded machine the call may not have begun by then.
        running = asyncio.Event()

        async def on_progress(progress, total, message):
            running.set()

        task = asyncio.create_task(s.call_tool("search_text", SLOW_SEARCH, progress_callback=on_progress))
        await asyncio.wait_for(running.wait(), timeout=60)
        task.cancel()
        started = time.monotonic()
        read = await s.call_tool("read_file", {"path": "README.md"})
        after_cancel = time.monotonic() - started
        return full_time, after_cancel, read, task

    full_time, after_cancel, read, task = run(repo, body, "--audit-log", str(log))
    assert task.cancelled()
    assert full_time > 0.3, full_time
    # The next call did not wait for the cancelled search to finish.
    assert after_cancel < full_time / 2, (after_cancel, full_time)
    assert not read.is_error
    events = [json.loads(line) for line in log.read_text().splitlines()][1:]
    assert [e["tool"] for e in events] == ["search_text", "search_text", "read_file"]
    assert events[0]["ok"] is True
    assert events[1]["ok"] is False and events[1]["error_code"] == "CANCELLED", events[1]
    assert events[2]["ok"] is True


def test_a_long_search_sends_progress_notifications(repo):
    big_tree(repo)
    seen = []

    async def on_progress(progress, total, message):
        seen.append((progress, total, message))

    async def body(s):
        with_token = await s.call_tool("search_text", {**SLOW_SEARCH, "output": "files"},
                                       progress_callback=on_progress)
        heard = len(seen)
        # Positive control of the throttle and the token: a quick call hears nothing.
        quick = await s.call_tool("read_file", {"path": "README.md"}, progress_callback=on_progress)
        await asyncio.sleep(0.2)
        return with_token, heard, quick

    result, heard, quick = run(repo, body)
    assert not result.is_error and not quick.is_error
    assert heard >= 2, seen
    assert len(seen) == heard, "a read_file call sent progress"
    values = [p for p, _, _ in seen]
    assert values == sorted(values) and len(set(values)) == len(values), values
    assert values[-1] <= result.structured_content["files_searched"] + 10
    last = seen[-1][2]
    assert "files scanned" in last and "matches so far" in last, last
    # Matches grow with the files: the last message counts some.
    assert int(last.split(", ")[1].split()[0]) > 0, last
