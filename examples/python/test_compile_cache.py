"""The Python host keeps the compiled component in a private cache, loads it from there on
the next start instead of compiling again, and never loads an artifact it cannot trust.

Each test forgets the process's compiled components first and counts the compilations the
host asks wasmtime for, so what is shown is where the component came from, not a time.
"""

import os
import shutil
import stat
from pathlib import Path

import pytest

import file_tools
from file_tools import FileTools

ROOT = Path(__file__).resolve().parents[2]
WASM = os.environ.get("FILE_TOOLS_WASM", str(ROOT / "target" / "file-tools.wasm"))


class CountingComponent:
    """Stands in for `wasmtime.component.Component`, counting compilations."""

    real = file_tools.wc.Component
    compiled = 0

    def __new__(cls, engine, wasm):
        CountingComponent.compiled += 1
        return cls.real(engine, wasm)

    deserialize_file = real.deserialize_file


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    directory = tmp_path / "cache"
    monkeypatch.setenv("FILE_TOOLS_CACHE_DIR", str(directory))
    monkeypatch.setattr(file_tools, "_COMPILED", {})
    monkeypatch.setattr(file_tools.wc, "Component", CountingComponent)
    CountingComponent.compiled = 0
    return directory


@pytest.fixture()
def repo(tmp_path):
    dest = tmp_path / "repo"
    shutil.copytree(ROOT / "examples" / "demo-repo", dest)
    return dest


def reopen(repo):
    """A new start: the process forgets its compiled components, the cache stays."""
    file_tools._COMPILED.clear()
    tools = FileTools(WASM, repo)
    assert tools.call("read_file", {"path": "src/lib.rs"})["content"] == (repo / "src/lib.rs").read_text()
    return tools


def artifacts(directory):
    return sorted(p for p in directory.iterdir() if p.suffix == ".cwasm")


def test_the_second_start_loads_the_compiled_artifact(cache, repo):
    reopen(repo)
    assert CountingComponent.compiled == 1
    [artifact] = artifacts(cache)
    assert stat.S_IMODE(artifact.stat().st_mode) == 0o600
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    assert not [p for p in cache.iterdir() if ".tmp" in p.name]

    reopen(repo)
    reopen(repo)
    assert CountingComponent.compiled == 1, "a warm start compiled the component again"


def test_another_component_gets_its_own_artifact(cache, repo, tmp_path):
    reopen(repo)
    # The same component with a custom section appended: other bytes, another artifact.
    other = tmp_path / "other.wasm"
    other.write_bytes(Path(WASM).read_bytes() + b"\x00\x05\x04note")
    file_tools._COMPILED.clear()
    FileTools(str(other), repo).call("list_dir", {"path": "."})
    assert CountingComponent.compiled == 2
    assert len(artifacts(cache)) == 2


def test_a_damaged_artifact_is_compiled_again_and_replaced(cache, repo):
    reopen(repo)
    [artifact] = artifacts(cache)
    good = artifact.read_bytes()
    artifact.write_bytes(good[: len(good) // 3])
    reopen(repo)
    assert CountingComponent.compiled == 2
    assert artifact.read_bytes() == good
    reopen(repo)
    assert CountingComponent.compiled == 2


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
def test_an_artifact_others_could_write_is_never_loaded(cache, repo):
    reopen(repo)
    [artifact] = artifacts(cache)
    artifact.chmod(0o620)
    reopen(repo)
    assert CountingComponent.compiled == 2, "a group-writable artifact was loaded"
    # Positive control: the rewritten artifact is private again, and loaded.
    assert stat.S_IMODE(artifact.stat().st_mode) == 0o600
    reopen(repo)
    assert CountingComponent.compiled == 2

    cache.chmod(0o770)
    reopen(repo)
    assert CountingComponent.compiled == 3, "an artifact in a group-writable directory was loaded"


@pytest.mark.skipif(os.name != "posix", reason="symbolic links")
def test_a_linked_artifact_is_never_loaded(cache, repo, tmp_path):
    reopen(repo)
    [artifact] = artifacts(cache)
    elsewhere = tmp_path / "planted.cwasm"
    artifact.rename(elsewhere)
    artifact.symlink_to(elsewhere)
    reopen(repo)
    assert CountingComponent.compiled == 2
    assert not artifact.is_symlink(), "the link was not replaced by a private file"


def test_off_keeps_no_cache(cache, repo, monkeypatch):
    monkeypatch.setenv("FILE_TOOLS_CACHE_DIR", "off")
    reopen(repo)
    reopen(repo)
    assert CountingComponent.compiled == 2
    assert not cache.exists()


def test_the_cache_directory_follows_xdg_and_ignores_a_relative_one(monkeypatch, tmp_path):
    monkeypatch.delenv("FILE_TOOLS_CACHE_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert file_tools.cache_dir() == str(tmp_path / "xdg" / "file-tools")
    for ignored in ["relative/cache", ""]:
        monkeypatch.setenv("XDG_CACHE_HOME", ignored)
        assert file_tools.cache_dir() == str(tmp_path / "home" / ".cache" / "file-tools")


def test_the_artifact_is_named_by_the_installed_wasmtime_version():
    import importlib.metadata

    assert file_tools._wasmtime_version() == importlib.metadata.version("wasmtime")
    assert "-wasmtime" + importlib.metadata.version("wasmtime") + "-" in file_tools._artifact_name(b"\0" * 32)
