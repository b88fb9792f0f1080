"""The policy on a real case-insensitive file system: a FUSE mount (casefold_fs.py) over a
backing directory, folding names as APFS, NTFS and ext4 `casefold` do, driven through the
`file-tools` CLI. Every refusal has a positive control beside it that shows the mount opens
the same file under the other spelling, so a refusal is the policy's and not the mount's.

Needs /dev/fuse, root (or fusermount) and PyPI's fusepy with Debian's libfuse2 (set up by
scripts/setup.sh); where the mount cannot be made the test says why and fails.
"""

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
BIN = os.environ.get("FILE_TOOLS_BIN", str(HERE.parent.parent / "target/release/file-tools"))
SECRET = "SECRET-VALUE-93ab"


def cli(repo, policy, tool, args):
    cmd = [BIN, "--repo", str(repo)]
    if policy:
        cmd += ["--policy", str(policy)]
    out = subprocess.run(cmd + ["call", tool, json.dumps(args)], capture_output=True,
                         text=True, timeout=120)
    assert SECRET not in out.stdout + out.stderr
    return out.returncode, json.loads(out.stdout)


def backing_tree(root: Path):
    files = {
        "private/plan.txt": "the plan\n",
        "public/notes.txt": "notes\n",
        "ci/deploy.sh": "deploy\n",
        "keys/id_rsa": SECRET + "\n",
        "keys/server.key": SECRET + "\n",
        "Cargo.lock": "# lock\n",
        "node_modules/x/index.js": "x\n",
        "vendor/lib.c": "c\n",
        "src/a.rs": "fn a() {}\n",
        ".vscode/settings.json": "{}\n",
        "policy.toml": '[read]\nblock = ["private/**"]\n[write]\nblock = ["ci/**"]\n',
    }
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return files


@pytest.fixture
def folding_mount(tmp_path):
    backing, mnt = tmp_path / "backing", tmp_path / "mnt"
    backing.mkdir()
    mnt.mkdir()
    if not os.path.exists("/dev/fuse"):
        pytest.fail("no /dev/fuse on this machine: the case-insensitive mount cannot be made")
    proc = subprocess.Popen([sys.executable, str(HERE / "casefold_fs.py"), str(backing), str(mnt)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # Up to 30 s: a loaded machine starts Python and its imports slowly.
    for _ in range(600):
        if os.path.ismount(mnt):
            break
        if proc.poll() is not None:
            pytest.fail(f"the FUSE mount failed: {proc.stderr.read().decode()}")
        time.sleep(0.05)
    else:
        proc.kill()
        pytest.fail("the FUSE mount did not appear within 30 s")
    try:
        yield backing, mnt
    finally:
        subprocess.run(["fusermount", "-u", str(mnt)], capture_output=True)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def digest(root: Path):
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_the_mount_folds_names(folding_mount):
    backing, mnt = folding_mount
    backing_tree(backing)
    assert (mnt / "PRIVATE/PLAN.TXT").read_text() == "the plan\n"
    assert (mnt / "keys/id_r\u017fa").read_text() == SECRET + "\n"
    assert (mnt / "keys/server.\u212aey").read_text() == SECRET + "\n"
    assert os.stat(mnt / "Private").st_ino == os.stat(mnt / "private").st_ino


def test_guarding_rules_hold_for_every_spelling_the_file_system_opens(folding_mount):
    backing, mnt = folding_mount
    backing_tree(backing)
    policy = mnt / "policy.toml"
    before = digest(backing)

    # Reads the policy hides, under other spellings: refused like missing files.
    for p in ["PRIVATE/plan.txt", "Private/PLAN.TXT"]:
        rc, v = cli(mnt, policy, "read_file", {"path": p})
        assert rc == 1 and v["error"]["code"] == "NOT_FOUND", (p, v)
    rc, v = cli(mnt, policy, "search_text", {"query": "the plan"})
    assert rc == 0 and v["result"]["total_matches"] == 0, v
    # Keys under Unicode case variants (long s, Kelvin sign) are secrets.
    for p in ["keys/id_r\u017fa", "keys/server.\u212aey", "KEYS/ID_RSA"]:
        rc, v = cli(mnt, policy, "read_file", {"path": p})
        assert rc == 1 and v["error"]["code"] == "POLICY_DENIED", (p, v)
    # Positive control: a visible file reads under any spelling on this mount.
    rc, v = cli(mnt, policy, "read_file", {"path": "PUBLIC/Notes.txt"})
    assert rc == 0 and "notes" in v["result"]["content"], v

    # Writes the policy refuses, under other spellings: nothing changes.
    for p, code in [("POLICY.toml", "PATH_REJECTED"), ("CI/deploy.sh", "POLICY_DENIED"),
                    ("CARGO.LOCK", "POLICY_DENIED"), ("NODE_MODULES/x/index.js", "POLICY_DENIED"),
                    ("VENDOR/lib.c", "POLICY_DENIED"), (".GIT/config", "POLICY_DENIED"),
                    (".FILE-TOOLS-STATE/x", "PATH_REJECTED")]:
        rc, v = cli(mnt, policy, "write_file", {"path": p, "content": "changed\n"})
        assert rc == 1 and v["error"]["code"] == code, (p, v)
    rc, v = cli(mnt, policy, "write_file", {"path": ".VSCODE/Settings.json", "content": "{}\n{}\n",
                                            "expected_sha256": hashlib.sha256(b"{}\n").hexdigest()})
    assert rc == 1 and v["error"]["code"] == "APPROVAL_REQUIRED", v
    assert digest(backing) == before

    # Positive control: an ordinary file is written, and under another spelling it lands
    # in the one file the mount opens.
    sha = hashlib.sha256(b"fn a() {}\n").hexdigest()
    rc, v = cli(mnt, policy, "write_file",
                {"path": "SRC/A.rs", "content": "fn b() {}\n", "expected_sha256": sha})
    assert rc == 0, v
    assert (backing / "src/a.rs").read_text() == "fn b() {}\n"


def test_allow_lists_fold_where_the_host_finds_the_file_system_folds(folding_mount, tmp_path):
    backing, mnt = folding_mount
    backing_tree(backing)
    policy = tmp_path / "allow.toml"
    policy.write_text('[write]\nallow = ["src/**"]\n')
    sha = hashlib.sha256(b"fn a() {}\n").hexdigest()
    # The probe takes only a directory left alone for a second as proof that names fold
    # (a rename there and back would fake it; see host/src/case_probe.rs).
    time.sleep(1.2)
    # On the folding mount the probe finds names fold: SRC is src.
    rc, v = cli(mnt, policy, "write_file",
                {"path": "SRC/a.rs", "content": "fn c() {}\n", "expected_sha256": sha})
    assert rc == 0, v
    rc, v = cli(mnt, policy, "write_file", {"path": "lib/a.rs", "content": "x\n"})
    assert rc == 1 and v["error"]["code"] == "POLICY_DENIED", v
    # On the backing directory itself (case-sensitive), SRC is another directory.
    rc, v = cli(backing, policy, "write_file", {"path": "SRC/a.rs", "content": "x\n"})
    assert rc == 1 and v["error"]["reason"] == "not_allowed", v
    assert not (backing / "SRC").exists()


def test_the_capital_sharp_s_opens_a_secret_and_is_refused(folding_mount):
    # Full case folding (this mount's, ext4's) takes U+1E9E to `ss`: `.htpa\u1e9ewd` is
    # `.htpasswd`, a secret.
    backing, mnt = folding_mount
    (backing / ".htpasswd").write_text("admin:" + SECRET + "\n")
    (backing / "notes.txt").write_text("notes\n")
    # Positive control: the mount opens the secret under that spelling.
    assert (mnt / ".htpa\u1e9ewd").read_text() == "admin:" + SECRET + "\n"
    for p in [".htpasswd", ".htpa\u1e9ewd", ".HTPA\u1e9eWD"]:
        rc, v = cli(mnt, None, "read_file", {"path": p})
        assert rc == 1 and v["error"]["code"] == "POLICY_DENIED", (p, v)
    rc, v = cli(mnt, None, "read_file", {"path": "NOTES.txt"})
    assert rc == 0 and v["result"]["content"] == "notes\n", v


def test_short_names_open_nothing_the_policy_hides(folding_mount, tmp_path):
    # Where 8.3 names are on, `CONFID~1` opens `confidential` and `ENV~1` opens `.env`; no
    # listing shows them, so no rule on the names sees them. The component takes a name
    # shaped like a short name only where the directory lists it under that very name.
    backing, mnt = folding_mount
    backing_tree(backing)
    (backing / ".env").write_text("TOKEN=" + SECRET + "\n")
    (backing / "confidential").mkdir()
    (backing / "confidential/plan.txt").write_text("the plan\n")
    (backing / "deployment").mkdir()
    (backing / "deployment/run.sh").write_text("run\n")
    (backing / "docs").mkdir()
    (backing / "docs/READ~1.TXT").write_text("a real name\n")
    policy = tmp_path / "short.toml"
    policy.write_text('[read]\nblock = ["confidential/**"]\n[write]\nblock = ["deployment/**"]\n')
    # Positive control: the mount opens the hidden files under their short names.
    assert (mnt / "CONFID~1/plan.txt").read_text() == "the plan\n"
    assert (mnt / "ENV~1").read_text() == "TOKEN=" + SECRET + "\n"
    assert (mnt / "DEPLOY~1/run.sh").read_text() == "run\n"
    before = digest(backing)
    for p in ["CONFID~1/plan.txt", "confid~1/PLAN.TXT", "ENV~1"]:
        rc, v = cli(mnt, policy, "read_file", {"path": p})
        assert rc == 1 and v["error"]["code"] == "NOT_FOUND", (p, v)
        assert "the plan" not in json.dumps(v), v
    rc, v = cli(mnt, policy, "file_info", {"path": "ENV~1"})
    assert rc == 1 and v["error"]["code"] == "NOT_FOUND", v
    sha = hashlib.sha256(b"run\n").hexdigest()
    for p in ["DEPLOY~1/run.sh", "ENV~1", "VSCODE~1/settings.json"]:
        rc, v = cli(mnt, policy, "write_file",
                    {"path": p, "content": "changed\n", "expected_sha256": sha})
        assert rc == 1, (p, v)
    rc, v = cli(mnt, policy, "delete_file", {"path": "ENV~1"})
    assert rc == 1, v
    assert digest(backing) == before
    # Positive controls: a file whose real name has that shape reads and changes, a new
    # file of that shape is created under its own name, and the blocked file's own name
    # is refused by the rule itself.
    rc, v = cli(mnt, policy, "read_file", {"path": "docs/READ~1.TXT"})
    assert rc == 0 and v["result"]["content"] == "a real name\n", v
    rc, v = cli(mnt, policy, "write_file", {"path": "docs/NEW~1.TXT", "content": "new\n"})
    assert rc == 0, v
    assert (backing / "docs/NEW~1.TXT").read_text() == "new\n"
    rc, v = cli(mnt, policy, "read_file", {"path": "Confidential/plan.txt"})
    assert rc == 1 and v["error"]["code"] == "NOT_FOUND", v
