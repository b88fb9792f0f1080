// A Node.js host for the file-tools component, on `jco transpile` output and
// @bytecodealliance/preview2-shim.
//
//   import { openFileTools } from './file-tools.mjs';
//   const tools = await openFileTools({ repo: '/path/to/repo', onAudit: console.log });
//   const page = tools.call('read_file', { path: 'src/lib.rs' });
//
// `call` drives every tool with plain JSON through the component's own dispatch; a refusal
// throws a ToolError whose `code` is the machine-readable code (PATH_REJECTED, ...).
// The component must first be transpiled into ./gen (see package.json's `transpile`).

import { readFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WASIShim } from '@bytecodealliance/preview2-shim/instantiation';
import { hostDirs } from './host-fs.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));

/** A tool's refusal, with the code in SCREAMING_SNAKE_CASE as in the CLI and MCP. */
export class ToolError extends Error {
  constructor(err) {
    const code = String(err.code).toUpperCase().replaceAll('-', '_');
    super(`${code}: ${err.message}`);
    this.name = 'ToolError';
    this.code = code;
    this.path = err.path ?? null;
    this.details = Object.fromEntries((err.details ?? []).map((d) => [d.key, d.value]));
  }
}

function unwrap(fn) {
  try {
    return JSON.parse(fn());
  } catch (e) {
    // jco throws a ComponentError whose payload is the WIT `tool-error` record.
    if (e && e.payload && e.payload.code !== undefined) throw new ToolError(e.payload);
    throw e;
  }
}

/**
 * wasi-libc asks for `mutate-directory` on every writable open, files included, and
 * preview2-shim refuses that flag with `unsupported`, so no write could succeed. Node's
 * file opens never need it: clear it unless a directory is being opened.
 */
function allowFileWrites(types) {
  const proto = types.Descriptor.prototype;
  if (proto.openAt.fileToolsPatched) return;
  const openAt = proto.openAt;
  const patched = function (pathFlags, path, openFlags, descriptorFlags) {
    const flags = openFlags.directory ? descriptorFlags : { ...descriptorFlags, mutateDirectory: false };
    return openAt.call(this, pathFlags, path, openFlags, flags);
  };
  patched.fileToolsPatched = true;
  proto.openAt = patched;
}

/**
 * Runs `instantiate` so that its probes for JS promise integration cost nothing. jco's glue
 * tries `WebAssembly.promising(export)` for every export and falls back to the export
 * itself when that throws; where the runtime lacks it (Node 20, 22), each TypeError makes
 * V8 parse the glue's whole instantiation function again to name the failed callee, about
 * 12 ms each, 150 ms per open. For the duration of the call, `WebAssembly.promising` is a
 * function that throws one error made in advance, so the fallback is taken at once; the
 * runtime's own `promising`, where it has one, is never replaced.
 */
/** The held directories of instances collected without `close`, released then. */
const UNCLOSED = new FinalizationRegistry((held) => held.close());

const NO_PROMISING = new TypeError('WebAssembly.promising is not offered by this runtime');
const noPromising = () => {
  throw NO_PROMISING;
};
let stubbed = 0; // instantiations under way with the stand-in
async function withoutPromisingErrors(instantiate) {
  if (stubbed === 0) {
    if (WebAssembly.promising !== undefined) return instantiate();
    try {
      WebAssembly.promising = noPromising;
    } catch {
      return instantiate(); // frozen globals: the slow way
    }
  }
  stubbed++;
  try {
    return await instantiate();
  } finally {
    if (--stubbed === 0) delete WebAssembly.promising;
  }
}

/**
 * The component's core modules, compiled once per process: every later instance (another
 * repository, another policy) starts without compiling again.
 */
const COMPILED = new Map();
function compiledModule(path) {
  if (!COMPILED.has(path)) {
    const compiling = readFile(path).then((bytes) => WebAssembly.compile(bytes));
    // A failed compilation is not kept: the next open tries again.
    compiling.catch(() => COMPILED.delete(path));
    COMPILED.set(path, compiling);
  }
  return COMPILED.get(path);
}

/**
 * Instantiates the component over one repository.
 *
 * `repo` becomes the component's only preopen, at `/`. preview2-shim has no read-only
 * preopen, so `readOnly` is enforced by the component's policy (the mutation tools are not
 * even offered). `onAudit` receives every audit event. `approve(request)` decides on
 * changes the policy's `approval` rules mark; without it they are refused with
 * APPROVAL_REQUIRED.
 *
 * On Linux the host holds the repository's directories itself (`host-fs.dir`, see
 * host-fs.mjs): every file access of the component is one name relative to a held
 * descriptor, links never followed, FIFOs never waited on, and no call goes through the
 * shim's worker thread. `hostFs: false`, and systems without `/proc/self/fd`, leave file
 * access to the WASI shim (`hostFs: 'require'` refuses to open there instead). The
 * returned `hostFs` says which one serves.
 *
 * `descriptors` tells the component what the shim's directory descriptors are. preview2-shim
 * keeps every descriptor but the preopen as a path string that it resolves again on each
 * use, so the default, `'paths'`, makes the component name every path from the preopen and
 * check each directory's identity again after using it. `'held'` (what Wasmtime hosts have)
 * is there only for the tests that show why.
 */
export async function openFileTools({ repo, readOnly = false, policy = {}, onAudit, approve, descriptors = 'paths', hostFs = true, generated = join(HERE, 'gen') }) {
  const { instantiate } = await import(join(generated, 'file-tools.js'));
  const effective = { ...policy, ...(readOnly ? { read_only: true } : {}) };
  const real = realpathSync(repo);
  const held = hostFs ? hostDirs(real, readOnly, effective.allow_hardlinks === true) : null;
  if (hostFs === 'require' && !held) {
    throw new Error('hostFs: this system gives no /proc/self/fd to hold the repository by');
  }
  const shim = new WASIShim({
    sandbox: {
      preopens: { '/': real },
      env: {
        FILE_TOOLS_POLICY: JSON.stringify(effective),
        FILE_TOOLS_DESCRIPTORS: descriptors,
        // Without a listener the component builds and sends no audit events at all.
        ...(onAudit ? {} : { FILE_TOOLS_AUDIT: 'off' }),
      },
    },
  });
  const wasi = shim.getImportObject();
  allowFileWrites(wasi['wasi:filesystem/types']);
  const imports = {
    ...wasi,
    'agent:file-tools/audit': {
      emit(event) {
        if (onAudit) onAudit({ ...event, errorCode: event.errorCode?.toUpperCase().replaceAll('-', '_') });
      },
    },
    'agent:file-tools/approval': {
      request(change) {
        if (!approve) return false;
        try {
          return Boolean(approve(change));
        } catch {
          return false; // an approver's bug must never write files
        }
      },
    },
    // Without held directories, preview2-shim can change no permission bits either:
    // saying "not copied" lets the write go on, as the interface allows. The batched reads
    // are an optimisation: answering `undefined` (none) makes the component read through
    // the directories it holds. Without held directories `root` answers none and the
    // resource classes exist only because the interface names them.
    'agent:file-tools/host-fs': { copyMode: () => false, readDir: () => undefined,
      readDirStat: () => undefined, readFile: () => undefined, treeChanges: () => undefined,
      treeChangedDirs: () => undefined,
      sha256: (data) => new Uint8Array(createHash('sha256').update(data).digest()),
      root: () => undefined, Dir: class Dir {}, File: class File {}, ...(held ?? {}) },
    // Progress reports of long calls: this host shows none.
    'agent:file-tools/progress': { report: () => {} },
    'agent:file-tools/types': {},
  };
  const root = await withoutPromisingErrors(() => instantiate((name) => compiledModule(join(generated, name)), imports));
  const tools = root.tools;
  let closed = false;
  const open = (fn) => {
    if (closed) throw new Error('this file-tools instance is closed');
    return unwrap(fn);
  };
  const handle = {
    /** Runs `tool` with JSON-able `args` and returns its result object. */
    call: (tool, args = {}) => open(() => tools.call(tool, JSON.stringify(args))),
    /** Every tool offered under this policy: name, description, JSON Schema, annotations. */
    describe: () => open(() => tools.describe()),
    /** True when the host's held directories serve every file access (see `hostFs`). */
    hostFs: held !== null,
    /** Releases the directories the host holds; later calls throw. Optional: an instance
     * that is collected unclosed releases them then. */
    close() {
      if (closed) return;
      closed = true;
      UNCLOSED.unregister(handle);
      held?.close();
    },
  };
  if (held) UNCLOSED.register(handle, held, handle);
  return handle;
}
