"""The Python host reads, edits and is refused an escape, through the real component.

FILE_TOOLS_WASM names the component (scripts/test.sh writes it with `file-tools component`).
"""

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from file_tools import FileTools, ToolError

ROOT = Path(__file__).resolve().parents[2]
WASM = os.environ.get("FILE_TOOLS_WASM", str(ROOT / "target" / "file-tools.wasm"))


@pytest.fixture()
def repo(tmp_path):
    dest = tmp_path / "repo"
    shutil.copytree(ROOT / "examples" / "demo-repo", dest)
    (tmp_path / "outside.txt").write_text("outside\n")
    return dest


def tree(root):
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_read_edit_and_audit(repo):
    events = []
    tools = FileTools(WASM, repo, on_audit=events.append)
    page = tools.call("read_file", {"path": "src/lib.rs"})
    assert page["content"] == (repo / "src/lib.rs").read_text()
    assert page["sha256"] == hashlib.sha256((repo / "src/lib.rs").read_bytes()).hexdigest()

    first = page["content"].splitlines()[0]
    done = tools.call(
        "edit_file",
        {"path": "src/lib.rs", "expected_sha256": page["sha256"],
         "edits": [{"old_text": first, "new_text": first + " // from python"}]},
    )
    assert done["summary"]
    assert (repo / "src/lib.rs").read_text().splitlines()[0] == first + " // from python"

    with pytest.raises(ToolError) as stale:
        tools.call("write_file", {"path": "src/lib.rs", "content": "x\n",
                                  "expected_sha256": page["sha256"]})
    assert stale.value.code == "WRITE_CONFLICT"

    assert [e["tool"] for e in events] == ["read_file", "edit_file", "write_file"]
    assert events[1]["ok"] and events[1]["paths_written"] == ["src/lib.rs"]
    assert events[2]["error_code"] == "WRITE_CONFLICT"


def test_escapes_are_refused_and_nothing_changes(repo, tmp_path):
    tools = FileTools(WASM, repo)
    before = tree(repo)
    (repo / "link").symlink_to(tmp_path / "outside.txt")
    for tool, args in [
        ("read_file", {"path": "../outside.txt"}),
        ("read_file", {"path": "/etc/passwd"}),
        ("read_file", {"path": "link"}),
        ("write_file", {"path": "../outside.txt", "content": "pwned\n"}),
        ("write_file", {"path": "link", "content": "pwned\n"}),
    ]:
        with pytest.raises(ToolError) as refused:
            tools.call(tool, args)
        assert refused.value.code == "PATH_REJECTED", (tool, args, refused.value)
    (repo / "link").unlink()
    assert tree(repo) == before
    assert (tmp_path / "outside.txt").read_text() == "outside\n"


def test_read_only_host_offers_and_performs_no_writes(repo):
    tools = FileTools(WASM, repo, read_only=True)
    names = {t["name"] for t in tools.describe()}
    assert "read_file" in names and "write_file" not in names
    before = tree(repo)
    with pytest.raises(ToolError) as refused:
        tools.call("write_file", {"path": "new.txt", "content": "x\n"})
    assert refused.value.code in {"POLICY_DENIED", "INVALID_INPUT"}
    assert tree(repo) == before


def test_executable_bit_survives_a_replace(repo):
    script = repo / "run.sh"
    script.write_text("#!/bin/sh\necho one\n")
    script.chmod(0o755)
    tools = FileTools(WASM, repo)
    sha = tools.call("read_file", {"path": "run.sh"})["sha256"]
    tools.call("write_file", {"path": "run.sh", "content": "#!/bin/sh\necho two\n",
                              "expected_sha256": sha})
    assert script.read_text().endswith("two\n")
    assert script.stat().st_mode & 0o777 == 0o755


def test_approval_callback_decides_on_marked_changes(repo):
    asked = []
    policy = {"approval": {"delete": True}}
    tools = FileTools(WASM, repo, policy=policy, approve=lambda r: asked.append(r) or False)
    sha = tools.call("read_file", {"path": "src/lib.rs"})["sha256"]
    with pytest.raises(ToolError) as refused:
        tools.call("delete_file", {"path": "src/lib.rs", "expected_sha256": sha})
    assert refused.value.code == "APPROVAL_REQUIRED"
    assert (repo / "src/lib.rs").exists()
    assert asked[0]["reasons"] == ["deletes src/lib.rs"]
    assert asked[0]["files"][0]["action"] == "delete"

    yes = FileTools(WASM, repo, policy=policy, approve=lambda r: True)
    yes.call("delete_file", {"path": "src/lib.rs", "expected_sha256": sha})
    assert not (repo / "src/lib.rs").exists()


def test_audit_events_reach_a_listener_and_cost_nothing_without_one(repo, monkeypatch):
    sent = []
    real_emit = FileTools._emit
    monkeypatch.setattr(FileTools, "_emit", lambda self, store, event: sent.append(event) or real_emit(self, store, event))

    quiet = FileTools(WASM, repo)
    assert quiet.call("read_file", {"path": "src/lib.rs"})["path"] == "src/lib.rs"
    assert sent == [], "the component sent audit events to a host without a listener"

    heard = []
    loud = FileTools(WASM, repo, on_audit=heard.append)
    loud.call("read_file", {"path": "src/lib.rs"})
    assert len(sent) == 1 and [e["tool"] for e in heard] == ["read_file"]
