"""The 2026-07-28 revision end to end under the Python SDK (and raw where bytes matter):
requests without `initialize` over stdio and HTTP, `resultType` and honest cache hints on
every result, the same `tools/list` bytes on every call and in every process,
`subscriptions/listen` streams, resource links in search results, and the server's icon."""

import base64
import json
import os
import subprocess
import time

import anyio
import httpx2
from mcp import types
from mcp.shared.exceptions import MCPError
from mcp.client.subscriptions import listen

from http_harness import HEADERS, server
from mcp_harness import BIN, LISTEN_WAIT, ROOT, heard, run

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
ENV = dict(os.environ, FILE_TOOLS_CACHE_DIR=str(ROOT / "target" / "file-tools-cache"))
# Long enough for the watch's debounce on a loaded machine.
WAIT = LISTEN_WAIT


def request(rid, method, params=None):
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": {**(params or {}), "_meta": META}}


def exchange(repo, messages):
    """The answer lines to MESSAGES, written at once to one stdio server, in the order of
    their ids: the server answers requests concurrently, so the order in which the lines
    arrive is not the order of the requests (JSON-RPC allows that). Its input is closed only
    once every request is answered (at the end of its input a server gives up answers not
    ready within a few seconds)."""
    asked = sum(1 for m in messages if "id" in m)
    proc = subprocess.Popen([BIN, "--repo", str(repo), "mcp"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, env=ENV)
    try:
        proc.stdin.write("".join(json.dumps(m) + "\n" for m in messages).encode())
        proc.stdin.flush()
        answers = []
        while len(answers) < asked:
            line = proc.stdout.readline()
            assert line, f"the server ended after {len(answers)} of {asked} answers"
            if line.strip() and "id" in json.loads(line):
                answers.append(line.rstrip(b"\n"))
        proc.stdin.close()
        proc.wait(timeout=120)
    finally:
        proc.kill()
    return sorted(answers, key=lambda line: json.loads(line)["id"])


def raw_stdio(repo, *requests):
    """The answer lines of REQUESTS sent to one stdio server, no handshake before them."""
    return exchange(repo, requests)


def test_requests_without_initialize_over_stdio_and_tools_list_bytes_never_change(repo):
    first = raw_stdio(repo, request(1, "tools/list"), request(2, "tools/list"), request(3, "resources/list"))
    again = raw_stdio(repo, request(1, "tools/list"))
    assert len(first) == 3, first
    listed = json.loads(first[0])["result"]
    assert {t["name"] for t in listed["tools"]} >= {"read_file", "search_text", "write_file"}
    assert listed["resultType"] == "complete"
    # Byte for byte (after the id): a second call, and another process.
    result = [line.split(b',"result":', 1)[1] for line in (first[0], first[1], again[0])]
    assert result[0] == result[1] == result[2]
    assert json.loads(first[2])["result"]["resources"]


def test_requests_without_initialize_over_http(repo, tmp_path):
    with server(tmp_path, ["--repo", str(repo)]) as base:
        headers = {**HEADERS, "mcp-protocol-version": "2026-07-28"}

        def post(method, rid=1, **extra):
            r = httpx2.post(f"{base}/mcp", json=request(rid, method), headers={**headers, **extra}, timeout=60)
            return r.status_code, r.text

        status, listed = post("tools/list", **{"mcp-method": "tools/list"})
        assert status == 200, listed
        status, again = post("tools/list", **{"mcp-method": "tools/list"})
        assert listed == again
        assert json.loads(listed)["result"]["cacheScope"] == "private"
        status, resources = post("resources/list", **{"mcp-method": "resources/list"})
        assert status == 200 and json.loads(resources)["result"]["resultType"] == "complete", resources
        # The revision's required header is asked for by name.
        status, refused = post("tools/list")
        assert status == 400 and "Mcp-Method" in refused, refused


def test_every_result_has_its_result_type_and_honest_cache_hints(repo):
    async def body(s):
        tools = await s.list_tools()
        resources = await s.list_resources()
        templates = await s.list_resource_templates()
        read = await s.read_resource("file:///README.md")
        ref = types.ResourceTemplateReference(type="ref/resource", uri="file:///{path}")
        done = await s.complete(ref, {"name": "path", "value": "s"})
        return [r.model_dump(by_alias=True, exclude_none=True) for r in (tools, resources, templates, read, done)]

    # The SDK refuses a 2026-07-28 result without `resultType`.
    tools, resources, templates, read, done = run(repo, body, modern=True)
    for r in (tools, resources, templates, read, done):
        assert r["resultType"] == "complete", r
    # What depends on the session's policy is never shared with another session.
    for r in (tools, resources, read):
        assert (r["cacheScope"], r["ttlMs"]) == ("private", 0), r
    assert templates["cacheScope"] == "public" and templates["ttlMs"] > 0
    assert done["completion"]["values"] == ["src/"]


def test_a_listen_stream_hears_of_its_readable_files_only(repo):
    (repo / "private").mkdir()
    (repo / "private" / "notes.txt").write_text("hidden\n")
    (repo / ".env").write_text("TOKEN=1\n")
    # Many read checks before the file that changes: the stream must be watching it by
    # the time it is acknowledged, not some time after.
    uris = [f"file:///missing/{i}.txt" for i in range(150)]
    uris += ["file:///private/notes.txt", "file:///private/missing.txt", "file:///.env", "file:///src/lib.rs"]

    async def body(s):
        got = []
        async with listen(s, resource_subscriptions=uris) as sub:
            honored = sub.honored.resource_subscriptions
            # Straight after the acknowledgment: the stream is watching already.
            for name in ("private/notes.txt", ".env", "src/lib.rs"):
                (repo / name).write_text("changed\n")
            async with listen(s, resource_subscriptions=["file:///README.md"]) as other:
                got += await heard(sub)
                # The other stream hears of nothing it did not name.
                (repo / "README.md").write_text("changed too\n")
                with anyio.move_on_after(WAIT):
                    async for event in other:
                        got.append(("other", event.uri))
                        break
        return honored, got

    honored, got = run(repo, body, "--policy", str(policy(repo)), modern=True)
    # Every well-formed URI is honored alike: the acknowledgment tells nothing.
    assert honored == uris
    assert got[0] == "file:///src/lib.rs", got
    assert set(got) == {"file:///src/lib.rs", ("other", "file:///README.md")}, got


def test_a_listen_stream_is_granted_its_first_256_well_formed_uris(repo):
    asked = ["http://elsewhere/a", "file:///a%zz"] + [f"file:///missing/{i}.txt" for i in range(300)]

    async def body(s):
        async with listen(s, resource_subscriptions=asked) as sub:
            return sub.honored.resource_subscriptions

    assert run(repo, body, modern=True) == asked[2:258]


def test_a_listen_stream_naming_a_granted_uri_again_past_the_first_256_still_hears_of_it(repo):
    # The 257th URI names the first again: the acknowledgment grants every named URI that
    # is among the granted ones, so the stream must be served as granted, not left deaf.
    asked = ["file:///src/lib.rs"] + [f"file:///missing/{i}.txt" for i in range(255)] + ["file:///src/lib.rs"]
    control = ["file:///src/lib.rs", "file:///src/lib.rs"]

    async def body(s):
        heard = {}
        for name, uris in (("repeated", asked), ("control", control)):
            got = []
            async with listen(s, resource_subscriptions=uris) as sub:
                honored = sub.honored.resource_subscriptions
                (repo / "src" / "lib.rs").write_text(f"changed for {name}\n")
                with anyio.move_on_after(WAIT):
                    async for event in sub:
                        got.append(event.uri)
                        break
            heard[name] = (honored, got)
        return heard

    heard = run(repo, body, modern=True)
    # Positive control: a repeated URI within the first 256.
    assert heard["control"] == (control, ["file:///src/lib.rs"]), heard["control"]
    honored, got = heard["repeated"]
    assert honored == asked
    assert got == ["file:///src/lib.rs"], got


def policy(repo):
    path = repo.parent / "policy.toml"
    path.write_text('[read]\nblock = ["private/**"]\n')
    return path


def test_search_results_link_the_files_found_and_reading_a_link_serves_it(repo):
    (repo / "private").mkdir()
    (repo / "private" / "x.rs").write_text("fn hidden() {}\n")
    (repo / ".env").write_text("fn=1\n")

    async def body(s):
        found = await s.call_tool("search_text", {"query": "fn", "include_hidden": True})
        links = [c for c in found.content if c.type == "resource_link"]
        read = await s.read_resource(str(links[0].uri))
        listed = await s.call_tool("find_files", {"patterns": ["*"], "include_hidden": True})
        return found, links, read, listed

    found, links, read, listed = run(repo, body, "--policy", str(policy(repo)), modern=True)
    files = [f["path"] for f in found.structured_content["files"]]
    assert files and [str(link.uri) for link in links] == [f"file:///{p}" for p in files]
    assert [link.name for link in links] == files
    everything = json.dumps([c.model_dump(mode="json") for c in found.content])
    assert "private" not in everything and ".env" not in everything
    assert read.contents[0].text
    # find_files names secrets by name: its results carry no links.
    assert ".env" in listed.structured_content["paths"]
    assert all(c.type == "text" for c in listed.content)


def test_the_server_has_an_icon(repo):
    async def body(s):
        return s.server_info

    for modern in (True, False):
        info = run(repo, body, modern=modern)
        (icon,) = info.icons
        assert icon.mime_type == "image/png" and icon.src.startswith("data:image/png;base64,")
        png = base64.b64decode(icon.src.split(",", 1)[1])
        assert png == (ROOT / "packages" / "mcpb" / "icon.png").read_bytes()


def test_an_older_client_gets_results_in_its_own_revisions_shape(repo):
    lines = raw_stdio_legacy(repo)
    assert json.loads(lines[0])["result"]["protocolVersion"] == "2025-11-25"
    result = json.loads(lines[1])["result"]
    assert result["resources"]
    assert not {"resultType", "ttlMs", "cacheScope"} & result.keys(), result


def raw_stdio_legacy(repo):
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
    done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    listing = {"jsonrpc": "2.0", "id": 1, "method": "resources/list"}
    return exchange(repo, (init, done, listing))


def test_without_repo_a_2026_client_is_told_at_once_to_start_the_server_with_one(repo):
    async def body(s):
        start = time.monotonic()
        called = await s.call_tool("read_file", {"path": "README.md"})
        try:
            await s.list_resources()
            listed = None
        except MCPError as e:
            listed = e.error.message
        return time.monotonic() - start, called, listed

    took, called, listed = run(None, body, modern=True)
    assert called.is_error and "--repo" in called.content[0].text and "2026-07-28" in called.content[0].text
    assert listed and "--repo" in listed
    # Not the ten seconds a server waits for an older client's roots.
    assert took < 5, took
