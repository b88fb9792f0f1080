// The `host-fs` directory and file resources for the Node host, on Linux: the repository
// held open by descriptors, one name per operation, so that a link or directory swapped in
// by another process reaches nothing outside and a FIFO never blocks a call.
//
// Node's `fs` has no `openat`. On Linux, `/proc/self/fd/N/name` resolves `name` inside the
// very directory the descriptor N holds (the kernel follows the `fd` entry to that open
// directory, wherever it now is), so every operation here names `name` relative to a held
// descriptor, and every open adds `O_NOFOLLOW | O_NONBLOCK` and is checked with `fstat`.
// Where `/proc/self/fd` does not answer for the repository's descriptor (another system, a
// sandbox without procfs), `hostDirs` returns null and the component uses the WASI shim.

import fs, {
  closeSync, constants, fchmodSync, fstatSync, fsyncSync, lstatSync, mkdirSync, openSync,
  readdirSync, readlinkSync, readSync, renameSync, rmdirSync, unlinkSync, writeSync,
} from 'node:fs';

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY } = constants;
const OPEN = O_NOFOLLOW | O_NONBLOCK;
const dispose = Symbol.dispose || Symbol.for('dispose');
// `ignoreBOM`: a name that begins with U+FEFF keeps it (it is another name).
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
/** The file system type of a real procfs (`PROC_SUPER_MAGIC`). */
const PROC_MAGIC = 0x9fa0;

const ok = (val) => ({ tag: 'ok', val });
const err = (tag, val) => ({ tag: 'err', val: val === undefined ? { tag } : { tag, val } });

/** A failed system call as the interface's `fs-error`. */
function fsError(e) {
  switch (e && e.code) {
    case 'ENOENT': return err('not-found');
    case 'EEXIST': return err('already-exists');
    case 'ENOTDIR': return err('not-a-directory');
    case 'EISDIR': return err('is-a-directory');
    case 'ELOOP': case 'ENXIO': case 'EOPNOTSUPP': return err('not-plain');
    case 'ENOTEMPTY': return err('not-empty');
    case 'EACCES': case 'EPERM': case 'EROFS': return err('access');
    default: return err('other', String(e && e.message ? e.message : e));
  }
}

/** Runs `f`, turning a thrown system error into an `fs-error`. */
function attempt(f) {
  try {
    return f();
  } catch (e) {
    return fsError(e);
  }
}

/** One plain name: never empty, `.`, `..`, nor holding `/` or NUL. */
function plainName(name) {
  return typeof name === 'string' && name !== '' && name !== '.' && name !== '..' && !/[/\0]/.test(name);
}

function kind(st) {
  if (st.isFile()) return 'file';
  if (st.isDirectory()) return 'dir';
  if (st.isSymbolicLink()) return 'symlink';
  return 'other';
}

/** A `bigint` stat as the interface's `entry-stat`. */
function entryStat(st) {
  const ns = (v) => (v >= 0n && v < 1n << 64n ? v : undefined);
  return {
    kind: kind(st), size: st.size, linkCount: st.nlink, modifiedNs: ns(st.mtimeNs),
    changedNs: ns(st.ctimeNs), device: st.dev, inode: st.ino,
  };
}

/** `name` inside the directory held by `fd`. */
const at = (fd, name) => `/proc/self/fd/${fd}/${name}`;

/** Opens `name` in the directory `fd` without following a link or blocking, and checks on
 * the descriptor that it is a directory (`wantDir`) or a regular file. */
function openPlain(fd, name, wantDir) {
  if (!plainName(name)) return err('other', `'${name}' is not a single path component`);
  let opened;
  try {
    opened = openSync(at(fd, name), O_RDONLY | OPEN | (wantDir ? O_DIRECTORY : O_NOCTTY));
    const st = fstatSync(opened);
    if (wantDir ? !st.isDirectory() : !st.isFile()) return err('not-plain');
    const done = opened;
    opened = undefined;
    return ok(done);
  } catch (e) {
    return fsError(e);
  } finally {
    if (opened !== undefined) closeSync(opened);
  }
}

/** The directory (`wantDir`) or regular file at the logical path `path` beneath `rootFd`
 * (`''` is the root itself), opened one name at a time without following a link anywhere
 * and checked on each descriptor; `use(fd)` runs on it, and every descriptor opened here is
 * closed after. `{ ok: true, val }` with what `use` returned, else `{ ok: false, why }`. */
function withPlain(rootFd, path, wantDir, use) {
  const names = path === '' ? [] : path.split('/');
  if (names.length === 0 && !wantDir) return { ok: false, why: 'the root is not a file' };
  const fds = [];
  try {
    let dir = rootFd;
    for (const [i, name] of names.entries()) {
      const r = openPlain(dir, name, wantDir || i < names.length - 1);
      if (r.tag !== 'ok') {
        const tag = r.val.tag;
        return { ok: false, why: tag === 'other' ? r.val.val : `'${path}': ${tag}` };
      }
      fds.push(r.val);
      dir = r.val;
    }
    return { ok: true, val: use(dir) };
  } finally {
    for (const fd of fds) closeSync(fd);
  }
}

/** `use(fd)` on the regular file at `path` beneath `rootFd` (see `withPlain`); null when
 * it cannot be reached that way. */
function withRegularFile(rootFd, path, use) {
  const r = withPlain(rootFd, path, false, use);
  return r.ok ? r.val : null;
}

/** The names of the directory held by `fd` as the interface gives them (`undefined` for one
 * that is not UTF-8), each with its raw bytes and a look at it (`null` when it went before
 * the look), in the walk's order. Each entry is looked at by its raw name: Node's typed
 * listing looks up an entry of unknown type by a lossy text form of its name. */
function listing(fd) {
  const dir = `/proc/self/fd/${fd}/`;
  const named = readdirSync(`/proc/self/fd/${fd}`, { encoding: 'buffer' }).map((raw) => {
    let name;
    try { name = utf8.decode(raw); } catch { name = undefined; }
    let st = null;
    try { st = lstatSync(Buffer.concat([Buffer.from(dir), raw]), { bigint: true }); } catch { /* gone */ }
    return { name, raw, st };
  });
  // Names by their bytes, those that are not UTF-8 last (the component's own order).
  return named.sort((a, b) => (a.name === undefined) - (b.name === undefined) || Buffer.compare(a.raw, b.raw));
}

/** Up to `max` (a bigint) bytes of the regular file open as `fd`, whose look gave `size`:
 * that many at most, or, for a file that reports no size (some special file systems do
 * not say), whatever it yields up to `max`, read in growing pieces. */
function readUpTo(fd, size, max) {
  const limit = max < 1n << 53n ? Number(max) : Number.MAX_SAFE_INTEGER;
  if (size > 0n) {
    const want = Math.min(Number(size), limit);
    const buf = Buffer.allocUnsafe(want);
    let got = 0;
    while (got < want) {
      const n = readSync(fd, buf, got, want - got, null);
      if (n === 0) break;
      got += n;
    }
    return new Uint8Array(buf.buffer, buf.byteOffset, got);
  }
  const pieces = [];
  let total = 0;
  for (let piece = 64 * 1024; total < limit; piece = Math.min(piece * 2, 16 << 20)) {
    const buf = Buffer.allocUnsafe(Math.min(piece, limit - total));
    const n = readSync(fd, buf, 0, buf.length, null);
    if (n === 0) break;
    pieces.push(buf.subarray(0, n));
    total += n;
  }
  const all = Buffer.concat(pieces, total);
  return new Uint8Array(all.buffer, all.byteOffset, total);
}

/**
 * The batched reads of `host-fs` (`read-file`, `read-dir`, `read-dir-stat`) beneath the held
 * repository descriptor `root()`: one call each instead of one per open, look and read.
 * `allowHardlinks` is the policy's: without it a file with other names is not read.
 */
function batchedReads(root, allowHardlinks) {
  const failed = (why) => ({ tag: 'err', val: why });
  const reported = (f) => {
    try {
      const r = f();
      return r.ok ? { tag: 'ok', val: r.val } : failed(r.why);
    } catch (e) {
      return failed(String(e && e.message ? e.message : e));
    }
  };
  return {
    readFile: (path, maxBytes) => reported(() => withPlain(root(), path, false, (fd) => {
      const st = fstatSync(fd, { bigint: true });
      if (st.nlink > 1n && !allowHardlinks) throw new Error(`'${path}' has more than one hard link`);
      return readUpTo(fd, st.size, maxBytes);
    })),
    readDir: (path) => reported(() => withPlain(root(), path, true, (fd) => listing(fd)
      .map(({ name, st }) => ({ name, kind: st ? kind(st) : 'other' })))),
    readDirStat: (path) => reported(() => withPlain(root(), path, true, (fd) => listing(fd)
      // Gone since the listing: left out.
      .filter(({ st }) => st !== null)
      .map(({ name, st }) => ({ name, stat: entryStat(st) })))),
  };
}

/**
 * The repository's `Dir` and `File` resource classes, `root`, `copyMode` and the batched
 * reads, holding `repo` (a real path) open; null where `/proc/self/fd` does not lead back
 * to it. `readOnly` refuses every change with `access`; `allowHardlinks` is the policy's.
 */
export function hostDirs(repo, readOnly, allowHardlinks = false) {
  if (process.platform !== 'linux') return null;
  let rootFd;
  try {
    // A real procfs (an emulation whose `fd` entries are plain links would make every
    // operation here one by path), whose entry for the descriptor names the repository.
    // (`statfsSync` is missing before Node 18.15: the shim serves there.)
    if (fs.statfsSync?.('/proc').type !== PROC_MAGIC) throw new Error('no procfs');
    rootFd = openSync(repo, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    if (readlinkSync(`/proc/self/fd/${rootFd}`) !== repo) throw new Error('no procfs');
  } catch {
    if (rootFd !== undefined) closeSync(rootFd);
    return null;
  }

  /** The repository's descriptor; after `close`, a refusal. */
  const repoFd = () => {
    if (rootFd === undefined) throw new Error('the host has closed this repository');
    return rootFd;
  };
  // Every descriptor a resource holds, closed when the component drops the resource, or
  // all at once by `close` (the host's `close`, or its instance collected unclosed).
  const held = new Set();
  const hold = (fd) => {
    held.add(fd);
    return fd;
  };
  const release = (fd) => {
    if (held.delete(fd)) closeSync(fd);
  };

  class File {
    constructor(fd) { this.fd = hold(fd); }
    stat() { return attempt(() => ok(entryStat(fstatSync(this.fd, { bigint: true })))); }
    readAt(offset, len) {
      return attempt(() => {
        // Bounded by what one call may carry; the component asks for at most 1 MiB.
        const want = Number(len < 16n << 20n ? len : 16n << 20n);
        const buf = Buffer.allocUnsafe(want);
        let got = 0;
        while (got < want) {
          const n = readSync(this.fd, buf, got, want - got, offset + BigInt(got));
          if (n === 0) break;
          got += n;
        }
        return ok(new Uint8Array(buf.buffer, buf.byteOffset, got));
      });
    }
    [dispose]() { release(this.fd); }
  }

  class Dir {
    constructor(fd) { this.fd = hold(fd); }
    /** The directory for a change of `name` in it, or the refusal. */
    change(name) {
      if (readOnly) return err('access');
      if (!plainName(name)) return err('other', `'${name}' is not a single path component`);
      return null;
    }
    stat() { return attempt(() => ok(entryStat(fstatSync(this.fd, { bigint: true })))); }
    statAt(name) {
      if (!plainName(name)) return err('other', `'${name}' is not a single path component`);
      return attempt(() => ok(entryStat(lstatSync(at(this.fd, name), { bigint: true }))));
    }
    openDir(name) {
      const r = openPlain(this.fd, name, true);
      return r.tag === 'ok' ? ok(new Dir(r.val)) : r;
    }
    openFile(name) {
      const r = openPlain(this.fd, name, false);
      return r.tag === 'ok' ? ok(new File(r.val)) : r;
    }
    readLink(name) {
      if (!plainName(name)) return err('other', `'${name}' is not a single path component`);
      return attempt(() => {
        const text = readlinkSync(at(this.fd, name), { encoding: 'buffer' });
        try {
          return ok(utf8.decode(text));
        } catch {
          return err('other', "the link's text is not UTF-8");
        }
      });
    }
    entries() {
      return attempt(() => ok(listing(this.fd).map(({ name, st }) => ({ name, kind: st ? kind(st) : 'other' }))));
    }
    createNew(name, data) {
      const refused = this.change(name);
      if (refused) return refused;
      const path = at(this.fd, name);
      let fd;
      try {
        fd = openSync(path, O_WRONLY | O_CREAT | O_EXCL | OPEN, 0o666);
        for (let done = 0; done < data.length;) done += writeSync(fd, data, done, data.length - done);
        fsyncSync(fd);
      } catch (e) {
        if (fd !== undefined) {
          try { closeSync(fd); } catch { /* closed either way */ }
          try { unlinkSync(path); } catch { /* gone already */ }
        }
        return fsError(e);
      }
      // Written and flushed: a failing close loses nothing and is not retried.
      return attempt(() => ok(closeSync(fd)));
    }
    rename(from, to) {
      const refused = this.change(from) || this.change(to);
      if (refused) return refused;
      return attempt(() => ok(renameSync(at(this.fd, from), at(this.fd, to))));
    }
    unlink(name) {
      return this.change(name) || attempt(() => ok(unlinkSync(at(this.fd, name))));
    }
    mkdir(name) {
      return this.change(name) || attempt(() => ok(mkdirSync(at(this.fd, name), 0o777)));
    }
    rmdir(name) {
      return this.change(name) || attempt(() => ok(rmdirSync(at(this.fd, name))));
    }
    [dispose]() { release(this.fd); }
  }

  return {
    Dir,
    File,
    ...batchedReads(repoFd, allowHardlinks),
    root: () => new Dir(openSync(`/proc/self/fd/${repoFd()}`, O_RDONLY | O_DIRECTORY)),
    /** Closes the repository's descriptor and every one a resource still holds. */
    close() {
      for (const fd of held) release(fd);
      if (rootFd !== undefined) closeSync(rootFd);
      rootFd = undefined;
    },
    /** Copies the permission bits of `from` onto `to` (logical paths), both opened one name
     * at a time without following a link; a target with other names is left alone. */
    copyMode(from, to) {
      if (readOnly) return false;
      try {
        const mode = withRegularFile(repoFd(), from, (fd) => fstatSync(fd).mode);
        if (mode === null) return false;
        return withRegularFile(repoFd(), to, (fd) => {
          if (fstatSync(fd).nlink !== 1) return false;
          fchmodSync(fd, mode & 0o7777);
          return true;
        }) === true;
      } catch {
        return false;
      }
    },
  };
}
