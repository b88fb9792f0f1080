"""server.json, the entry of file-tools in the MCP registry, kept in step with the crates.

The registry's schema (server.schema.json of the 2025-12-11 revision, named by `$schema`) is
not stored here; these tests check what it requires of the fields this file uses, and what
the registry checks when it is published: the server's and each package's version are the
crate's, the cargo package is the crate of the `file-tools` binary, and that crate's README
carries the server's name (the registry looks for `mcp-name: NAME` in a crate's README as
its owner's mark; the crate's rendered README drops HTML comments, so the mark is visible).
"""

import json
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
NAME = re.compile(r"^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$")


def server():
    return json.loads((ROOT / "server.json").read_text())


def workspace_version():
    return tomllib.loads((ROOT / "Cargo.toml").read_text())["workspace"]["package"]["version"]


def test_server_json_has_what_the_schema_requires():
    s = server()
    assert s["$schema"] == SCHEMA
    # Reverse-DNS name with one slash, 3 to 200 characters; io.github.OWNER is the
    # namespace the registry grants to the owner of github.com/OWNER.
    assert NAME.match(s["name"]) and 3 <= len(s["name"]) <= 200, s["name"]
    assert s["name"].startswith("io.github.")
    assert 1 <= len(s["description"]) <= 100, len(s["description"])
    assert 1 <= len(s.get("title", "x")) <= 100
    assert s["version"] and len(s["version"]) <= 255
    assert s["packages"], "no package to install the server from"
    for p in s["packages"]:
        for field in ("registryType", "identifier", "transport"):
            assert p.get(field), (field, p)
        assert p["transport"]["type"] in ("stdio", "streamable-http", "sse"), p
        # One exact version: no range, no "latest".
        assert re.fullmatch(r"\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?", p["version"]), p
        for arg in p.get("packageArguments", []):
            assert arg["type"] in ("named", "positional"), arg
            if arg["type"] == "named":
                assert arg.get("name", "").startswith("-"), arg
            else:
                assert "value" in arg or "valueHint" in arg, arg


def test_versions_follow_the_crate():
    s = server()
    version = workspace_version()
    assert s["version"] == version, "server.json's version is not the workspace's"
    for p in s["packages"]:
        assert p["version"] == version, p


def test_the_cargo_package_is_the_binary_crate_and_carries_the_name():
    s = server()
    (cargo,) = [p for p in s["packages"] if p["registryType"] == "cargo"]
    cli = tomllib.loads((ROOT / "cli" / "Cargo.toml").read_text())
    assert cargo["identifier"] == cli["package"]["name"]
    assert [b["name"] for b in cli["bin"]] == ["file-tools"]
    # The binary's MCP server over stdio: `file-tools --repo DIR mcp`.
    args = cargo["packageArguments"]
    assert [a.get("name") or a.get("value") for a in args] == ["--repo", "mcp"]
    assert args[0]["isRequired"] is True
    readme = (ROOT / "cli" / "README.md").read_text()
    assert f"mcp-name: {s['name']}" in re.sub(r"<!--.*?-->", "", readme, flags=re.S), \
        "cli/README.md must show the registry name as visible text"
