"""Wassette, the MCP runner for Wasm components, as a host of file-tools.

Runs the real Wassette (`wassette run`, MCP over stdio) with the official Python MCP SDK as
its client: the Wassette variant of the component is loaded, storage on a temporary
repository is granted, and the tools are listed and called, refusals each beside a
positive control. Everything Wassette keeps (components, policies, secrets) lives in the
test's temporary directory.

Environment: FILE_TOOLS_WASSETTE_WASM names the Wassette variant (scripts/test.sh writes
it with `file-tools component --wassette`); WASSETTE_RUN the command that runs Wassette
(default: the wrapper scripts/setup-wassette.sh writes, target/venv/bin/wassette-run).
"""

import asyncio
import base64
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[2]
WASSETTE = os.environ.get("WASSETTE_RUN", str(ROOT / "target" / "venv" / "bin" / "wassette-run"))
UNAVAILABLE = ROOT / "target" / "wassette-unavailable.txt"
COMPONENT_ID = "file-tools"
# Bounds: loading compiles the component (seconds to a minute on a busy machine).
CLI_TIMEOUT = 300
SESSION_TIMEOUT = 300
# How long a session waits for Wassette to list the component after it starts.
LOAD_WAIT = 120
SECRET = "wassette-secret-7f3a9c"
OUTSIDE = "outside-sentinel-91c2e4"
LIB_RS = 'pub fn greet() -> &\'static str {\n    "hello wassette"\n}\n'


def wassette_command():
    """The Wassette command, or the reason set-up gave for its absence: a failure, or a
    skip on machines the set-up does not support (not Debian-like)."""
    if UNAVAILABLE.exists():
        reason = UNAVAILABLE.read_text().strip()
        if reason.startswith("skip:"):
            pytest.skip("Wassette: " + reason[len("skip:"):].strip())
        pytest.fail("Wassette is not set up: " + reason.removeprefix("fail:").strip())
    if not os.access(WASSETTE, os.X_OK):
        pytest.fail(f"no Wassette at {WASSETTE}: run scripts/setup-wassette.sh")
    return WASSETTE


def wassette_wasm():
    wasm = os.environ.get("FILE_TOOLS_WASSETTE_WASM")
    if not wasm:
        pytest.fail("FILE_TOOLS_WASSETTE_WASM is not set (scripts/test.sh writes it with "
                    "`file-tools component --wassette`)")
    return Path(wasm)


class Wassette:
    """One isolated Wassette: its own HOME, XDG data and config dirs, component dir."""

    def __init__(self, tmp: Path, components: Path | None = None):
        self.command = wassette_command()
        self.tmp = tmp
        self.components = tmp / "components"
        if components is not None:
            shutil.copytree(components, self.components)
        self.stderr = tmp / "wassette.stderr"
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(tmp / "home"),
            "XDG_DATA_HOME": str(tmp / "data"),
            "XDG_CONFIG_HOME": str(tmp / "config"),
        }

    def cli(self, *args):
        done = subprocess.run(
            [self.command, *args, "--component-dir", str(self.components)],
            env=self.env, capture_output=True, text=True, timeout=CLI_TIMEOUT,
        )
        assert done.returncode == 0, f"wassette {' '.join(args)}: {done.stderr[-2000:]}"
        return json.loads(done.stdout)

    def load(self, wasm: Path):
        # Wassette names a component after its file's stem.
        named = self.tmp / f"{COMPONENT_ID}.wasm"
        shutil.copyfile(wasm, named)
        return self.cli("component", "load", named.as_uri())

    def grant_storage(self, directory: Path):
        granted = self.cli("permission", "grant", "storage", COMPONENT_ID,
                           f"fs://{directory}", "--access", "read,write")
        assert granted["status"].startswith("permission granted"), granted

    def session(self, body, env=()):
        """Runs `body(tools)` against `wassette run`, bounded in time."""
        async def main():
            args = ["run", "--component-dir", str(self.components)]
            for key, value in env:
                args += ["--env", f"{key}={value}"]
            params = StdioServerParameters(command=self.command, args=args, env=self.env)
            with open(self.stderr, "a") as errlog:
                async with stdio_client(params, errlog=errlog) as (read, write):
                    async with ClientSession(read, write) as session:
                        await session.initialize()
                        listed = await components_listed(session)
                        tools = Tools(session, listed)
                        await tools.granted()
                        return await body(tools)

        try:
            return asyncio.run(asyncio.wait_for(main(), SESSION_TIMEOUT))
        except BaseException:
            print("wassette stderr (tail):", self.stderr.read_text()[-3000:], sep="\n")
            raise


async def components_listed(session):
    """The tool list once Wassette lists the component's tools: it loads components from
    its directory in the background after it starts, so an early list may lack them."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + LOAD_WAIT
    while True:
        listed = (await session.list_tools()).tools
        if any(t.name.endswith("_read-file") for t in listed) or loop.time() > deadline:
            return listed
        await asyncio.sleep(0.25)


def fill_absent(schema, value):
    """Wassette makes every field of a WIT record required: an absent option is sent as
    null and an absent list as [], so that calls can name only what they mean."""
    if isinstance(value, dict) and schema.get("type") == "object":
        out = {}
        for name, sub in schema.get("properties", {}).items():
            if name in value:
                out[name] = fill_absent(sub, value[name])
            elif any(alt.get("type") == "null" for alt in sub.get("anyOf", [])):
                out[name] = None
            elif sub.get("type") == "array":
                out[name] = []
        return out
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [fill_absent(schema["items"], v) for v in value]
    for alt in schema.get("anyOf", []):
        if value is not None and alt.get("type") != "null":
            return fill_absent(alt, value)
    return value


class Tools:
    """The component's tools as Wassette lists them, called by WIT function name."""

    def __init__(self, session, listed):
        self.session = session
        self.listed = {t.name: t for t in listed}
        reads = [n for n in self.listed if n.endswith("_read-file")]
        assert len(reads) == 1, sorted(self.listed)
        # Wassette's names: the interface's export name, normalised, then `_` and the function.
        self.prefix = reads[0].removesuffix("read-file")
        self.texts = []  # every text the component returned, to look for leaks

    async def granted(self):
        """Waits until the component's grants are in force: Wassette may list a component
        before it has applied its policy, and a call then sees no preopen at all."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + LOAD_WAIT
        while True:
            answer = await self.call("list-dir", {})
            if "preopens: none" not in json.dumps(answer) or loop.time() > deadline:
                return
            await asyncio.sleep(0.25)

    def functions(self):
        return {n.removeprefix(self.prefix): t for n, t in self.listed.items()
                if n.startswith(self.prefix)}

    async def call(self, function, args=None, **params):
        tool = self.listed[self.prefix + function]
        if args is not None:
            params["args"] = args
        params = fill_absent(tool.input_schema, params)
        result = await self.session.call_tool(tool.name, params)
        text = "".join(getattr(c, "text", "") for c in result.content)
        self.texts.append(text)
        assert not result.is_error, f"{function}: {text}"
        # A WIT `result<T, E>` comes back as {"ok": T} or {"err": E}.
        return json.loads(text)


def ok(value):
    assert "ok" in value, value
    return value["ok"]


def err_code(value):
    assert "err" in value, value
    return value["err"]["code"]


def sha256(path: Path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def make_repo(tmp: Path):
    repo = tmp / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "lib.rs").write_text(LIB_RS)
    (repo / "README.md").write_text("# demo\n\nSays hello.\n")
    (repo / ".editorconfig").write_text("# editorconfig-marker\nroot = true\n")
    (repo / ".env").write_text(f"API_KEY={SECRET}\n")
    (tmp / "outside.txt").write_text(OUTSIDE + "\n")
    return repo


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    """A component dir with the Wassette variant loaded (and compiled) once, with what
    `component load` answered; each test works on its own copy of the dir."""
    tmp = tmp_path_factory.mktemp("wassette-load")
    wassette = Wassette(tmp)
    answer = wassette.load(wassette_wasm())
    assert answer["id"] == COMPONENT_ID, answer
    return wassette.components, answer


def wit_docs():
    """The `///` lines of wit/tools.wit, without the slashes."""
    lines = (ROOT / "wit" / "tools.wit").read_text().splitlines()
    return {line.strip().removeprefix("///").strip() for line in lines if "///" in line}


def test_wassette_lists_described_tools_and_runs_them_inside_the_grant(tmp_path, loaded):
    components, answer = loaded
    assert len(answer["tools"]) == 18, answer
    repo = make_repo(tmp_path)
    png = (ROOT / "tests" / "fixtures" / "media" / "pixels.png").read_bytes()
    (repo / "logo.png").write_bytes(png)
    wassette = Wassette(tmp_path, components)
    wassette.grant_storage(repo)
    docs = wit_docs()

    async def body(t):
        functions = t.functions()
        assert {"list-dir", "read-file", "search-text", "edit-file", "apply-patch",
                "diff-workspace", "revert", "describe", "call"} <= set(functions)
        for name, tool in functions.items():
            description = tool.description or ""
            assert not description.startswith("Auto-generated"), (name, description)
            first = description.splitlines()[0] if description else ""
            assert first in docs, f"{name}: {description!r} is not its WIT doc"
            assert "Errors:" in description, name
        assert "expected-sha256" in functions["read-file"].description

        listing = ok(await t.call("list-dir", {"max-depth": 2}))
        assert "src/lib.rs" in {e["path"] for e in listing["entries"]}

        read = ok(await t.call("read-file", {"path": "src/lib.rs"}))
        assert read["content"] == LIB_RS
        assert read["sha256"] == sha256(repo / "src" / "lib.rs")

        found = ok(await t.call("search-text", {"query": "hello"}))
        assert found["total-matches"] == 2
        assert {m["path"] for m in found["matches"]} == {"src/lib.rs", "README.md"}

        edit = {"path": "src/lib.rs", "edits": [{"old-text": "hello", "new-text": "goodbye"}],
                "expected-sha256": read["sha256"]}
        changed = ok(await t.call("edit-file", edit))
        assert (repo / "src" / "lib.rs").read_text() == LIB_RS.replace("hello", "goodbye")
        assert changed["changes"][0]["sha256-after"] == sha256(repo / "src" / "lib.rs")
        # Refusal: the same edit again, with the hash that is now stale.
        before = (repo / "src" / "lib.rs").read_bytes()
        assert err_code(await t.call("edit-file", edit)) == "write-conflict"
        assert (repo / "src" / "lib.rs").read_bytes() == before

        # A secret is refused, a hidden file beside it is read; a search never shows it.
        assert "editorconfig-marker" in ok(await t.call("read-file", {"path": ".editorconfig"}))["content"]
        assert err_code(await t.call("read-file", {"path": ".env"})) == "policy-denied"
        hidden = {"include-hidden": True}
        assert ok(await t.call("search-text", {"query": "editorconfig-marker", **hidden}))["total-matches"] == 1
        assert ok(await t.call("search-text", {"query": SECRET, **hidden}))["total-matches"] == 0
        assert ok(await t.call("search-text", {"query": "API_KEY", **hidden}))["total-matches"] == 0

        # `..` inside the root is fine; climbing out of it is refused, to read or to write.
        assert "Says hello" in ok(await t.call("read-file", {"path": "src/../README.md"}))["content"]
        assert err_code(await t.call("read-file", {"path": "../outside.txt"})) == "path-rejected"
        escape = {"path": "../outside.txt", "content": "overwritten\n", "expected-sha256": None}
        assert err_code(await t.call("write-file", escape)) == "path-rejected"
        # Wassette preopens the grant at its host path; absolute paths are still refused.
        assert err_code(await t.call("read-file", {"path": str(repo / "README.md")})) == "path-rejected"
        assert err_code(await t.call("read-file", {"path": str(tmp_path / "outside.txt")})) == "path-rejected"

        # The generic dispatcher takes snake_case names and JSON arguments.
        via_call = json.loads(ok(await t.call("call", tool="read_file",
                                              **{"args-json": json.dumps({"path": "README.md"})})))
        assert "Says hello" in via_call["content"]

        # Every other tool, once each, through Wassette.
        assert "src/lib.rs" in ok(await t.call("find-files", {"patterns": ["*.rs"]}))["paths"]
        many = ok(await t.call("read-many", {"paths": ["README.md", ".env"]}))["files"]
        assert "Says hello" in many[0]["outcome"]["ok"]["content"]
        assert many[1]["outcome"]["err"]["code"] == "policy-denied"
        assert ok(await t.call("file-info", path="README.md"))["sha256"] == sha256(repo / "README.md")
        pic = ok(await t.call("read-media", {"path": "logo.png"}))
        assert pic["mime-type"] == "image/png" and base64.b64decode(pic["data-base64"]) == png
        assert len(json.loads(ok(await t.call("describe")))) >= 13
        notes = repo / "notes" / "new.txt"
        ok(await t.call("write-file", {"path": "notes/new.txt", "content": "one\n", "mode": "create"}))
        ok(await t.call("append-file", {"path": "notes/new.txt", "content": "two\n"}))
        assert notes.read_text() == "one\ntwo\n"
        patch = "*** Begin Patch\n*** Update File: notes/new.txt\n@@\n one\n-two\n+three\n*** End Patch\n"
        ok(await t.call("apply-patch", {"patch": patch}))
        assert notes.read_text() == "one\nthree\n"
        # Moves are off unless the policy allows them: refused, and nothing moved.
        move = {"from": "notes/new.txt", "to": "notes/moved.txt"}
        assert err_code(await t.call("move-file", move)) == "policy-denied"
        assert notes.exists() and not (repo / "notes" / "moved.txt").exists()
        ok(await t.call("delete-file", {"path": "notes/new.txt", "expected-sha256": sha256(notes)}))
        assert not notes.exists()
        return t.texts

    texts = wassette.session(body)
    assert (tmp_path / "outside.txt").read_text() == OUTSIDE + "\n"
    assert (repo / ".env").read_text() == f"API_KEY={SECRET}\n"
    for text in texts:
        assert SECRET not in text and OUTSIDE not in text, text


# The README's policy file, with this test's paths.
POLICY = """\
version: "1.0"
description: "file-tools on one repository, its session state kept beside it"
permissions:
  storage:
    allow:
      - uri: "fs://{repo}"
        access: ["read", "write"]
      - uri: "fs://{state}"
        access: ["read", "write"]
  environment:
    allow:
      - key: FILE_TOOLS_ROOT
      - key: FILE_TOOLS_STATE
"""


def test_wassette_diff_workspace_and_revert_across_calls_and_runs_with_a_state_dir(tmp_path, loaded):
    repo = make_repo(tmp_path)
    state = tmp_path / "state"
    state.mkdir()
    wassette = Wassette(tmp_path, loaded[0])
    (wassette.components / f"{COMPONENT_ID}.policy.yaml").write_text(
        POLICY.format(repo=repo, state=state))
    env = [("FILE_TOOLS_ROOT", str(repo)), ("FILE_TOOLS_STATE", str(state))]
    lib = repo / "src" / "lib.rs"

    async def change(t):
        # Every call is a fresh instance: only the state directory links them.
        read = ok(await t.call("read-file", {"path": "src/lib.rs"}))
        ok(await t.call("edit-file", {"path": "src/lib.rs", "expected-sha256": read["sha256"],
                                      "edits": [{"old-text": "hello", "new-text": "goodbye"}]}))
        return ok(await t.call("diff-workspace", {}))

    diff = wassette.session(change, env)
    assert [(f["path"], f["status"]) for f in diff["files"]] == [("src/lib.rs", "modified")]
    assert '+    "goodbye wassette"' in diff["diff"]
    assert any(state.iterdir()), "the baseline lives in the state directory"
    assert not (repo / ".file-tools-state").exists()

    async def revert(t):
        # A new Wassette process still sees the first one's changes.
        diff = ok(await t.call("diff-workspace", {}))
        reverted = ok(await t.call("revert", {
            "paths": ["src/lib.rs"],
            "expected-sha256s": [{"path": "src/lib.rs", "sha256": sha256(lib)}]}))
        after = ok(await t.call("diff-workspace", {}))
        return diff, reverted, after

    diff, reverted, after = wassette.session(revert, env)
    assert [f["path"] for f in diff["files"]] == ["src/lib.rs"]
    assert reverted["changes"][0]["path"] == "src/lib.rs"
    assert lib.read_text() == LIB_RS
    assert after["files"] == []


def test_wassette_changes_since_token_outlives_the_call_with_a_state_dir_and_key(tmp_path, loaded):
    repo = make_repo(tmp_path)
    state = tmp_path / "state"
    state.mkdir()
    wassette = Wassette(tmp_path, loaded[0])
    (wassette.components / f"{COMPONENT_ID}.policy.yaml").write_text(
        POLICY.format(repo=repo, state=state) + "      - key: FILE_TOOLS_TOKEN_KEY\n")
    env = [("FILE_TOOLS_ROOT", str(repo)), ("FILE_TOOLS_STATE", str(state)),
           ("FILE_TOOLS_TOKEN_KEY", "ab" * 32)]

    def args(token):
        return {"token": token, "path": None, "max-changes": None, "include-hidden": None,
                "respect-ignore": None, "cursor": None}

    async def first(t):
        return ok(await t.call("changes-since", args(None)))

    token = wassette.session(first, env)["token"]
    (repo / "src" / "new.rs").write_text("fn new() {}\n")
    (repo / ".env").write_text("API_KEY=changed\n")

    async def later(t):
        # Another Wassette process, another instance: only the state directory and the
        # key link it to the first.
        return ok(await t.call("changes-since", args(token)))

    r = wassette.session(later, env)
    assert [(c["path"], c["change"]) for c in r["changes"]] == [("src/new.rs", "created")]
    assert not (repo / ".file-tools-state").exists()
    assert any((state / "changes").iterdir()), "the snapshot lives in the state directory"
