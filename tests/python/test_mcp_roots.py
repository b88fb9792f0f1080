"""A server started without --repo works in the client's one file:// root, follows it when
the roots change, and says why when there is not exactly one."""

import asyncio
import shutil

from mcp import types

from mcp_harness import ROOT, run, structured


def roots_of(holder):
    async def list_roots(context):
        return types.ListRootsResult(roots=[types.Root(uri=u) for u in holder])

    return list_roots


def test_the_one_file_root_is_the_repository(repo):
    async def body(s):
        return await s.call_tool("read_file", {"path": "src/lib.rs"})

    roots = [repo.as_uri()]
    result = run(None, body, list_roots_callback=roots_of(roots))
    assert not result.is_error, result
    assert structured(result)["content"] == (repo / "src" / "lib.rs").read_text()


def test_a_root_change_moves_the_server_to_the_new_root(repo, tmp_path):
    other = tmp_path / "other"
    shutil.copytree(ROOT / "examples" / "demo-repo", other)
    (other / "only-here.txt").write_text("the second root\n")
    roots = [repo.as_uri()]

    async def body(s):
        before = await s.call_tool("read_file", {"path": "only-here.txt"})
        roots[:] = [other.as_uri()]
        await s.send_roots_list_changed()
        for _ in range(100):
            after = await s.call_tool("read_file", {"path": "only-here.txt"})
            if not after.is_error:
                break
            await asyncio.sleep(0.05)
        return before, after

    before, after = run(None, body, list_roots_callback=roots_of(roots))
    assert structured(before)["error"]["code"] == "NOT_FOUND"
    assert not after.is_error, after
    assert structured(after)["content"] == "the second root\n"


def test_without_exactly_one_file_root_every_call_says_why(repo, tmp_path):
    async def body(s):
        return await s.call_tool("read_file", {"path": "README.md"})

    # (The SDK lets a client declare only file:// roots; the Rust unit test of `choose`
    # covers the others.)
    for roots in ([], [repo.as_uri(), tmp_path.as_uri()]):
        result = run(None, body, list_roots_callback=roots_of(roots))
        assert result.is_error
        message = structured(result)["error"]["message"]
        assert "exactly one" in message and "--repo" in message, message
    # A client that declares no roots at all.
    result = run(None, body)
    assert result.is_error
    assert "--repo" in structured(result)["error"]["message"]
