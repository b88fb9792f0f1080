"""`subscriptions/listen` over the stateless HTTP server, with the official Python SDK as a
2026-07-28 client: a stream's notifications come on its own response, only for the files
reading would serve, and a stream after a closed one hears again; `resources/subscribe`
(earlier revisions), which would need notifications between requests, is refused with the
way that works."""

import asyncio

import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import listen
from mcp.shared.exceptions import MCPError

from http_harness import server
from mcp_harness import heard


def with_session(url, body, modern=True):
    async def go():
        async with httpx2.AsyncClient(timeout=60) as client, \
                streamable_http_client(url, http_client=client) as (read, write, *_):
            async with ClientSession(read, write) as s:
                await (s.discover() if modern else s.initialize())
                return await body(s)

    return asyncio.run(go())


def test_a_listen_stream_over_http_hears_of_its_readable_files_only(repo, tmp_path):
    (repo / "private").mkdir()
    (repo / "private" / "notes.txt").write_text("hidden\n")
    (repo / ".env").write_text("TOKEN=1\n")
    policy = tmp_path / "policy.toml"
    policy.write_text('[read]\nblock = ["private/**"]\n')
    uris = ["file:///private/notes.txt", "file:///.env", "file:///src/lib.rs"]

    async def body(s):
        async with listen(s, resource_subscriptions=uris) as sub:
            honored = sub.honored.resource_subscriptions
            for name in ("private/notes.txt", ".env", "src/lib.rs"):
                (repo / name).write_text("changed\n")
            first = await heard(sub)
        # A stream opened after the first closed is served again.
        async with listen(s, resource_subscriptions=["file:///README.md"]) as again:
            (repo / "README.md").write_text("changed too\n")
            second = await heard(again)
        return honored, first, second

    with server(tmp_path, ["--repo", str(repo), "--policy", str(policy)]) as base:
        honored, first, second = with_session(f"{base}/mcp", body)
    # Every well-formed URI is honored alike: the acknowledgment tells nothing.
    assert honored == uris
    # Each file named once or more (a write the machine stalls in the middle of may be
    # heard twice), and nothing else.
    assert set(first) == {"file:///src/lib.rs"}, first
    assert set(second) == {"file:///README.md"}, second


@pytest.mark.filterwarnings("ignore:resources/subscribe is removed")
def test_resources_subscribe_over_http_is_refused_naming_listen(repo, tmp_path):
    async def body(s):
        caps = s.server_capabilities
        with pytest.raises(MCPError) as refused:
            await s.subscribe_resource("file:///src/lib.rs")
        # The session goes on.
        listed = await s.list_resources()
        return caps, refused.value.error.message, listed

    with server(tmp_path, ["--repo", str(repo)]) as base:
        caps, message, listed = with_session(f"{base}/mcp", body, modern=False)
    assert "subscriptions/listen" in message, message
    assert caps.resources.subscribe is True  # for listen streams, the 2026-07-28 way
    assert any(r.uri == "file:///src/lib.rs" for r in listed.resources)
