"""`file-tools mcp --http`: the Streamable HTTP transport, with the official Python MCP SDK
as the client where a client is needed, and raw HTTP where a check is about the transport.

Environment: FILE_TOOLS_BIN names the `file-tools` binary (scripts/test.sh sets it).
"""

import asyncio
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from http_harness import BIN, HEADERS, ROOT, call, server, tools_call


@pytest.fixture()
def repos(tmp_path):
    """Two copies of the demo repository, and a sentinel outside both."""
    made = []
    for name in ("one", "two"):
        dest = tmp_path / name
        shutil.copytree(ROOT / "examples" / "demo-repo", dest)
        made.append(dest)
    (tmp_path / "outside.txt").write_text("do not touch\n")
    return made


def structured(answer):
    return answer["result"]["structuredContent"]


def test_sdk_client_reaches_each_listed_repository_and_no_other(repos, tmp_path):
    one, two = repos

    async def session(url, body):
        async with streamable_http_client(url) as (read, write, *_):
            async with ClientSession(read, write) as s:
                await s.initialize()
                return await body(s)

    async def write_mark(s):
        tools = {t.name for t in (await s.list_tools()).tools}
        done = await s.call_tool("write_file", {"path": "mark.txt", "content": "two\n"})
        return tools, done

    with server(tmp_path, ["--repo", str(one)], "--serve", f"two={two}") as base:
        tools, done = asyncio.run(session(base + "/mcp/two", write_mark))
        assert {"read_file", "write_file", "search_text"} <= tools
        assert not done.is_error, done
        # The write landed in the repository of its URL path, nowhere else.
        assert (two / "mark.txt").read_text() == "two\n"
        assert not (one / "mark.txt").exists()
        status, answer = call(base + "/mcp", "read_file", {"path": "mark.txt"})
        assert status == 200 and answer["result"]["isError"] is True
        assert structured(answer)["error"]["code"] == "NOT_FOUND"
        # A path that names no served repository, or climbs, is not served.
        for path in ("/mcp/three", "/mcp/..", "/mcp/two/../../outside.txt", "/"):
            status, _ = call(base + path, "read_file", {"path": "README.md"})
            assert status == 404, path
        # Positive control: the first repository answers at /mcp.
        status, answer = call(base + "/mcp", "read_file", {"path": "README.md"})
        assert status == 200 and "calc" in structured(answer)["content"]
    assert (tmp_path / "outside.txt").read_text() == "do not touch\n"


def test_host_and_origin_checks_refuse_dns_rebinding_and_web_pages(repos, tmp_path):
    one, _ = repos
    app = "http://app.example:8000"
    with server(tmp_path, ["--repo", str(one)], "--allowed-origin", app) as base:
        url = base + "/mcp"
        status, _ = call(url, "read_file", {"path": "README.md"}, {"host": "evil.example"})
        assert status == 403
        # The metrics too: a rebound page must not read them.
        assert httpx2.get(base + "/metrics", headers={"host": "evil.example:80"}).status_code == 403
        assert httpx2.get(base + "/metrics").status_code == 200
        status, _ = call(url, "read_file", {"path": "README.md"}, {"origin": "http://evil.example"})
        assert status == 403
        # Positive control: the loopback host without an Origin (not a browser) is served.
        status, answer = call(url, "read_file", {"path": "README.md"})
        assert status == 200 and "calc" in structured(answer)["content"]
        # An origin the server was told to trust is served.
        status, answer = call(url, "read_file", {"path": "README.md"}, {"origin": app})
        assert status == 200 and "calc" in structured(answer)["content"]


def test_the_servers_own_origin_is_served_and_every_other_is_refused(repos, tmp_path):
    one, _ = repos
    with server(tmp_path, ["--repo", str(one)]) as base:
        url = base + "/mcp"
        authority = base.removeprefix("http://")
        port = authority.rsplit(":", 1)[1]
        # Positive controls: the origin of the server itself, by either loopback name.
        for host in (authority, f"localhost:{port}"):
            status, answer = call(url, "read_file", {"path": "README.md"}, {"host": host, "origin": f"http://{host}"})
            assert status == 200 and "calc" in structured(answer)["content"], (host, status)
        for origin in (
            "http://evil.example",
            f"http://evil.example:{port}",
            f"http://127.0.0.1.evil.com:{port}",
            f"http://127.0.0.1:{int(port) + 1}",
            f"https://{authority}",
            f"http://localhost:{port}",  # another name than the Host the request named
            f"http://{authority}/",
            "null",
        ):
            status, _ = call(url, "read_file", {"path": "README.md"}, {"origin": origin})
            assert status == 403, origin
        # Its own origin reaches the MCP paths only, as any Origin does.
        assert httpx2.get(base + "/metrics", headers={"origin": base}).status_code == 403


def test_bearer_token_guards_every_path_and_off_loopback_needs_one(repos, tmp_path):
    one, _ = repos
    token = "t0k3n-" + "x" * 26
    token_file = tmp_path / "token"
    token_file.write_text(token + "\n")
    with server(tmp_path, ["--repo", str(one)], "--http-token-file", str(token_file)) as base:
        for headers in ({}, {"authorization": "Bearer wrong"}, {"authorization": "Bearer " + token[:-1]}):
            status, _ = call(base + "/mcp", "read_file", {"path": "README.md"}, headers)
            assert status == 401, headers
            assert httpx2.get(base + "/metrics", headers=headers).status_code == 401
        good = {"authorization": "Bearer " + token}
        status, answer = call(base + "/mcp", "read_file", {"path": "README.md"}, good)
        assert status == 200 and "calc" in structured(answer)["content"]
        scraped = httpx2.get(base + "/metrics", headers=good)
        assert scraped.status_code == 200
        assert re.search(r'file_tools_tool_calls_total\{tool="read_file",outcome="ok"\} 1\b', scraped.text), scraped.text
        assert scraped.text.rstrip().endswith("# EOF")
    # Reachable from other machines without a token: refused at start, with the reason.
    env = dict(os.environ, XDG_STATE_HOME=str(tmp_path / "state"))
    refused = subprocess.run(
        [BIN, "--repo", str(one), "mcp", "--http", "0.0.0.0:0"], capture_output=True, text=True, env=env, timeout=120
    )
    assert refused.returncode == 2
    assert "bearer token" in refused.stderr


def test_clients_on_two_repositories_run_at_once_and_each_sees_its_own(repos, tmp_path):
    one, two = repos
    with server(tmp_path, ["--repo", str(one)], "--serve", f"two={two}") as base:
        async def client(i):
            url = base + ("/mcp" if i % 2 == 0 else "/mcp/two")
            async with httpx2.AsyncClient(timeout=120) as c:
                for k in range(5):
                    body = tools_call("write_file", {"path": f"c{i}/{k}.txt", "content": f"{i} {k}\n"}, k)
                    r = await c.post(url, json=body, headers=HEADERS)
                    assert r.status_code == 200, r.text
                    assert r.json()["result"]["isError"] is False, r.text

        async def all_clients():
            await asyncio.gather(*(client(i) for i in range(8)))

        asyncio.run(all_clients())
    for i in range(8):
        mine, other = (one, two) if i % 2 == 0 else (two, one)
        assert sorted(p.name for p in (mine / f"c{i}").iterdir()) == [f"{k}.txt" for k in range(5)]
        assert not (other / f"c{i}").exists()


def test_two_server_processes_share_one_repository_and_audit_chain(repos, tmp_path):
    one, _ = repos
    log = tmp_path / "audit.jsonl"
    args = ["--repo", str(one), "--audit-log", str(log)]
    with server(tmp_path, args) as a, server(tmp_path, args) as b:
        async def client(base, tag):
            async with httpx2.AsyncClient(timeout=120) as c:
                for k in range(10):
                    body = tools_call("append_file", {"path": "shared.log", "content": f"{tag}{k}\n"}, k)
                    r = await c.post(base + "/mcp", json=body, headers=HEADERS)
                    assert r.json()["result"]["isError"] is False, r.text

        async def both():
            await asyncio.gather(client(a, "a"), client(b, "b"))

        asyncio.run(both())
    # Every append of both processes landed once: the per-repository lock serialised them.
    lines = (one / "shared.log").read_text().split()
    assert sorted(lines) == sorted([f"a{k}" for k in range(10)] + [f"b{k}" for k in range(10)])
    # Both processes extended one hash chain, which verifies.
    verified = subprocess.run([BIN, "audit", "verify", str(log)], capture_output=True, text=True)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    appended = [json.loads(x) for x in log.read_text().splitlines() if '"append_file"' in x]
    assert len(appended) == 20


def test_each_named_session_has_its_own_baseline(repos, tmp_path):
    one, _ = repos
    original = (one / "README.md").read_text()
    with server(tmp_path, ["--repo", str(one)]) as base:
        url = base + "/mcp"

        def as_session(name, tool, arguments):
            status, answer = call(url, tool, arguments, {"file-tools-session": name})
            assert status == 200, answer
            return answer["result"]

        a = as_session("alice", "write_file", {"path": "alice.txt", "content": "a\n"})
        assert a["isError"] is False, a
        readme = as_session("bob", "read_file", {"path": "README.md"})["structuredContent"]
        b = as_session(
            "bob",
            "write_file",
            {"path": "README.md", "content": "bob's\n", "expected_sha256": readme["sha256"]},
        )
        assert b["isError"] is False, b
        # Each session's diff shows its own change only.
        alice_diff = json.dumps(as_session("alice", "diff_workspace", {})["structuredContent"])
        bob_diff = json.dumps(as_session("bob", "diff_workspace", {})["structuredContent"])
        assert "alice.txt" in alice_diff and "README.md" not in alice_diff
        assert "README.md" in bob_diff and "alice.txt" not in bob_diff
        # Alice cannot revert Bob's change: it is not hers.
        refused = as_session("alice", "revert", {"paths": ["README.md"]})
        assert refused["isError"] is True
        assert (one / "README.md").read_text() == "bob's\n"
        # Positive control: Bob reverts his own.
        undone = as_session("bob", "revert", {"paths": ["README.md"]})
        assert undone["isError"] is False, undone
        assert (one / "README.md").read_text() == original
        assert (one / "alice.txt").read_text() == "a\n"
        # A bad session name is a clear refusal, not a session.
        status, _ = call(url, "read_file", {"path": "README.md"}, {"file-tools-session": "../x"})
        assert status == 400


def repo_key(repo):
    """The key the server names a repository's state directories with."""
    return hashlib.sha256(str(Path(repo).resolve()).encode()).hexdigest()[:16]


def test_two_repositories_under_one_state_dir_keep_their_baselines_apart(repos, tmp_path):
    one, two = repos
    state = tmp_path / "sessions"
    args = ["--repo", str(one), "--state-dir", str(state)]
    with server(tmp_path, args, "--serve", f"two={two}") as base:
        same = {"file-tools-session": "s"}
        status, answer = call(base + "/mcp", "write_file", {"path": "only-one.txt", "content": "1\n"}, same)
        assert status == 200 and answer["result"]["isError"] is False, answer
        # The same session name on the other repository sees nothing of it, and cannot
        # undo it.
        status, answer = call(base + "/mcp/two", "diff_workspace", {}, same)
        assert status == 200 and "only-one.txt" not in json.dumps(answer), answer
        status, answer = call(base + "/mcp/two", "revert", {"paths": ["only-one.txt"]}, same)
        assert answer["result"]["isError"] is True, answer
        assert (one / "only-one.txt").read_text() == "1\n"
        # Positive control: on its own repository the session sees its change.
        status, answer = call(base + "/mcp", "diff_workspace", {}, same)
        assert "only-one.txt" in json.dumps(answer), answer
    names = {p.name for p in state.iterdir()}
    assert f"{repo_key(one)}-s" in names and f"{repo_key(two)}-s" in names, names


def test_malformed_requests_get_clear_refusals_that_name_no_host_path(repos, tmp_path):
    one, _ = repos
    state = tmp_path / "sessions"
    state.mkdir()
    # A session whose state directory cannot be made (a file sits at its place).
    (state / f"{repo_key(one)}-broken").write_text("not a directory\n")
    with server(tmp_path, ["--repo", str(one), "--state-dir", str(state)]) as base:
        url = base + "/mcp"
        status, answer = call(url, "read_file", {"path": "README.md"}, {"file-tools-session": "broken"})
        text = httpx2.post(url, json={}, headers={**HEADERS, "file-tools-session": "broken"}).text
        assert status == 500 and answer is None, answer
        assert "server's log" in text and str(tmp_path) not in text, text
        # A body over 4 MiB is refused before it reaches a session.
        big = tools_call("write_file", {"path": "big.txt", "content": "x" * (5 << 20)})
        r = httpx2.post(url, json=big, headers=HEADERS, timeout=60)
        assert r.status_code == 413, r.status_code
        assert not (one / "big.txt").exists()
        # Host headers that are not one plain loopback authority.
        for host in ("localhost:80x", "user@localhost", "localhost:99999"):
            status, _ = call(url, "read_file", {"path": "README.md"}, {"host": host})
            assert status == 403, host
        # Positive control: a plain request is served.
        status, answer = call(url, "read_file", {"path": "README.md"})
        assert status == 200 and "calc" in structured(answer)["content"]


def test_the_bearer_scheme_is_matched_in_any_case(repos, tmp_path):
    one, _ = repos
    token = "k" * 32
    token_file = tmp_path / "token"
    token_file.write_text(token)
    with server(tmp_path, ["--repo", str(one)], "--http-token-file", str(token_file)) as base:
        for scheme in ("Bearer", "bearer", "BEARER"):
            status, answer = call(base + "/mcp", "read_file", {"path": "README.md"}, {"authorization": f"{scheme} {token}"})
            assert status == 200 and "calc" in structured(answer)["content"], scheme
        for wrong in (f"Basic {token}", f"Bearer {token}x", f"Bearer{token}"):
            status, _ = call(base + "/mcp", "read_file", {"path": "README.md"}, {"authorization": wrong})
            assert status == 401, wrong


def raw(port, request: bytes, timeout=10):
    """Sends REQUEST as it is on a new connection; returns the status line's code."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(request)
        head = sock.recv(4096).split(b"\r\n", 1)[0]
    return int(head.split()[1])


def test_web_pages_and_foreign_targets_reach_nothing_but_the_checked_paths(repos, tmp_path):
    one, _ = repos
    with server(tmp_path, ["--repo", str(one)]) as base:
        port = int(base.rsplit(":", 1)[1])
        # A page's request for the metrics (or any path but the MCP ones) is refused.
        assert httpx2.get(base + "/metrics", headers={"origin": "http://evil.example"}).status_code == 403
        assert httpx2.get(base + "/elsewhere", headers={"origin": "http://evil.example"}).status_code == 403
        # Positive control: a scraper without an Origin reads them.
        scraped = httpx2.get(base + "/metrics")
        assert scraped.status_code == 200
        # Opening sessions is set-up, not a tool call: nothing is counted as unknown.
        assert 'tool="unknown"' not in scraped.text, scraped.text
        # A request target in absolute form must name a served host too.
        foreign = b"GET http://evil.example/metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        assert raw(port, foreign) == 403
        local = b"GET http://127.0.0.1/metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        assert raw(port, local) == 200


def test_made_up_session_names_cannot_fill_the_disk(repos, tmp_path):
    one, _ = repos
    state = tmp_path / "sessions"
    state.mkdir()
    key = repo_key(one)
    # As if 255 more sessions had been opened before (the default one makes 256).
    for i in range(255):
        (state / f"{key}-old{i}").mkdir()
    with server(tmp_path, ["--repo", str(one), "--state-dir", str(state)]) as base:
        r = httpx2.post(base + "/mcp", json={}, headers={**HEADERS, "file-tools-session": "one-more"})
        assert r.status_code == 503 and "name one already in use" in r.text, r.text
        assert not (state / f"{key}-one-more").exists()
        # Positive control: a name already kept is served.
        status, answer = call(base + "/mcp", "read_file", {"path": "README.md"}, {"file-tools-session": "old7"})
        assert status == 200 and "calc" in structured(answer)["content"]


def test_a_client_that_stops_reading_loses_its_connections_not_the_server(repos, tmp_path):
    one, _ = repos
    (one / "big.txt").write_text(("abcdefghij" * 9 + "\n") * 2800)
    body = json.dumps(tools_call("read_file", {"path": "big.txt"})).encode()
    request = (b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n"
               b"accept: application/json, text/event-stream\r\nmcp-protocol-version: 2025-11-25\r\n"
               b"content-length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    with server(tmp_path, ["--repo", str(one)]) as base:
        port = int(base.rsplit(":", 1)[1])
        stuck = []
        # Every connection slot taken by a client that sends many requests and reads nothing.
        for _ in range(260):
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.connect(("127.0.0.1", port))
            s.setblocking(False)
            try:
                s.send(request * 20)
            except BlockingIOError:
                pass
            stuck.append(s)
        try:
            # The stalled writes are cut after 10 s: a normal client is served again soon after.
            started = time.monotonic()
            status, answer = call(base + "/mcp", "read_file", {"path": "README.md"})
            waited = time.monotonic() - started
            assert status == 200 and "calc" in structured(answer)["content"]
            # Under the client's own 60 s timeout: the server did not hold it for ever.
            assert waited < 60, waited
        finally:
            for s in stuck:
                s.close()


def test_refused_requests_end_their_connection_so_they_hold_no_slot(repos, tmp_path):
    one, _ = repos
    token_file = tmp_path / "token"
    token_file.write_text("k" * 32)
    with server(tmp_path, ["--repo", str(one)], "--http-token-file", str(token_file)) as base:
        port = int(base.rsplit(":", 1)[1])

        def answers_then(request):
            """The status of REQUEST's answer, and whether the server closed after it."""
            with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
                sock.sendall(request)
                data = b""
                while True:
                    chunk = sock.recv(65536)
                    if not chunk:
                        return int(data.split()[1]), True
                    data += chunk
                    head, _, rest = data.partition(b"\r\n\r\n")
                    length = re.search(rb"content-length: (\d+)", head, re.I)
                    if length and len(rest) >= int(length.group(1)):
                        # The whole answer is in: wait a moment for the close.
                        sock.settimeout(2)
                        try:
                            return int(data.split()[1]), sock.recv(1) == b""
                        except socket.timeout:
                            return int(data.split()[1]), False

        for request in (b"GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
                        b"GET /metrics HTTP/1.1\r\nHost: evil.example\r\n\r\n"):
            status, closed = answers_then(request)
            assert status in (401, 403) and closed, (request, status, closed)
        # Positive control: an accepted request keeps its connection for the next one.
        good = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + b"k" * 32 + b"\r\n\r\n"
        status, closed = answers_then(good)
        assert status == 200 and not closed
