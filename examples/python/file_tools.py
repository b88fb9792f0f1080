"""A Python host for the file-tools component, on PyPI `wasmtime`'s component API.

    from file_tools import FileTools, ToolError

    tools = FileTools("file-tools.wasm", repo="path/to/repo", on_audit=print)
    page = tools.call("read_file", {"path": "src/lib.rs"})
    tools.call("edit_file", {"path": "src/lib.rs", "expected_sha256": page["sha256"],
                             "edits": [{"old_text": "a", "new_text": "b"}]})

`call` drives every tool with plain JSON through the component's own dispatch (the same
names and schemas as `describe`); a refusal raises `ToolError` with the machine-readable
code. The repository is the component's only preopen, read-only when `read_only=True`.
Without `wasm_path`, the component installed beside this module is used (the
agent-file-tools package ships it as `file_tools/file-tools.wasm`).
`approve(request)` decides on changes the policy's `approval` rules mark; without it they
are refused with APPROVAL_REQUIRED.

Compiling the component takes seconds; the compiled form is kept in the user's cache
directory (`FILE_TOOLS_CACHE_DIR`, `off` for none; else `$XDG_CACHE_HOME/file-tools` or
`~/.cache/file-tools`), so later starts load it in milliseconds. Only an artifact that this
user owns and nobody else can write, in such a directory, is ever loaded: it is native code.
"""

import hashlib
import json
import os
import platform
import stat

import wasmtime
import wasmtime.component as wc

# The methods of host-fs's resources, which this host never hands out (see `root`).
HOST_FS_RESOURCES = {
    "dir": ["stat", "stat-at", "open-dir", "open-file", "read-link", "entries", "create-new",
            "rename", "unlink", "mkdir", "rmdir"],
    "file": ["stat", "read-at"],
}


def _never_called(*_args):
    raise RuntimeError("host-fs resources are not offered by this host")

PACKAGE = "agent:file-tools"
VERSION = "0.2.0"


class ToolError(Exception):
    """A tool's refusal: `code` is SCREAMING_SNAKE_CASE, as in the CLI and MCP."""

    def __init__(self, code, message, path=None, details=None):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.path = path
        self.details = details or {}


def _field(record, name):
    return getattr(record, name, None)


def _plain(value):
    """A WIT record (or a list of them) as dicts with snake_case keys."""
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if hasattr(value, "__dict__"):
        return {k.replace("-", "_"): _plain(v) for k, v in vars(value).items()}
    return value


def _audit_dict(event):
    """The WIT audit-event record as a dict, codes in SCREAMING_SNAKE_CASE as in the CLI."""
    d = _plain(event)
    if d.get("error_code"):
        d["error_code"] = d["error_code"].upper().replace("-", "_")
    return d


_COMPILED = {}


def _bundled_component():
    """The component installed beside this module (the agent-file-tools package has it)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "file-tools.wasm")
    if not os.path.exists(path):
        raise FileNotFoundError(
            f"no component at {path}: pass wasm_path (write one with "
            "`file-tools component file-tools.wasm`) or install the agent-file-tools package")
    return path


def cache_dir():
    """Where compiled components are kept: FILE_TOOLS_CACHE_DIR (`off` for nowhere), else
    the user's cache directory, as the `file-tools` CLI does."""
    configured = os.environ.get("FILE_TOOLS_CACHE_DIR")
    if configured == "off":
        return None
    if configured:
        return configured
    # A relative XDG_CACHE_HOME is ignored, as the XDG base directory rules say.
    base = os.environ.get("XDG_CACHE_HOME")
    if not base or not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "file-tools")


def _wasmtime_version():
    """The installed wasmtime's version: from the name of its `.dist-info` folder beside
    the package, since importing `importlib.metadata` for it would cost tens of
    milliseconds at every start (more than opening a cached component); from
    `importlib.metadata` when that folder is not there."""
    site = os.path.dirname(os.path.dirname(os.path.abspath(wasmtime.__file__)))
    try:
        for name in sorted(os.listdir(site)):
            if name.startswith("wasmtime-") and name.endswith(".dist-info"):
                return name[len("wasmtime-"):-len(".dist-info")]
    except OSError:
        pass
    import importlib.metadata

    try:
        return importlib.metadata.version("wasmtime")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _artifact_name(wasm_digest):
    """One compiled artifact per component, wasmtime version and machine: wasmtime itself
    refuses an artifact from another version or engine configuration."""
    version = _wasmtime_version()
    return f"file-tools-py-{wasm_digest.hex()[:32]}-wasmtime{version}-{platform.machine()}.cwasm"


def _private(path, want_dir):
    """True when `path` is this user's own and nobody else may write it (POSIX); a compiled
    artifact is native code, so one that another user could have planted is never loaded."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    kind = stat.S_ISDIR if want_dir else stat.S_ISREG
    if not kind(st.st_mode):
        return False
    if os.name != "posix":
        return True
    return st.st_uid == os.getuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


_NO_FOLLOW = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
              | getattr(os, "O_CLOEXEC", 0))


def _held_root(repo):
    """The repository's directory held open for `copy-mode`, or None where opens relative
    to a descriptor (`dir_fd`, `O_NOFOLLOW`) are not offered."""
    if os.open not in os.supports_dir_fd or not hasattr(os, "O_NOFOLLOW"):
        return None
    return os.open(repo, _NO_FOLLOW | os.O_DIRECTORY)


def _with_regular_file(root_fd, logical, use):
    """`use(fd)` on the regular file at the logical path `logical` beneath the held
    directory `root_fd`, opened one name at a time relative to the directory before it,
    never following a symlink (nor blocking on a FIFO); None when that cannot be done here
    (a link, `..`, a special file, no held directory)."""
    names = logical.split("/")
    if root_fd is None or any(n in ("", ".", "..") or "\0" in n for n in names):
        return None
    fds = [root_fd]
    try:
        for name in names[:-1]:
            fds.append(os.open(name, _NO_FOLLOW | os.O_DIRECTORY, dir_fd=fds[-1]))
        fds.append(os.open(names[-1], _NO_FOLLOW | getattr(os, "O_NOCTTY", 0), dir_fd=fds[-1]))
        if not stat.S_ISREG(os.fstat(fds[-1]).st_mode):
            return None
        return use(fds[-1])
    finally:
        for fd in fds[1:]:
            os.close(fd)


def _load_component(engine, wasm_path):
    """The compiled component: from the cache when an artifact of these very bytes is there,
    otherwise compiled (seconds) and, where the cache can be written, kept for next time."""
    with open(wasm_path, "rb") as f:
        wasm = f.read()
    directory = cache_dir()
    artifact = os.path.join(directory, _artifact_name(hashlib.sha256(wasm).digest())) if directory else None
    if artifact and _private(directory, True) and _private(artifact, False):
        try:
            return wc.Component.deserialize_file(engine, artifact)
        except wasmtime.WasmtimeError:
            pass  # another engine configuration, or a damaged file: compile again
    component = wc.Component(engine, wasm)
    if artifact:
        try:
            _write_artifact(directory, artifact, component.serialize())
        except OSError:
            pass  # a cache that cannot be written only costs start-up time
    return component


def _write_artifact(directory, artifact, data):
    os.makedirs(directory, mode=0o700, exist_ok=True)
    if not _private(directory, True):
        return
    # Written under a temporary name and renamed, so a reader never sees half a file.
    tmp = f"{artifact}.tmp{os.getpid()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, artifact)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _compiled(wasm_path):
    """One engine and one compiled component per file, shared by every instance."""
    key = os.path.realpath(wasm_path)
    if key not in _COMPILED:
        engine = wasmtime.Engine()
        _COMPILED[key] = (engine, _load_component(engine, key))
    return _COMPILED[key]


class FileTools:
    """One component instance over one repository."""

    def __init__(self, wasm_path=None, repo=None, read_only=False, policy=None,
                 on_audit=None, approve=None):
        if repo is None:
            raise TypeError("FileTools needs repo, the repository directory")
        if wasm_path is None:
            wasm_path = _bundled_component()
        self.repo = os.path.realpath(repo)
        # Held from here on, so that a repository renamed away and replaced later gets no
        # permission bits from this host (the component holds its preopen the same way).
        self._root_fd = None if read_only else _held_root(self.repo)
        self.engine, self.component = _compiled(wasm_path)
        policy = dict(policy or {})
        if read_only:
            policy["read_only"] = True
        self._on_audit = on_audit
        self._approve = approve
        self.read_only = read_only

        linker = wc.Linker(self.engine)
        linker.add_wasip2()
        with linker.root() as root:
            with root.add_instance(f"{PACKAGE}/audit@{VERSION}") as audit:
                audit.add_func("emit", self._emit)
            with root.add_instance(f"{PACKAGE}/approval@{VERSION}") as approval:
                approval.add_func("request", self._request_approval)
            # Progress reports of long calls: this host shows none.
            with root.add_instance(f"{PACKAGE}/progress@{VERSION}") as progress:
                progress.add_func("report", lambda _store, _files, _matches: None)
            with root.add_instance(f"{PACKAGE}/host-fs@{VERSION}") as host_fs:
                host_fs.add_func("copy-mode", self._copy_mode)
                # The batched reads and the hashing are optimisations: answering `none`
                # makes the component read through WASI and hash in WebAssembly. This
                # host offers none of them, since the runtime's component API carries a
                # `list<u8>` across the boundary one byte at a time in Python (hashing a
                # 100 KB file here took about 100 ms, against 1 ms in the component).
                host_fs.add_func("read-dir", lambda _store, _path: None)
                host_fs.add_func("read-dir-stat", lambda _store, _path: None)
                host_fs.add_func("tree-changes", lambda _store: None)
                host_fs.add_func("tree-changed-dirs", lambda _store, _since, _start: None)
                host_fs.add_func("read-file", lambda _store, _path, _max: None)
                host_fs.add_func("sha256", lambda _store, _data: None)
                # No host-held directories (`root` answers none): the component then works
                # through its WASI preopen, and the `dir` and `file` resources are never
                # created. Their types and methods must still be defined to link.
                host_fs.add_func("root", lambda _store: None)
                for i, (res, methods) in enumerate(HOST_FS_RESOURCES.items()):
                    host_fs.add_resource(res, wc.ResourceType.host(i + 1), lambda _store, _rep: None)
                    for m in methods:
                        host_fs.add_func(f"[method]{res}.{m}", _never_called)

        wasi = wasmtime.WasiConfig()
        wasi.preopen_dir(self.repo, "/", fs_mutable=not read_only)
        env = [("FILE_TOOLS_POLICY", json.dumps(policy))]
        if on_audit is None:
            # Nobody listens: the component then builds and sends no audit events, which
            # are the dearest part of a call through this embedding.
            env.append(("FILE_TOOLS_AUDIT", "off"))
        wasi.env = env
        self.store = wasmtime.Store(self.engine)
        self.store.set_wasi(wasi)
        self.instance = linker.instantiate(self.store, self.component)

        tools = self.component.get_export_index(f"{PACKAGE}/tools@{VERSION}")
        self._call = self.instance.get_func(
            self.store, self.component.get_export_index("call", tools)
        )
        self._describe = self.instance.get_func(
            self.store, self.component.get_export_index("describe", tools)
        )

    def close(self):
        """Releases the component instance and the repository directories held for it;
        later calls raise. Optional: the object releases them when collected, and
        `with FileTools(...) as tools:` at the block's end."""
        self._closed = True
        # The instance and its store go too: the runtime's WASI holds the preopen open.
        for held in ("_call", "_describe", "instance", "store"):
            setattr(self, held, None)
        fd = getattr(self, "_root_fd", None)
        if fd is not None:
            self._root_fd = None
            try:
                os.close(fd)
            except Exception:  # at interpreter exit `os` may be gone already
                pass

    def __enter__(self):
        return self

    def __exit__(self, *_exc):
        self.close()

    def __del__(self):
        self.close()

    def _emit(self, _store, event):
        if self._on_audit is not None:
            self._on_audit(_audit_dict(event))

    def _request_approval(self, _store, request):
        """approval.request: a change the policy marks; without `approve`, declined."""
        if self._approve is None:
            return False
        try:
            return bool(self._approve(_plain(request)))
        except Exception:  # an approver's bug must never write files
            return False

    def _copy_mode(self, _store, src, dst):
        """host-fs.copy-mode: keep a replaced file's permission bits (paths are logical).
        Both files are opened beneath the repository one name at a time without following
        a symlink, and the bits are read from and set on the opened descriptors, so a name
        swapped for a link meanwhile reaches nothing outside; a target with other names
        (hard links) is left alone, and a read-only host changes nothing."""
        try:
            mode = _with_regular_file(self._root_fd, src, lambda fd: os.fstat(fd).st_mode)
            if mode is None:
                return False

            def chmod_single(fd):
                # A file with another name may be one outside the repository.
                if os.fstat(fd).st_nlink != 1:
                    return False
                os.fchmod(fd, stat.S_IMODE(mode))
                return True
            return _with_regular_file(self._root_fd, dst, chmod_single) is True
        except OSError:
            return False

    @staticmethod
    def _unwrap(result):
        if isinstance(result, str):
            return json.loads(result)
        code = str(_field(result, "code")).upper().replace("-", "_")
        details = {d.key: d.value for d in (_field(result, "details") or [])}
        raise ToolError(code, _field(result, "message"), _field(result, "path"), details)

    def _open(self):
        if getattr(self, "_closed", False):
            raise RuntimeError("this FileTools instance is closed")

    def describe(self):
        """Every tool offered under this policy: name, description, JSON Schema, annotations."""
        self._open()
        return self._unwrap(self._describe(self.store))

    def call(self, tool, args=None):
        """Runs `tool` with JSON-able `args`; returns its result as a dict."""
        self._open()
        return self._unwrap(self._call(self.store, tool, json.dumps(args or {})))
