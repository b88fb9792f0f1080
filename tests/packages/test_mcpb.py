"""The MCP bundle (.mcpb) that scripts/mcpb.sh builds, checked with the official bundle tool
(the npm package @anthropic-ai/mcpb, installed by scripts/setup.sh into target/mcpb-cli)
and run as a desktop client would run it.

The bundle is built once from FILE_TOOLS_BIN (default target/release/file-tools) into a
temporary directory. The server is started from the unpacked bundle with the command, the
arguments and the environment that the bundle tool's own `getMcpConfigForManifest` makes of
the manifest's `mcp_config` (`${__dirname}` and the user's choices substituted), and is
then driven by the official Python MCP SDK.
"""

import asyncio
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import zipfile
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("FILE_TOOLS_BIN", ROOT / "target" / "release" / "file-tools"))
MCPB_PKG = ROOT / "target" / "mcpb-cli" / "node_modules" / "@anthropic-ai" / "mcpb"
MCPB = ROOT / "target" / "mcpb-cli" / "node_modules" / ".bin" / "mcpb"
MUTATING = {"write_file", "edit_file", "apply_patch", "append_file", "delete_file", "move_file", "revert"}
SECRET = "outside the repository: never to be read"


def workspace_version():
    text = (ROOT / "Cargo.toml").read_text()
    m = re.search(r'^\[workspace\.package\]\n(?:.*\n)*?version = "([^"]+)"', text, re.M)
    assert m, "no version in [workspace.package]"
    return m.group(1)


def sh(cmd, **kw):
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=300, **kw)
    assert proc.returncode == 0, f"{cmd} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """scripts/mcpb.sh run on the binary: (the bundle, its output directory)."""
    out = tmp_path_factory.mktemp("mcpb")
    bundle = Path(sh(["bash", ROOT / "scripts" / "mcpb.sh", BIN],
                     env={**os.environ, "FILE_TOOLS_MCPB_OUT": str(out)}).strip())
    assert bundle.parent == out and bundle.is_file(), bundle
    return bundle, out


@pytest.fixture(scope="module")
def unpacked(built, tmp_path_factory):
    """The bundle unpacked by the bundle tool, as a client installs it."""
    dest = tmp_path_factory.mktemp("installed")
    sh([MCPB, "unpack", built[0], dest])
    return dest


@pytest.fixture()
def repo(tmp_path):
    dest = tmp_path / "repo"
    dest.mkdir()
    (dest / "README.md").write_text("# a repository\n\nserved from the bundle\n")
    (tmp_path / "outside.txt").write_text(SECRET + "\n")
    return dest


def mcp_config(installed, user_config):
    """What a client runs for the installed bundle: the bundle tool's own substitution of
    the manifest's mcp_config."""
    script = """
        import { getMcpConfigForManifest } from "%s";
        import { readFileSync } from "node:fs";
        const [dir, config] = process.argv.slice(1);
        const manifest = JSON.parse(readFileSync(dir + "/manifest.json", "utf8"));
        const out = await getMcpConfigForManifest({
          manifest, extensionPath: dir, pathSeparator: "/", userConfig: JSON.parse(config),
          systemDirs: { HOME: process.env.HOME ?? "/" },
        });
        process.stdout.write(JSON.stringify(out ?? null));
    """ % (MCPB_PKG / "dist" / "index.js").as_uri()
    return json.loads(sh(["node", "--input-type=module", "-e", script, installed,
                          json.dumps(user_config)]))


def serve(installed, user_config, body, tmp_path):
    """Starts the installed bundle's server as its manifest says, runs `body(session)`."""
    config = mcp_config(installed, user_config)
    assert config is not None, "the bundle tool made no mcp_config (required choice missing?)"
    assert "${" not in json.dumps(config), config
    env = {**config.get("env", {}),
           "FILE_TOOLS_CACHE_DIR": str(ROOT / "target" / "file-tools-cache"),
           "XDG_STATE_HOME": str(tmp_path / "state")}
    params = StdioServerParameters(command=config["command"], args=config["args"], env=env)

    async def go():
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                return await body(session, init)

    return asyncio.run(go())


def manifest_of(installed):
    return json.loads((installed / "manifest.json").read_text())


def test_the_bundle_validates_and_holds_the_server(built, unpacked):
    bundle, out = built
    # The official validator accepts the manifest as packed and as installed.
    assert "passes" in sh([MCPB, "validate", out / "stage"])
    assert "passes" in sh([MCPB, "validate", unpacked / "manifest.json"])
    info = sh([MCPB, "info", bundle])
    assert "file-tools" in info, info

    with zipfile.ZipFile(bundle) as z:
        names = sorted(z.namelist())
        mode = z.getinfo("server/file-tools").external_attr >> 16
    assert names == ["icon.png", "manifest.json", "server/file-tools",
                     "server/read-only-false.toml", "server/read-only-true.toml"], names
    assert mode & stat.S_IXUSR, oct(mode)

    manifest = manifest_of(unpacked)
    assert manifest["version"] == workspace_version()
    assert manifest["server"]["type"] == "binary"
    entry = unpacked / manifest["server"]["entry_point"]
    assert entry.read_bytes() == BIN.read_bytes()
    assert os.access(entry, os.X_OK), "the unpacked server is not executable"
    assert (unpacked / manifest["icon"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert manifest["compatibility"]["platforms"] == [
        {"Linux": "linux", "Darwin": "darwin"}.get(os.uname().sysname, "win32")]
    assert manifest["user_config"]["repository"]["type"] == "directory"
    assert manifest["user_config"]["repository"]["required"] is True


def test_the_installed_server_answers_an_mcp_client(unpacked, repo, tmp_path):
    manifest = manifest_of(unpacked)

    async def body(s, init):
        tools = (await s.list_tools()).tools
        read = await s.call_tool("read_file", {"path": "README.md"})
        outside = await s.call_tool("read_file", {"path": "../outside.txt"})
        return init, tools, read, outside

    init, tools, read, outside = serve(unpacked, {"repository": str(repo)}, body, tmp_path)
    assert init.server_info.name, init
    # The manifest lists what the server offers (writable, the default choice).
    assert [t.name for t in tools] == [t["name"] for t in manifest["tools"]]
    assert MUTATING & {t.name for t in tools}
    assert not read.is_error, read
    assert read.structured_content["content"] == (repo / "README.md").read_text()
    # The repository the user picked is the boundary.
    assert outside.is_error
    assert SECRET not in json.dumps(outside.model_dump(mode="json"))


def test_the_read_only_choice_offers_no_change(unpacked, repo, tmp_path):
    async def body(s, init):
        tools = {t.name for t in (await s.list_tools()).tools}
        read = await s.call_tool("read_file", {"path": "README.md"})
        return tools, read

    before = (repo / "README.md").read_text()
    tools, read = serve(unpacked, {"repository": str(repo), "read_only": True}, body, tmp_path)
    assert "read_file" in tools
    assert not tools & MUTATING, tools
    assert not read.is_error, read
    assert (repo / "README.md").read_text() == before


def test_without_a_repository_the_client_runs_nothing(unpacked):
    # The repository is a required choice: without it the bundle tool makes no command.
    assert mcp_config(unpacked, {}) is None


def test_the_registry_entry_names_this_bundle(built):
    bundle, out = built
    server = json.loads((out / "server.json").read_text())
    base = json.loads((ROOT / "server.json").read_text())
    assert server["packages"][:-1] == base["packages"]
    entry = server["packages"][-1]
    assert entry["registryType"] == "mcpb"
    assert entry["fileSha256"] == hashlib.sha256(bundle.read_bytes()).hexdigest()
    assert entry["version"] == server["version"] == workspace_version()
    assert entry["identifier"].endswith(f"/releases/download/v{server['version']}/{bundle.name}")
    owner, name = re.fullmatch(r"io\.github\.([^/]+)/(.+)", server["name"]).groups()
    assert entry["identifier"].startswith(f"https://github.com/{owner}/{name}/")
    assert entry["transport"] == {"type": "stdio"}


@pytest.fixture(scope="module", autouse=True)
def tools_present():
    missing = [p for p in (BIN, MCPB) if not Path(p).exists()]
    assert not missing, f"missing {missing}: run scripts/setup.sh and build first"
    assert shutil.which("node"), "node is needed to run the bundle tool"
