"""Each package installs the way its ecosystem installs, into a clean place, and works there.

`bash scripts/package.sh` builds the packages into target/dist (FILE_TOOLS_DIST elsewhere);
scripts/test.sh runs it before these tests. Every test runs the code its package's README
shows (the fenced block after `<!-- snippet: NAME -->`), against a copy of the demo
repository with a file beside it that must stay unread, in an environment of its own: a
temporary HOME and XDG directories, a new virtualenv or npm project, and no variable of
the caller's but PATH (and, for cargo, where the toolchain and the package cache are).
The components inside the packages must be the ones the workspace builds.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DIST = Path(os.environ.get("FILE_TOOLS_DIST", ROOT / "target" / "dist"))
BIN = ROOT / "target" / "release" / "file-tools"
# Downloads of the packages the installs need, fetched by scripts/setup.sh, so that the
# clean installs below reach no registry.
WHEELS = ROOT / "target" / "wheels"
NPM_CACHE = ROOT / "target" / "npm-cache"
SECRET = "outside the repository: never to be read"


def snippet(readme, name):
    """The fenced code block that follows `<!-- snippet: NAME -->` in a README."""
    text = Path(readme).read_text()
    m = re.search(rf"<!-- snippet: {name} -->\n```\w*\n(.*?)^```", text, re.S | re.M)
    assert m, f"{readme} has no snippet {name}"
    return m.group(1)


def the_one(pattern):
    found = sorted(DIST.glob(pattern))
    assert len(found) == 1, f"expected one {pattern} in {DIST} (bash scripts/package.sh): {found}"
    return found[0]


def clean_env(tmp, **extra):
    """Only PATH from the caller; HOME and the XDG directories new and empty."""
    env = {"PATH": os.environ["PATH"], "LANG": "C.UTF-8"}
    for var, sub in [("HOME", "home"), ("XDG_CONFIG_HOME", "config"), ("XDG_CACHE_HOME", "cache"),
                     ("XDG_DATA_HOME", "data"), ("XDG_STATE_HOME", "state"), ("TMPDIR", "tmp")]:
        path = tmp / "env" / sub
        path.mkdir(parents=True, exist_ok=True)
        env[var] = str(path)
    env.update(extra)
    return env


def run(cmd, env, cwd, timeout=900):
    proc = subprocess.run([str(c) for c in cmd], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=timeout)
    assert proc.returncode == 0, (
        f"{cmd} failed ({proc.returncode}):\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    return proc


def component(*flags, tmp):
    """What the workspace's `file-tools component` writes."""
    out = tmp / ("component" + "".join(flags).replace("-", "_") + ".wasm")
    subprocess.run([str(BIN), "component", *flags, str(out)], check=True, capture_output=True)
    return out.read_bytes()


@pytest.fixture()
def repo(tmp_path):
    dest = tmp_path / "repo"
    shutil.copytree(ROOT / "examples" / "demo-repo", dest)
    (tmp_path / "outside.txt").write_text(SECRET + "\n")
    return dest


def assert_read_and_refused(output):
    assert "A tiny calculator library" in output, output
    assert "refused: PATH_REJECTED" in output, output
    assert SECRET not in output, output


def test_python_wheel_installs_into_a_clean_virtualenv_and_runs_its_readme(tmp_path, repo):
    wheel = the_one("agent_file_tools-*-py3-none-any.whl")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        assert z.read("file_tools/file-tools.wasm") == component(tmp=tmp_path), \
            "the wheel's component is not the workspace's"
        assert z.read("file_tools/__init__.py") == (ROOT / "examples/python/file_tools.py").read_bytes()
    assert not [n for n in names if n.endswith(".wasm") and n != "file_tools/file-tools.wasm"]

    env = clean_env(tmp_path, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", venv], env, tmp_path)
    run([venv / "bin" / "pip", "install", "--quiet", "--no-index", "--find-links", WHEELS, wheel],
        env, tmp_path)

    work = tmp_path / "work"
    work.mkdir()
    (work / "example.py").write_text(snippet(ROOT / "packages/python/README.md", "python"))
    where = run([venv / "bin" / "python", "-c", "import file_tools; print(file_tools.__file__)"],
                env, work).stdout.strip()
    assert Path(where).is_relative_to(venv), f"file_tools imported from {where}"
    out = run([venv / "bin" / "python", "example.py", repo], env, work).stdout
    assert_read_and_refused(out)


def test_npm_package_installs_into_a_clean_directory_and_runs_its_readme(tmp_path, repo):
    tgz = the_one("agent-file-tools-*.tgz")
    with tarfile.open(tgz) as t:
        names = t.getnames()
        mjs = t.extractfile("package/file-tools.mjs").read()
        host_fs = t.extractfile("package/host-fs.mjs").read()
        # jco keeps the component's core modules as they are, each in a file of its own.
        cores = {n: t.extractfile(n).read() for n in names if n.endswith(".wasm")}
    assert mjs == (ROOT / "examples/node/file-tools.mjs").read_bytes()
    assert host_fs == (ROOT / "examples/node/host-fs.mjs").read_bytes()
    assert "package/gen/file-tools.js" in names, names
    # The glue mended by examples/node/patch-glue.mjs: names keep a leading BOM.
    with tarfile.open(tgz) as t:
        glue = t.extractfile("package/gen/file-tools.js").read().decode()
    assert "new TextDecoder()" not in glue and "ignoreBOM: true" in glue
    assert "package/gen/file-tools.core.wasm" in cores, names
    workspace = component(tmp=tmp_path)
    for name, core in cores.items():
        assert core in workspace, f"{name} is not a module of the workspace's component"
    shipped = json.loads((ROOT / "packages/node/package.json").read_text())["dependencies"]
    tested = json.loads((ROOT / "examples/node/package.json").read_text())["dependencies"]
    assert shipped == tested, "the package's dependencies differ from the tested example's"

    work = tmp_path / "work"
    work.mkdir()
    (work / "package.json").write_text(json.dumps({"name": "example", "private": True,
                                                   "type": "module"}))
    env = clean_env(tmp_path, npm_config_cache=str(NPM_CACHE), npm_config_update_notifier="false")
    run(["npm", "install", "--offline", "--no-audit", "--no-fund", "--loglevel=error", tgz],
        env, work)
    assert (work / "node_modules/agent-file-tools/gen/file-tools.js").exists()
    (work / "example.mjs").write_text(snippet(ROOT / "packages/node/README.md", "node"))
    out = run(["node", "example.mjs", repo], env, work).stdout
    assert_read_and_refused(out)


def write_if_changed(path, text):
    """Writes a file only when its content changes, so that cargo's mtimes stay meaningful."""
    if not path.is_file() or path.read_text() != text:
        path.write_text(text)


def sync_tree(new, dest):
    """Makes `dest` hold the files of `new`, writing only those that differ."""
    for path in new.rglob("*"):
        target = dest / path.relative_to(new)
        if path.is_file() and (not target.is_file() or target.read_bytes() != path.read_bytes()):
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
    for path in dest.rglob("*"):
        if path.is_file() and not (new / path.relative_to(dest)).is_file():
            path.unlink()


def cargo_env(tmp, **extra):
    """A clean environment that still finds the toolchain and the downloaded crates."""
    home = Path.home()
    return clean_env(tmp, CARGO_HOME=os.environ.get("CARGO_HOME", str(home / ".cargo")),
                     RUSTUP_HOME=os.environ.get("RUSTUP_HOME", str(home / ".rustup")),
                     CARGO_NET_OFFLINE="true", **extra)


def test_cargo_install_puts_file_tools_on_path_as_the_readme_says(tmp_path):
    root = tmp_path / "installed"
    env = cargo_env(tmp_path, CARGO_INSTALL_ROOT=str(root))
    env["PATH"] = f"{root / 'bin'}:{env['PATH']}"
    script = "set -euo pipefail\n" + snippet(ROOT / "cli/README.md", "install")
    proc = run(["bash", "-c", script], env, ROOT)
    assert (root / "bin" / "file-tools").exists()
    assert proc.stdout.startswith("file-tools "), proc.stdout
    assert "A tiny calculator library" in proc.stdout, proc.stdout
    # Reusing the workspace's build: Wasmtime is not compiled again. (The MCP crates may be:
    # the tests' build turns on `num-traits/std`, which reaches them through `chrono`.)
    assert "Compiling wasmtime" not in proc.stderr, proc.stderr


def test_packaged_crate_builds_on_its_own_with_the_workspace_components(tmp_path, repo):
    crate = the_one("file-tools-host-*.crate")
    contract = the_one("file-tools-contract-*.crate")
    expected = {
        "guest": component(tmp=tmp_path),
        "standalone": component("--standalone", tmp=tmp_path),
        "wassette": component("--wassette", tmp=tmp_path),
    }
    # Unpacked at a fixed place, so that cargo finds its build fresh on the next run (target/
    # is not a workspace member). A .crate gives every file the same old mtime, which would
    # hide a change from cargo: only files whose content changed are written, and so get a
    # new mtime.
    check = ROOT / "target" / "package-check"
    unpacked = tmp_path / "unpacked"
    for packed in (crate, contract):
        with tarfile.open(packed) as t:
            t.extractall(unpacked, filter="data")
    src = check / "crate" / crate.name.removesuffix(".crate")
    sync_tree(unpacked / src.name, src)
    # The host crate depends on file-tools-contract, which a user gets from the Rust package
    # registry. Here the packaged contract crate stands in for it: a patch on every build
    # below, and the host's lock entry for it made a patched one (no registry source).
    contract_src = check / "crate" / contract.name.removesuffix(".crate")
    sync_tree(unpacked / contract_src.name, contract_src)
    patch = ["--config", f'patch.crates-io.file-tools-contract.path="{contract_src}"']
    lock = (src / "Cargo.lock").read_text()
    patched = re.sub(r'(name = "file-tools-contract"\nversion = "[^"]+"\n)source = "[^"]+"\n'
                     r'checksum = "[^"]+"\n', r"\1", lock)
    assert patched != lock, "the host crate's lock file has no registry entry for the contract"
    write_if_changed(src / "Cargo.lock", patched)
    assert not (src / "guest").exists() and (src / "component" / "file_tools.wasm").exists()

    # A program that depends on the packaged crate, as a user of the registry would: the
    # README's example, and one that writes the components the crate embeds.
    consumer = check / "consumer"
    consumer.mkdir(exist_ok=True)
    write_if_changed(consumer / "Cargo.toml", f"""[package]
name = "file-tools-package-check"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
file-tools-host = {{ path = "{src}" }}

[[bin]]
name = "file-tools-package-readme"
path = "readme.rs"

[[bin]]
name = "file-tools-package-components"
path = "components.rs"

[workspace]
""")
    write_if_changed(consumer / "readme.rs", snippet(ROOT / "host/README.md", "library"))
    write_if_changed(consumer / "components.rs", """fn main() {
    let dir = std::path::PathBuf::from(std::env::args().nth(1).expect("a directory"));
    let write = |name: &str, bytes: &[u8]| std::fs::write(dir.join(name), bytes).expect("writing");
    write("guest", file_tools_host::runtime::GUEST_WASM);
    write("standalone", file_tools_host::runtime::STANDALONE_WASM);
    write("wassette", &file_tools_host::runtime::wassette_component());
}
""")
    # The versions the package was made with: the crate's own lock file.
    shutil.copy(src / "Cargo.lock", consumer / "Cargo.lock")

    # The workspace's target directory, so that a second run finds this build fresh. The
    # first run compiles Wasmtime once more: the library alone resolves its dependencies'
    # features without the applications' (tokio's macros, serde's `rc`, ...), as a user's
    # build does, so none of the workspace's artifacts fit it.
    target = ROOT / "target"
    env = cargo_env(tmp_path)
    # Compiling Wasmtime takes 10-20 minutes on two busy cores: the limit leaves room for it.
    run(["cargo", "build", "--release", "--locked", *patch, "--manifest-path",
         src / "Cargo.toml", "--target-dir", target], env, tmp_path, timeout=2700)
    # The library alone: none of the applications' dependencies come with it (the watch's
    # `notify` only with the `watch` feature).
    manifest = (src / "Cargo.toml").read_text()
    for app_dep in ("clap", "clap_complete", "rmcp", "hyper", "hyper-util", "http-body-util",
                    "prometheus-client", "tokio", "toml"):
        assert f"[dependencies.{app_dep}]" not in manifest, app_dep
    run(["cargo", "build", "--release", *patch, "--manifest-path", consumer / "Cargo.toml",
         "--target-dir", target], env, consumer, timeout=2700)

    out = run([target / "release" / "file-tools-package-readme", repo], env, tmp_path).stdout
    assert_read_and_refused(out)
    written = tmp_path / "written"
    written.mkdir()
    run([target / "release" / "file-tools-package-components", written], env, tmp_path)
    for name, want in expected.items():
        assert (written / name).read_bytes() == want, f"the packaged crate's {name} component is stale"
