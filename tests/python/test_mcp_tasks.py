"""Long calls as tasks (the tasks extension, `io.modelcontextprotocol/tasks`): a client that
declares it on a request gets a task handle for a call still running after the server's
threshold and polls `tasks/get` for the very result the call would have answered; a client
that does not declare it never gets one; approval inside a task goes through
`input_required` and `tasks/update`; `tasks/cancel` leaves the repository untouched.

The Python SDK has no client for the extension, so these speak JSON-RPC over stdio
themselves, as a 2026-07-28 client (no `initialize`)."""

import json
import os
import queue
import subprocess
import threading
import time

import httpx2

from http_harness import HEADERS, server
from mcp_harness import BIN, ROOT, poll_task, snapshot

TASKS = "io.modelcontextprotocol/tasks"
ENV = dict(os.environ, FILE_TOOLS_CACHE_DIR=str(ROOT / "target" / "file-tools-cache"))
POLICY = """
[approval]
paths = ["docs/**"]
"""


def meta(tasks=True, elicitation=False):
    capabilities = {}
    if tasks:
        capabilities["extensions"] = {TASKS: {}}
    if elicitation:
        capabilities["elicitation"] = {"form": {}}
    return {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }


class Client:
    """One stdio server, asked one request at a time (notifications are passed over)."""

    def __init__(self, repo, *args, after_ms=None):
        task_args = [] if after_ms is None else ["--task-after-ms", str(after_ms)]
        self.proc = subprocess.Popen([BIN, "--repo", str(repo), *args, "mcp", *task_args],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=ENV)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 0

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line)

    def ask(self, method, params=None, **caps):
        self.next_id += 1
        body = {"jsonrpc": "2.0", "id": self.next_id, "method": method,
                "params": {**(params or {}), "_meta": meta(**caps)}}
        self.proc.stdin.write((json.dumps(body) + "\n").encode())
        self.proc.stdin.flush()
        while True:
            message = json.loads(self.lines.get(timeout=120))
            if message.get("id") == self.next_id:
                return message

    def send_many(self, requests):
        """Sends REQUESTS ((method, params, caps) each) in one write, then returns their
        answers in the order sent."""
        ids = []
        lines = b""
        for method, params, caps in requests:
            self.next_id += 1
            ids.append(self.next_id)
            body = {"jsonrpc": "2.0", "id": self.next_id, "method": method,
                    "params": {**params, "_meta": meta(**caps)}}
            lines += (json.dumps(body) + "\n").encode()
        self.proc.stdin.write(lines)
        self.proc.stdin.flush()
        got = {}
        while len(got) < len(ids):
            message = json.loads(self.lines.get(timeout=120))
            if message.get("id") in ids:
                got[message["id"]] = message
        return [got[i] for i in ids]

    def call(self, name, arguments, **caps):
        return self.ask("tools/call", {"name": name, "arguments": arguments}, **caps)

    def poll(self, task_id, until, within=60, **caps):
        """`tasks/get` until the task's status is one of `until` (a terminal one at the
        latest), for at most WITHIN seconds."""
        return poll_task(lambda t: self.ask("tasks/get", {"taskId": t}, **caps)["result"], task_id, until, within)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def asking(repo, tmp_path):
    """A server whose policy asks for approval of changes under docs/, and that makes every
    call of a client with the extension a task."""
    policy = tmp_path / "policy.toml"
    policy.write_text(POLICY)
    return Client(repo, "--policy", str(policy), after_ms=0)


def test_a_call_still_running_becomes_a_task_whose_result_is_the_calls(repo):
    args = {"query": "fn ", "include": ["*.rs"]}
    c = Client(repo, after_ms=0)
    try:
        direct = c.call("search_text", args, tasks=False)["result"]
        made = c.call("search_text", args)["result"]
        done = c.poll(made["taskId"], ())
    finally:
        c.close()
    # Positive control: without the extension the same server answers in the request.
    assert direct["resultType"] == "complete" and "taskId" not in direct
    assert made["resultType"] == "task" and made["status"] == "working", made
    assert made["pollIntervalMs"] > 0 and made["ttlMs"] > 0
    assert done["status"] == "completed", done
    assert done["result"]["structuredContent"] == direct["structuredContent"]
    assert done["result"]["structuredContent"]["matches"], done


def test_a_quick_call_answers_in_the_request_even_for_a_client_with_tasks(repo):
    # A threshold no call of a loaded machine reaches: the call ends before it.
    c = Client(repo, after_ms=30000)
    try:
        answered = c.call("read_file", {"path": "README.md"})["result"]
    finally:
        c.close()
    assert answered["resultType"] == "complete" and "taskId" not in answered
    assert "content" in answered["structuredContent"]


def test_approval_inside_a_task_asks_through_input_required_and_writes_only_when_granted(repo, tmp_path):
    before = snapshot(repo)
    c = asking(repo, tmp_path)
    try:
        outcomes = {}
        for answer in ("accept", "decline", "cancel"):
            path = f"docs/{answer}.md"
            made = c.call("write_file", {"path": path, "content": "new\n"}, elicitation=True)["result"]
            waiting = c.poll(made["taskId"], ("input_required",), elicitation=True)
            assert waiting["status"] == "input_required", waiting
            (key, asked), = waiting["inputRequests"].items()
            assert asked["method"] == "elicitation/create" and path in json.dumps(asked)
            # Nothing is written while the user is asked.
            assert not (repo / path).exists()
            if answer == "cancel":
                c.ask("tasks/cancel", {"taskId": made["taskId"]})
            else:
                content = {"approve": True} if answer == "accept" else None
                response = {"action": answer} | ({"content": content} if content else {})
                c.ask("tasks/update", {"taskId": made["taskId"], "inputResponses": {key: response}})
            outcomes[answer] = c.poll(made["taskId"], (), elicitation=True)
    finally:
        c.close()
    accepted = outcomes["accept"]
    assert accepted["status"] == "completed" and not accepted["result"].get("isError"), accepted
    assert (repo / "docs" / "accept.md").read_text() == "new\n"
    declined = outcomes["decline"]
    assert declined["status"] == "completed" and declined["result"]["isError"], declined
    assert declined["result"]["structuredContent"]["error"]["code"] == "APPROVAL_REQUIRED"
    assert outcomes["cancel"]["status"] == "cancelled", outcomes["cancel"]
    after = snapshot(repo)
    assert after.pop("docs/accept.md")
    assert after == before


def test_tasks_of_another_client_or_unknown_ids_are_errors(repo):
    c = Client(repo, after_ms=0)
    try:
        made = c.call("list_dir", {})["result"]
        unknown = c.ask("tasks/get", {"taskId": "no-such-task"})
        undeclared = c.ask("tasks/get", {"taskId": made["taskId"]}, tasks=False)
        known = c.poll(made["taskId"], ())
    finally:
        c.close()
    assert "error" in unknown, unknown
    # A request that does not declare the extension may not use its methods.
    assert "error" in undeclared, undeclared
    assert known["status"] == "completed"


def test_a_task_over_http_is_polled_by_later_requests(repo, tmp_path):
    with server(tmp_path, ["--repo", str(repo)], "--task-after-ms", "0") as base:

        def post(rid, method, params, **caps):
            headers = {**HEADERS, "mcp-protocol-version": "2026-07-28", "mcp-method": method}
            # The revision names what a request acts on in a header: the tool, or the task.
            headers["mcp-name"] = params["name"] if method == "tools/call" else params["taskId"]
            body = {"jsonrpc": "2.0", "id": rid, "method": method, "params": {**params, "_meta": meta(**caps)}}
            r = httpx2.post(f"{base}/mcp", json=body, headers=headers, timeout=60)
            assert r.status_code == 200, r.text
            if r.headers.get("content-type", "").startswith("text/event-stream"):
                data = [line[5:] for line in r.text.splitlines() if line.startswith("data:") and line[5:].strip()]
                return json.loads(data[-1])
            return r.json()

        args = {"name": "find_files", "arguments": {"patterns": ["*.rs"]}}
        direct = post(1, "tools/call", args, tasks=False)["result"]
        made = post(2, "tools/call", args)["result"]
        assert made["resultType"] == "task", made
        deadline = time.monotonic() + 60
        while True:
            got = post(3, "tasks/get", {"taskId": made["taskId"]})["result"]
            if got["status"] != "working" or time.monotonic() > deadline:
                break
            time.sleep(0.05)
    assert direct["resultType"] == "complete"
    assert got["status"] == "completed", got
    assert got["result"]["structuredContent"] == direct["structuredContent"]


def test_over_http_a_session_sees_its_own_tasks_only(repo, tmp_path):
    with server(tmp_path, ["--repo", str(repo)], "--task-after-ms", "0") as base:

        def post(session, rid, method, params):
            headers = {**HEADERS, "mcp-protocol-version": "2026-07-28", "mcp-method": method,
                       "mcp-name": params.get("name") or params["taskId"], "file-tools-session": session}
            body = {"jsonrpc": "2.0", "id": rid, "method": method, "params": {**params, "_meta": meta()}}
            return httpx2.post(f"{base}/mcp", json=body, headers=headers, timeout=60).json()

        made = post("a", 1, "tools/call", {"name": "list_dir", "arguments": {}})["result"]
        other = post("b", 2, "tasks/get", {"taskId": made["taskId"]})
        unknown = post("b", 3, "tasks/get", {"taskId": "no-such-task"})
        own = post("a", 4, "tasks/get", {"taskId": made["taskId"]})
    assert made["resultType"] == "task", made
    # Another session's task answers exactly as an unknown one.
    assert other["error"]["message"].replace(made["taskId"], "ID") == \
        unknown["error"]["message"].replace("no-such-task", "ID"), (other, unknown)
    assert "result" in own and own["result"]["taskId"] == made["taskId"], own


def test_the_server_keeps_a_bounded_number_of_tasks_then_answers_in_the_request(repo):
    c = Client(repo, after_ms=0)
    try:
        made = []
        for _ in range(256):
            made.append(c.call("list_dir", {})["result"])
            # Each ends before the next begins, so the cap on running tasks plays no part.
            last = c.poll(made[-1]["taskId"], ())
        past = c.call("list_dir", {})["result"]
    finally:
        c.close()
    assert all(m["resultType"] == "task" for m in made)
    assert len({m["taskId"] for m in made}) == 256
    # The 257th within the keeping time is answered at once, with the same result.
    assert past["resultType"] == "complete" and "taskId" not in past, past
    assert past["structuredContent"] == last["result"]["structuredContent"]


def test_calls_arriving_together_get_at_most_32_running_tasks(repo, tmp_path):
    c = asking(repo, tmp_path)
    try:
        # Each waits for its user's approval, so every task made stays running.
        writes = [("tools/call", {"name": "write_file", "arguments": {"path": f"docs/n{i}.md", "content": "x\n"}},
                   {"elicitation": True}) for i in range(40)]
        answers = [a["result"] for a in c.send_many(writes)]
        tasks = [a["taskId"] for a in answers if a["resultType"] == "task"]
        for t in tasks:
            # Each is asking its user by now: they stay running until cancelled.
            assert c.poll(t, ("input_required",), elicitation=True)["status"] == "input_required"
            c.ask("tasks/cancel", {"taskId": t}, elicitation=True)
        ended = [c.poll(t, (), elicitation=True)["status"] for t in tasks]
    finally:
        c.close()
    assert len(tasks) == 32, [a["resultType"] for a in answers]
    # Past the bound, calls answer in the request: here, with the approval to ask.
    assert {a["resultType"] for a in answers if "taskId" not in a} == {"input_required"}
    assert set(ended) == {"cancelled"}
    assert not list((repo / "docs").glob("n*.md"))


def test_a_client_of_an_earlier_revision_gets_no_task_even_declaring_the_extension(repo):
    c = Client(repo, after_ms=0)
    try:
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "clientInfo": {"name": "raw", "version": "1"},
            "capabilities": {"extensions": {TASKS: {}}}}}
        c.proc.stdin.write((json.dumps(init) + "\n").encode())
        c.proc.stdin.write((json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n").encode())
        c.proc.stdin.flush()
        assert "result" in json.loads(c.lines.get(timeout=120))
        c.next_id = 0
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "list_dir", "arguments": {}}}
        c.proc.stdin.write((json.dumps(body) + "\n").encode())
        c.proc.stdin.flush()
        answer = json.loads(c.lines.get(timeout=120))
    finally:
        c.close()
    assert answer["id"] == 1 and "taskId" not in answer["result"], answer
    assert answer["result"]["structuredContent"]["entries"]


def test_a_task_cancelled_as_it_begins_ends_cancelled_and_writes_nothing(repo, tmp_path):
    # The cancel races the task's first call: it may come before, during or after the
    # call finds that it needs approval, and before or after the question is put.
    before = snapshot(repo)
    c = asking(repo, tmp_path)
    try:
        ended = []
        for i in range(60):
            args = {"path": f"docs/race{i}.md", "content": "x\n"}
            made = c.call("write_file", args, elicitation=True)["result"]
            c.ask("tasks/cancel", {"taskId": made["taskId"]}, elicitation=True)
            ended.append(c.poll(made["taskId"], (), within=20, elicitation=True)["status"])
    finally:
        c.close()
    assert set(ended) == {"cancelled"}, ended
    assert snapshot(repo) == before
