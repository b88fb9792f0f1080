"""End-to-end test of `file-tools mcp` with the official Python MCP SDK as the client.

The server runs as a child process over stdio, exactly as an MCP client would start it.
Environment: FILE_TOOLS_BIN names the `file-tools` binary (scripts/test.sh sets it).
"""

import json

import pytest
from mcp import MCPError
from mcp.types import INVALID_PARAMS

from mcp_harness import MUTATING, ROOT, run, snapshot, structured


def test_lists_every_tool_with_schema_and_annotations(repo):
    async def body(s):
        return (await s.list_tools()).tools

    tools = {t.name: t for t in run(repo, body)}
    assert {"read_file", "search_text", "edit_file", "apply_patch", "diff_workspace"} <= set(tools)
    read = tools["read_file"]
    assert read.input_schema["type"] == "object"
    assert "path" in read.input_schema["properties"]
    assert read.annotations.read_only_hint is True
    assert tools["delete_file"].annotations.destructive_hint is True
    assert tools["edit_file"].annotations.read_only_hint is False
    assert "PATH_REJECTED" in read.description


def test_read_only_server_offers_no_mutation_tools(repo):
    async def body(s):
        listed = {t.name for t in (await s.list_tools()).tools}
        try:
            refused = await s.call_tool("write_file", {"path": "x.txt", "content": "x"})
        except MCPError as e:
            refused = e
        return listed, refused

    before = snapshot(repo)
    listed, refused = run(repo, body, "--read-only")
    assert "read_file" in listed
    assert not (listed & MUTATING)
    # A tool the server does not offer is a protocol error (invalid params), not a result.
    assert isinstance(refused, MCPError), refused
    assert refused.error.code == INVALID_PARAMS
    assert "write_file" in refused.error.message
    assert snapshot(repo) == before


def test_read_search_edit_patch_escape_and_diff(repo, tmp_path):
    async def body(s):
        out = {}
        out["read"] = await s.call_tool("read_file", {"path": "src/lib.rs"})
        out["search"] = await s.call_tool("search_text", {"query": "fn "})
        sha = structured(out["read"])["sha256"]
        content = structured(out["read"])["content"]
        first = content.splitlines()[0]
        out["edit"] = await s.call_tool(
            "edit_file",
            {"path": "src/lib.rs", "expected_sha256": sha,
             "edits": [{"old_text": first, "new_text": first + " // edited over MCP"}]},
        )
        out["stale"] = await s.call_tool(
            "write_file", {"path": "src/lib.rs", "content": "lost\n", "expected_sha256": sha}
        )
        patch = "--- /dev/null\n+++ b/docs/new.md\n@@ -0,0 +1 @@\n+added by a patch\n"
        out["patch"] = await s.call_tool("apply_patch", {"patch": patch})
        out["escape"] = await s.call_tool("read_file", {"path": "../outside.txt"})
        out["escape_write"] = await s.call_tool(
            "write_file", {"path": "../outside.txt", "content": "pwned\n"}
        )
        out["diff"] = await s.call_tool("diff_workspace", {})
        return out

    out = run(repo, body)
    read = structured(out["read"])
    assert not out["read"].is_error
    assert read["path"] == "src/lib.rs"
    assert read["content"] == (ROOT / "examples/demo-repo/src/lib.rs").read_text()
    # The summary for the model comes first, the full JSON after it.
    assert out["read"].content[0].text == read["summary"]
    assert json.loads(out["read"].content[-1].text) == read

    hits = structured(out["search"])
    assert hits["matches"], hits

    assert not out["edit"].is_error, out["edit"]
    assert "// edited over MCP" in (repo / "src/lib.rs").read_text()

    assert out["stale"].is_error
    assert structured(out["stale"])["error"]["code"] == "WRITE_CONFLICT"
    assert "lost" not in (repo / "src/lib.rs").read_text()

    assert not out["patch"].is_error, out["patch"]
    assert (repo / "docs/new.md").read_text() == "added by a patch\n"

    for key in ("escape", "escape_write"):
        assert out[key].is_error
        err = structured(out[key])["error"]
        assert err["code"] == "PATH_REJECTED", err
        assert out[key].content[0].text.startswith("PATH_REJECTED")
    assert (tmp_path / "outside.txt").read_text() == "do not touch\n"

    diff = structured(out["diff"])
    changed = {f["path"] for f in diff["files"]}
    assert changed == {"src/lib.rs", "docs/new.md"}, diff
    assert "+added by a patch" in diff["diff"]


def test_audit_log_records_every_mcp_call(repo, tmp_path):
    log = tmp_path / "audit.jsonl"

    async def body(s):
        await s.call_tool("read_file", {"path": "README.md"})
        await s.call_tool("read_file", {"path": "/etc/passwd"})
        # Refused by name before the component sees it: audited all the same.
        with pytest.raises(MCPError):
            await s.call_tool("no_such_tool", {})

    run(repo, body, "--audit-log", str(log))
    events = [json.loads(line) for line in log.read_text().splitlines()]
    # The server describes its tools once at start-up; that call is audited too.
    assert events[0]["tool"] == "describe"
    events = events[1:]
    assert [e["tool"] for e in events] == ["read_file", "read_file", "no_such_tool"]
    assert events[0]["ok"] is True
    assert events[1]["ok"] is False
    assert events[1]["error_code"] == "PATH_REJECTED"
    assert events[2]["ok"] is False
    assert events[2]["error_code"] == "INVALID_INPUT"
