"""A case-insensitive file system for tests: FUSE over a backing directory.

Run as `python casefold_fs.py BACKING MOUNTPOINT`. Every name is looked up the way a
case-folding file system does it (APFS, NTFS, ext4 `casefold`): an existing entry whose
folded name (Unicode case folding of the NFD form) equals the folded name asked for is that
entry, whatever the spelling; a new entry keeps the spelling it was created with. Inode
numbers are the backing files' own (`use_ino`), so one file has one identity under every
spelling, as on the real file systems. As NTFS does where 8.3 names are on (the default on
system drives), an entry whose name is not a valid DOS name also opens under a generated
short name (`private` as `PRIVAT~1`, `.env` as `ENV~1`), which a directory listing never
shows.

Only what the tests of file-tools use is offered; it runs single-threaded in the foreground.
"""

import errno
import os
import sys
import unicodedata

from fuse import FUSE, FuseOSError, Operations


def fold(name: str) -> str:
    return unicodedata.normalize("NFD", unicodedata.normalize("NFD", name).casefold())


SHORT_CHARS = set("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-$!#%&'(){}^@`~")


def is_dos_name(name: str) -> bool:
    stem, dot, ext = name.partition(".")
    return (1 <= len(stem) <= 8 and len(ext) <= 3 and "." not in ext
            and all(c in SHORT_CHARS for c in (stem + ext).upper()))


def short_names(entries):
    """NTFS-style generated short names of a directory's entries: {SHORT: entry}."""
    out, taken = {}, {}
    for entry in sorted(entries):
        if is_dos_name(entry):
            continue
        bare = entry.lstrip(".")
        stem, _, ext = bare.rpartition(".") if "." in bare else (bare, "", "")
        keep = lambda s: "".join(c for c in s.upper() if c in SHORT_CHARS and c != "~")
        base, ext = keep(stem)[:6], keep(ext)[:3]
        n = taken.get((base, ext), 0) + 1
        taken[(base, ext)] = n
        out[f"{base}~{n}" + (f".{ext}" if ext else "")] = entry
    return out


class CaseFolding(Operations):
    def __init__(self, backing: str):
        self.backing = os.path.realpath(backing)

    def _real(self, path: str, create_last: bool = False) -> str:
        """The backing path of `path`, each component matched by its folded form."""
        cur = self.backing
        parts = [p for p in path.split("/") if p]
        for i, part in enumerate(parts):
            exact = os.path.join(cur, part)
            if os.path.lexists(exact):
                cur = exact
                continue
            wanted = fold(part)
            match = None
            try:
                entries = sorted(os.listdir(cur))
                for entry in entries:
                    if fold(entry) == wanted:
                        match = entry
                        break
                if match is None:
                    match = short_names(entries).get(part.upper())
            except OSError:
                pass
            if match is None:
                # A missing name: created with the spelling asked for (or not found).
                cur = exact
                continue
            cur = os.path.join(cur, match)
        return cur

    def _attrs(self, st):
        keys = ("st_mode", "st_nlink", "st_uid", "st_gid", "st_size", "st_atime",
                "st_mtime", "st_ctime", "st_ino", "st_dev")
        return {k: getattr(st, k) for k in keys}

    def getattr(self, path, fh=None):
        try:
            st = os.lstat(self._real(path))
        except OSError as e:
            raise FuseOSError(e.errno)
        return self._attrs(st)

    def readdir(self, path, fh):
        return [".", ".."] + sorted(os.listdir(self._real(path)))

    def readlink(self, path):
        return os.readlink(self._real(path))

    def access(self, path, amode):
        if not os.access(self._real(path), amode, follow_symlinks=False):
            raise FuseOSError(errno.EACCES)

    def chmod(self, path, mode):
        os.chmod(self._real(path), mode)

    def chown(self, path, uid, gid):
        os.lchown(self._real(path), uid, gid)

    def utimens(self, path, times=None):
        os.utime(self._real(path), times, follow_symlinks=False)

    def mkdir(self, path, mode):
        os.mkdir(self._real(path), mode)

    def rmdir(self, path):
        os.rmdir(self._real(path))

    def unlink(self, path):
        os.unlink(self._real(path))

    def symlink(self, target, source):
        os.symlink(source, self._real(target))

    def rename(self, old, new):
        os.rename(self._real(old), self._real(new))

    def link(self, target, source):
        os.link(self._real(source), self._real(target))

    def statfs(self, path):
        st = os.statvfs(self._real(path))
        keys = ("f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail", "f_ffree",
                "f_files", "f_flag", "f_frsize", "f_namemax")
        return {k: getattr(st, k) for k in keys}

    def open(self, path, flags):
        return os.open(self._real(path), flags | os.O_NOFOLLOW)

    def create(self, path, mode, fi=None):
        return os.open(self._real(path), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)

    def read(self, path, size, offset, fh):
        return os.pread(fh, size, offset)

    def write(self, path, data, offset, fh):
        return os.pwrite(fh, data, offset)

    def truncate(self, path, length, fh=None):
        if fh is not None:
            os.ftruncate(fh, length)
        else:
            os.truncate(self._real(path), length)

    def flush(self, path, fh):
        return 0

    def release(self, path, fh):
        os.close(fh)
        return 0

    def fsync(self, path, datasync, fh):
        os.fsync(fh)
        return 0


if __name__ == "__main__":
    backing, mountpoint = sys.argv[1], sys.argv[2]
    FUSE(CaseFolding(backing), mountpoint, foreground=True, nothreads=True, use_ino=True,
         attr_timeout=0, entry_timeout=0)
