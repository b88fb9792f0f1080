"""Tool metadata over MCP: titles, hints, output schemas every result validates against,
and the protocol error for a tool the server does not offer."""

import json

import jsonschema
import pytest
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS

from mcp_harness import ROOT, run, structured

# One successful and one failing call of every tool (the failing one names a missing file
# or passes bad arguments the component itself refuses).
CALLS = {
    "list_dir": ({"path": "src"}, {"path": "nowhere"}),
    "find_files": ({"patterns": ["*.rs"]}, {"patterns": ["["]}),
    "read_file": ({"path": "src/lib.rs"}, {"path": "missing.rs"}),
    "read_many": ({"paths": ["src/lib.rs", "missing.rs"]}, {"paths": ["/etc/passwd"] * 50}),
    # (The test writes the image: the demo repository has none.)
    "read_media": ({"path": "logo.png"}, {"path": "src/lib.rs"}),
    "search_text": ({"query": "fn "}, {"query": "(", "regex": True}),
    "file_info": ({"path": "src"}, {"path": "../x"}),
    "write_file": ({"path": "new.txt", "content": "x\n"}, {"path": "../x", "content": "x"}),
    "edit_file": (
        {"path": "new.txt", "edits": [{"old_text": "x", "new_text": "y"}]},
        {"path": "new.txt", "edits": [{"old_text": "absent", "new_text": "y"}]},
    ),
    "apply_patch": (
        {"patch": "--- /dev/null\n+++ b/p.md\n@@ -0,0 +1 @@\n+p\n"},
        {"patch": "not a patch"},
    ),
    "append_file": ({"path": "new.txt", "content": "z\n"}, {"path": "..", "content": "z"}),
    "move_file": ({"from": "p.md", "to": "q.md"}, {"from": "missing", "to": "r.md"}),
    # A delete names the sha256 of what it removes: the one the move reported.
    "delete_file": (
        lambda done: {"path": "q.md", "expected_sha256": done["move_file"]["changes"][-1]["sha256_after"]},
        {"path": "missing"},
    ),
    "diff_workspace": ({}, {"paths": ["../x"]}),
    "revert": ({"paths": ["new.txt"]}, {"paths": ["never-changed.md"]}),
    "changes_since": ({}, {"token": "forged"}),
}


@pytest.fixture()
def moves_allowed(tmp_path):
    policy = tmp_path / "policy.toml"
    policy.write_text("allow_move = true\n")
    return policy


def test_every_tool_has_a_title_hints_and_an_output_schema(repo, moves_allowed):
    async def body(s):
        return (await s.list_tools()).tools

    tools = run(repo, body, "--policy", str(moves_allowed))
    assert {t.name for t in tools} == set(CALLS)
    for t in tools:
        assert t.title and t.title != t.name, t
        assert t.annotations.title == t.title
        assert t.annotations.open_world_hint is False, t.name
        assert t.output_schema["type"] == "object", t.name
        jsonschema.validators.validator_for(t.output_schema).check_schema(t.output_schema)


def test_every_result_and_every_error_validates_against_the_output_schema(repo, moves_allowed):
    async def body(s):
        schemas = {t.name: t.output_schema for t in (await s.list_tools()).tools}
        out, done = [], {}
        for name, (good, bad) in CALLS.items():
            good = good(done) if callable(good) else good
            ok = await s.call_tool(name, good)
            done[name] = ok.structured_content
            out.append((name, good, ok))
            out.append((name, bad, await s.call_tool(name, bad)))
        return schemas, out

    (repo / "logo.png").write_bytes((ROOT / "tests/fixtures/media/pixels.png").read_bytes())
    schemas, out = run(repo, body, "--policy", str(moves_allowed))
    for name, args, result in out:
        content = structured(result)
        jsonschema.validate(content, schemas[name])
        # The text content carries the same JSON (for clients that ignore structure); a
        # media result's leaves out the base64, which its image or resource block carries.
        if not result.is_error:
            shown = {k: v for k, v in content.items() if not (name == "read_media" and k == "data_base64")}
            assert json.loads(result.content[-1].text) == shown
    outcomes = {(name, r.is_error) for name, _, r in out}
    # Each tool was seen both succeeding and failing: the schema admits both shapes.
    assert outcomes == {(n, e) for n in CALLS for e in (False, True)}, sorted(outcomes)


def test_a_result_off_the_schema_is_refused_by_it(repo):
    """Positive control: the published schema is strict enough to reject a wrong shape."""

    async def body(s):
        tools = {t.name: t for t in (await s.list_tools()).tools}
        return tools["read_file"].output_schema, structured(
            await s.call_tool("read_file", {"path": "src/lib.rs"})
        )

    schema, good = run(repo, body)
    jsonschema.validate(good, schema)
    for broken in (
        {k: v for k, v in good.items() if k != "sha256"},
        {**good, "start_line": "one"},
        {"error": {"code": "NO_SUCH_CODE", "message": "x"}},
        {"error": {"message": "no code"}},
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, schema)


def test_unknown_tool_is_an_invalid_params_protocol_error_and_is_audited(repo, tmp_path):
    log = tmp_path / "audit.jsonl"

    async def body(s):
        with pytest.raises(MCPError) as refused:
            await s.call_tool("rm_rf", {"path": "."})
        # The session goes on.
        after = await s.call_tool("read_file", {"path": "README.md"})
        return refused.value, after

    refused, after = run(repo, body, "--audit-log", str(log))
    assert refused.error.code == INVALID_PARAMS
    assert "rm_rf" in refused.error.message
    assert not after.is_error
    events = [json.loads(line) for line in log.read_text().splitlines()]
    refusal = [e for e in events if e["tool"] == "rm_rf"]
    assert len(refusal) == 1 and refusal[0]["ok"] is False
    assert refusal[0]["error_code"] == "INVALID_INPUT"
