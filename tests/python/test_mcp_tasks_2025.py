"""Tasks as the 2025-11-25 revision has them: a `tools/call` that carries `task` answers at
once with a task, polled with `tasks/get`, read with `tasks/result`, listed with
`tasks/list` and stopped with `tasks/cancel`, in that revision's shapes.

The official TypeScript SDK (the client the conformance suite installs) drives it over
stdio and over HTTP; raw JSON-RPC lines try what that client does not: cancelling a running
task, approval asked inside one, the revisions that must not get the translation."""

import json
import os
import queue
import subprocess
import threading

import pytest

from http_harness import server
from mcp_harness import BIN, ROOT, SLOW_SEARCH, big_tree, poll_task, snapshot

SDK = ROOT / "target" / "conformance" / "node_modules" / "@modelcontextprotocol" / "sdk"
CLIENT = ROOT / "tests" / "python" / "tasks_2025_client.mjs"
ENV = dict(os.environ, FILE_TOOLS_CACHE_DIR=str(ROOT / "target" / "file-tools-cache"))


def official_client(*args):
    """What the SDK's client saw (see tasks_2025_client.mjs)."""
    assert SDK.is_dir(), "the MCP TypeScript SDK is missing: run scripts/setup.sh"
    done = subprocess.run(["node", str(CLIENT), str(SDK), *args], capture_output=True, timeout=300, env=ENV)
    assert done.returncode == 0, done.stderr.decode()[-4000:]
    return json.loads(done.stdout)


def check_official(seen):
    assert seen["version"] == "2025-11-25"
    assert seen["capabilities"]["tasks"]["requests"]["tools"]["call"] == {}
    assert "list" in seen["capabilities"]["tasks"] and "cancel" in seen["capabilities"]["tasks"]
    assert seen["taskSupport"] and set(seen["taskSupport"].values()) == {"optional"}, seen["taskSupport"]
    # The search ran as a task: made working, polled to completed, its result the call's.
    kinds = [m["type"] for m in seen["search"]]
    assert kinds[0] == "taskCreated" and kinds[-1] == "result", kinds
    made = seen["search"][0]["task"]
    assert made["status"] == "working" and made["ttl"] > 0 and made["pollInterval"] > 0, made
    assert seen["search"][-2]["task"]["status"] == "completed"
    result = seen["search"][-1]["result"]
    assert result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"] == made["taskId"]
    assert "resultType" not in result
    # Positive control: the same call without a task answers the same.
    assert result["structuredContent"] == seen["plain"]["structuredContent"]
    assert result["structuredContent"]["matches"], result
    # A tool error ends the task failed; its result still carries the code.
    assert [m["task"]["status"] for m in seen["missing"] if m["type"] == "taskStatus"][-1] == "failed"
    missing = seen["missingResult"]["ok"]
    assert missing["isError"] and missing["structuredContent"]["error"]["code"] == "NOT_FOUND", missing
    listed = {t["taskId"]: t["status"] for t in seen["list"]["ok"]["tasks"]}
    missing_id = seen["missing"][0]["task"]["taskId"]
    assert listed == {made["taskId"]: "completed", missing_id: "failed"}, listed
    assert seen["cancelEnded"]["code"] == -32602, seen["cancelEnded"]
    assert seen["unknown"]["code"] == -32602, seen["unknown"]


def test_the_official_sdk_runs_tools_as_tasks_over_stdio(repo):
    check_official(official_client("stdio", BIN, str(repo)))


def test_the_official_sdk_runs_tools_as_tasks_over_http(repo, tmp_path):
    with server(tmp_path, ["--repo", str(repo)]) as base:
        check_official(official_client("http", f"{base}/mcp"))


def test_the_official_sdk_approves_a_change_inside_a_task(repo, tmp_path):
    policy = tmp_path / "policy.toml"
    policy.write_text('[approval]\npaths = ["docs/**"]\n')
    before = snapshot(repo)
    got = official_client("approve", BIN, str(repo), str(policy))
    made = got["seen"][0]["task"]
    statuses = [m["task"]["status"] for m in got["seen"] if m["type"] == "taskStatus"]
    # The task waited for the user, and the question named it.
    assert "input_required" in statuses, statuses
    related = [m and m.get("io.modelcontextprotocol/related-task") for m in got["asked"]]
    assert related == [{"taskId": made["taskId"]}], got["asked"]
    result = got["seen"][-1]
    assert result["type"] == "result" and not result["result"].get("isError"), result
    after = snapshot(repo)
    assert after.pop("docs/new.md")
    assert after == before
    assert (repo / "docs" / "new.md").read_text() == "new\n"


class Client:
    """A raw stdio client of the revision REVISION; the server's requests are kept apart."""

    def __init__(self, repo, *args, revision="2025-11-25", elicitation=False):
        self.proc = subprocess.Popen([BIN, "--repo", str(repo), *args, "mcp"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=ENV)
        self.answers = queue.Queue()
        self.asked = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 0
        capabilities = {"elicitation": {"form": {}}} if elicitation else {}
        self.init = self.ask("initialize", {"protocolVersion": revision, "capabilities": capabilities,
                                            "clientInfo": {"name": "raw", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _read(self):
        for line in self.proc.stdout:
            message = json.loads(line)
            if "method" in message and "id" in message:
                self.asked.put(message)
            elif "id" in message:
                self.answers.put(message)

    def send(self, body):
        self.proc.stdin.write((json.dumps(body) + "\n").encode())
        self.proc.stdin.flush()

    def ask(self, method, params=None):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}})
        while True:
            message = self.answers.get(timeout=120)
            if message["id"] == self.next_id:
                return message

    def task(self, name, arguments):
        return self.ask("tools/call", {"name": name, "arguments": arguments, "task": {"ttl": 60000}})

    def poll(self, task_id):
        return poll_task(lambda t: self.ask("tasks/get", {"taskId": t})["result"], task_id)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def test_a_running_task_cancelled_ends_cancelled_without_a_result(repo):
    big_tree(repo)
    c = Client(repo)
    try:
        made = c.task("search_text", SLOW_SEARCH)["result"]["task"]
        assert made["status"] == "working", made
        cancelled = c.ask("tasks/cancel", {"taskId": made["taskId"]})["result"]
        result = c.ask("tasks/result", {"taskId": made["taskId"]})
        # Positive control: the same search, let run, completes with its counts.
        other = c.task("search_text", SLOW_SEARCH)["result"]["task"]
        finished = c.ask("tasks/result", {"taskId": other["taskId"]})["result"]
    finally:
        c.close()
    assert cancelled["taskId"] == made["taskId"] and cancelled["status"] == "cancelled", cancelled
    assert "error" in result and "cancelled" in result["error"]["message"], result
    assert not finished.get("isError") and finished["structuredContent"]["total_matches"] > 0, finished


@pytest.mark.parametrize("answer", ["accept", "decline"])
def test_approval_inside_a_task_is_asked_by_elicitation_and_writes_only_when_granted(repo, tmp_path, answer):
    policy = tmp_path / "policy.toml"
    policy.write_text('[approval]\npaths = ["docs/**"]\n')
    before = snapshot(repo)
    c = Client(repo, "--policy", str(policy), elicitation=True)
    try:
        made = c.task("write_file", {"path": "docs/new.md", "content": "new\n"})["result"]["task"]
        asked = c.asked.get(timeout=120)
        assert asked["method"] == "elicitation/create" and "docs/new.md" in json.dumps(asked), asked
        assert asked["params"]["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": made["taskId"]}
        waiting = c.ask("tasks/get", {"taskId": made["taskId"]})["result"]
        assert waiting["status"] == "input_required", waiting
        # Nothing is written while the user is asked.
        assert not (repo / "docs" / "new.md").exists()
        response = {"action": "accept", "content": {"approve": True}} if answer == "accept" else {"action": "decline"}
        c.send({"jsonrpc": "2.0", "id": asked["id"], "result": response})
        ended = c.poll(made["taskId"])
        result = c.ask("tasks/result", {"taskId": made["taskId"]})["result"]
    finally:
        c.close()
    after = snapshot(repo)
    if answer == "accept":
        assert ended["status"] == "completed" and not result.get("isError"), (ended, result)
        assert after.pop("docs/new.md")
    else:
        assert ended["status"] == "failed", ended
        assert result["structuredContent"]["error"]["code"] == "APPROVAL_REQUIRED", result
    assert after == before


def test_only_a_2025_11_25_client_gets_the_revisions_tasks(repo):
    earlier = Client(repo, revision="2025-06-18")
    try:
        plain = earlier.task("list_dir", {})
        listed = earlier.ask("tasks/list")
        # The names the transport gives a 2025-11-25 client's requests are its alone.
        direct = earlier.ask("file-tools/2025-11-25/tools/call", {"name": "list_dir", "task": {}})
        init = earlier.init["result"]
        tools = earlier.ask("tools/list")["result"]["tools"]
    finally:
        earlier.close()
    # A revision without tasks gets the call's answer, and no task methods or fields.
    assert "task" not in plain["result"] and "structuredContent" in plain["result"], plain
    assert listed["error"]["code"] == -32601, listed
    assert direct["error"]["code"] == -32601, direct
    assert "tasks" not in init["capabilities"] and all("execution" not in t for t in tools)
    # Positive control: the 2025-11-25 client on the same repository.
    c = Client(repo)
    try:
        made = c.task("list_dir", {})["result"]["task"]
        assert c.poll(made["taskId"])["status"] == "completed"
        assert c.init["result"]["capabilities"]["tasks"]["requests"]["tools"]["call"] == {}
    finally:
        c.close()


def test_tasks_are_listed_a_page_at_a_time(repo):
    c = Client(repo)
    try:
        made = [c.task("file_info", {"path": "README.md"})["result"]["task"]["taskId"] for _ in range(20)]
        first = c.ask("tasks/list")["result"]
        second = c.ask("tasks/list", {"cursor": first["nextCursor"]})["result"]
        bad = c.ask("tasks/list", {"cursor": "not-a-cursor"})
    finally:
        c.close()
    assert len(first["tasks"]) == 16 and "nextCursor" in first, first
    assert "nextCursor" not in second, second
    assert [t["taskId"] for t in first["tasks"] + second["tasks"]] == made
    assert bad["error"]["code"] == -32602, bad


def test_a_task_for_a_tool_not_offered_is_refused_as_the_call_would_be(repo):
    c = Client(repo)
    try:
        refused = c.task("no_such_tool", {})
        listed = c.ask("tasks/list")["result"]["tasks"]
    finally:
        c.close()
    assert refused["error"]["code"] == -32602 and "unknown tool" in refused["error"]["message"], refused
    assert listed == []


def test_over_http_a_session_sees_only_its_own_2025_11_25_tasks(repo, tmp_path):
    import httpx2

    from http_harness import HEADERS

    with server(tmp_path, ["--repo", str(repo)]) as base:

        def post(session, rid, method, params):
            headers = {**HEADERS, "file-tools-session": session}
            body = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
            return httpx2.post(f"{base}/mcp", json=body, headers=headers, timeout=60).json()

        made = post("a", 1, "tools/call", {"name": "list_dir", "arguments": {}, "task": {}})["result"]["task"]
        own = post("a", 2, "tasks/result", {"taskId": made["taskId"]})
        other = post("b", 3, "tasks/get", {"taskId": made["taskId"]})
        unknown = post("b", 4, "tasks/get", {"taskId": "no-such-task"})
        listed = post("b", 5, "tasks/list", {})["result"]["tasks"]
        own_list = post("a", 6, "tasks/list", {})["result"]["tasks"]
    assert "entries" in own["result"]["structuredContent"], own
    # Positive control: the session that made it lists it.
    assert [t["taskId"] for t in own_list] == [made["taskId"]], own_list
    assert other["error"]["message"].replace(made["taskId"], "ID") == \
        unknown["error"]["message"].replace("no-such-task", "ID"), (other, unknown)
    assert listed == []
