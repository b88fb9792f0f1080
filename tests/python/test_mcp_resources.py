"""Files as MCP resources (`file:///{path}`): listed, read and completed through the
component's tools, so nothing the read policy blocks is listed, completed or served, while
the allowed file beside it is."""

import pytest
from mcp import types
from mcp.shared.exceptions import MCPError

from mcp_harness import run

SECRET = "blocked-content-5d1e"


@pytest.fixture()
def policy_args(repo, tmp_path):
    (repo / "private").mkdir()
    (repo / "private" / "plans.txt").write_text(SECRET + "\n")
    (repo / "docs" / "plain notes.md").write_text("allowed beside it\n")
    (repo / "docs" / "private-ish.md").write_text("allowed too\n")
    policy = tmp_path / "policy.toml"
    # `private/**` blocks what the directory holds; `private` blocks its name too (list_dir
    # shows the model a directory whose contents alone are blocked, and so do completions).
    policy.write_text('[read]\nblock = ["private", "private/**", "docs/private-ish.md"]\n')
    return ["--policy", str(policy)]


def test_the_file_template_is_offered(repo, policy_args):
    async def body(s):
        return (await s.list_resource_templates()).resource_templates

    templates = run(repo, body, *policy_args)
    assert [t.uri_template for t in templates] == ["file:///{path}"]


def test_listing_shows_allowed_files_and_never_blocked_ones(repo, policy_args):
    async def body(s):
        return [str(r.uri) for r in (await s.list_resources()).resources]

    uris = run(repo, body, *policy_args)
    assert "file:///src/lib.rs" in uris
    assert "file:///docs/plain%20notes.md" in uris
    assert not any("private" in u for u in uris), uris


def test_reading_serves_allowed_files_and_refuses_blocked_ones_alike(repo, policy_args):
    async def body(s):
        ok = await s.read_resource("file:///docs/plain%20notes.md")
        out = {"ok": ok}
        for name, uri in {
            "blocked": "file:///private/plans.txt",
            "missing": "file:///private/none.txt",
            "escape": "file:///../outside.txt",
            "foreign": "http://example.com/x",
        }.items():
            with pytest.raises(MCPError) as e:
                await s.read_resource(uri)
            out[name] = e.value.error
        return out

    out = run(repo, body, *policy_args)
    assert out["ok"].contents[0].text == "allowed beside it\n"
    for key in ("blocked", "missing", "escape", "foreign"):
        assert SECRET not in out[key].message
    # A blocked file and a missing one beside it answer the same.
    assert out["blocked"].code == out["missing"].code
    assert out["blocked"].message.replace("plans", "none") == out["missing"].message
    assert "do not touch" not in out["escape"].message


def test_completion_offers_allowed_paths_only(repo, policy_args):
    async def complete(s, value):
        ref = types.ResourceTemplateReference(type="ref/resource", uri="file:///{path}")
        return (await s.complete(ref, {"name": "path", "value": value})).completion.values

    async def body(s):
        return {v: await complete(s, v) for v in ("", "pri", "private/", "docs/p", "src/")}

    out = run(repo, body, *policy_args)
    assert "src/" in out[""] and "README.md" in out[""]
    assert not any("private" in v for v in out[""]), out[""]
    assert out["pri"] == [] and out["private/"] == []
    assert out["docs/p"] == ["docs/plain notes.md"], out["docs/p"]
    assert "src/lib.rs" in out["src/"]
