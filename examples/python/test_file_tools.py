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


def test_file_bytes_never_cross_into_python(repo, monkeypatch):
    """The runtime's component API turns a `list<u8>` into Python one byte at a time (about
    1 ms per KB), so this host must answer `none` to every host-fs service that would carry a
    file's bytes, and leave reading and hashing to the component."""
    import wasmtime.component as wc
    from wasmtime.component import _types

    carried = []
    real = _types.ListType.convert_from_c

    def counting(self, c):
        value = real(self, c)
        if isinstance(value, bytes):
            carried.append(len(value))
        return value

    monkeypatch.setattr(_types.ListType, "convert_from_c", counting)
    big = "".join(f"line {i} of a large file\n" for i in range(5000)).encode()
    (repo / "big.txt").write_bytes(big)
    tools = FileTools(WASM, repo)
    page = tools.call("read_file", {"path": "big.txt", "max_bytes": 200000})
    assert page["sha256"] == hashlib.sha256(big).hexdigest()
    assert tools.call("file_info", {"path": "big.txt"})["size"] == len(big)
    tools.call("write_file", {"path": "big.txt", "content": big.decode() + "one more\n",
                              "expected_sha256": page["sha256"]})
    assert (repo / "big.txt").read_bytes() == big + b"one more\n"
    assert sum(carried) < 4096, f"{sum(carried)} bytes crossed into Python: {carried[:8]}"

    # Positive control: a host that does hash receives the file's bytes, and the count sees
    # them (so the count above is not empty for want of looking).
    real_add = wc.LinkerInstance.add_func

    def hashing(self, name, func):
        if name == "sha256":
            func = lambda _store, data: hashlib.sha256(bytes(data)).digest()  # noqa: E731
        return real_add(self, name, func)

    monkeypatch.setattr(wc.LinkerInstance, "add_func", hashing)
    FileTools(WASM, repo).call("read_file", {"path": "big.txt", "max_bytes": 200000})
    assert sum(carried) > len(big), carried[:8]


def _modes_copied(tools, src, dst):
    return tools._copy_mode(None, src, dst)


def test_copy_mode_reaches_nothing_through_a_link(repo, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.chmod(0o600)
    (tmp_path / "outdir").mkdir()
    (tmp_path / "outdir" / "f").write_text("x")
    (tmp_path / "outdir" / "f").chmod(0o600)
    (repo / "run.sh").write_text("#!/bin/sh\n")
    (repo / "run.sh").chmod(0o755)
    (repo / "plain").write_text("y")
    (repo / "plain").chmod(0o644)
    (repo / "link").symlink_to(outside)
    (repo / "dirlink").symlink_to(tmp_path / "outdir")
    os.mkfifo(repo / "fifo")
    os.link(tmp_path / "outdir" / "f", repo / "hardlink")
    tools = FileTools(WASM, repo)
    for src, dst in [("run.sh", "link"), ("run.sh", "dirlink/f"), ("link", "plain"),
                     ("run.sh", "fifo"), ("run.sh", "../outside.txt"), ("run.sh", "./plain"),
                     ("run.sh", ""), ("run.sh", "hardlink")]:
        assert _modes_copied(tools, src, dst) is False, (src, dst)
    assert outside.stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "outdir" / "f").stat().st_mode & 0o777 == 0o600
    assert (repo / "plain").stat().st_mode & 0o777 == 0o644
    assert _modes_copied(FileTools(WASM, repo, read_only=True), "run.sh", "plain") is False
    # Positive control: between two plain files the bits are copied.
    assert _modes_copied(tools, "run.sh", "plain") is True
    assert (repo / "plain").stat().st_mode & 0o777 == 0o755
    # The repository renamed away and another directory put in its place: the host goes on
    # in the repository it opened, and the new one is not touched.
    (repo / "plain").chmod(0o644)
    away = tmp_path / "repo.away"
    repo.rename(away)
    repo.mkdir()
    (repo / "run.sh").write_text("#!/bin/sh\n")
    (repo / "run.sh").chmod(0o700)
    (repo / "plain").write_text("y")
    (repo / "plain").chmod(0o600)
    assert _modes_copied(tools, "run.sh", "plain") is True
    assert (away / "plain").stat().st_mode & 0o777 == 0o755
    assert (repo / "plain").stat().st_mode & 0o777 == 0o600


def test_copy_mode_under_a_name_flipping_to_a_link_changes_nothing_outside(repo, tmp_path):
    import threading

    outside = tmp_path / "outside.txt"
    outside.chmod(0o600)
    (repo / "run.sh").write_text("#!/bin/sh\n")
    (repo / "run.sh").chmod(0o755)
    target, spare, link = repo / "target", repo / "target.file", repo / "target.link"
    link.symlink_to(outside)
    done = threading.Event()

    def flip():
        while not done.is_set():
            spare.write_text("z")
            spare.chmod(0o644)
            os.replace(spare, target)
            os.symlink(outside, link) if not link.is_symlink() else None
            os.replace(link, target)

    flipper = threading.Thread(target=flip)
    tools = FileTools(WASM, repo)
    copied = 0
    flipper.start()
    try:
        for _ in range(3000):
            copied += _modes_copied(tools, "run.sh", "target")
            assert outside.stat().st_mode & 0o777 == 0o600
    finally:
        done.set()
        flipper.join()
    assert copied > 0, "no round found a plain file to copy the bits onto"


def test_close_releases_the_held_directory_and_later_calls_raise(repo):
    count = lambda: len(os.listdir("/proc/self/fd"))  # noqa: E731
    before = count()
    with FileTools(WASM, repo) as tools:
        # Positive control: the open instance holds the repository and answers.
        assert count() > before
        assert tools.call("file_info", {"path": "src/lib.rs"})["path"] == "src/lib.rs"
    assert count() == before
    with pytest.raises(RuntimeError, match="closed"):
        tools.call("file_info", {"path": "src/lib.rs"})
