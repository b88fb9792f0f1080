// The adversarial race section through the Node host. A second process flips links while
// the component reads, and the test prints how often a hidden file's content came back.
// Where the host holds the repository's directories itself (Linux, see host-fs.mjs) the
// answer must be never; through jco's preview2-shim, whose directory descriptors are path
// strings resolved again on every use, the rate is measured, not assumed, and SECURITY.md
// quotes it. Every test also checks that harmless reads succeeded (the positive control).
// Run with `npm test` after `npm run transpile`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs, { existsSync, linkSync, rmSync, mkdirSync, mkdtempSync, readdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { filesystem } from '@bytecodealliance/preview2-shim';
import { tmpdir } from 'node:os';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { openFileTools } from './file-tools.mjs';

const MARK = 'SECRET-VALUE-93ab';
const ROUNDS = 400;

// The line of each second process's loop that tells its count of flips (`n`) every hundred,
// in `dir/.flips`, written whole (by a rename) so that a reader never sees it half-written.
const COUNT_FLIPS = "if (n % 100 === 0) { try { fs.writeFileSync(p.join(dir, '.flips.new'), String(n)); fs.renameSync(p.join(dir, '.flips.new'), p.join(dir, '.flips')); } catch {} }";

// A second process: swaps `name` between a link to `a` and a link to `b`, atomically
// (a new link renamed over the name), until killed.
function flipper(dir, name, a, b) {
  const script = `
    const fs = require('node:fs'); const p = require('node:path');
    const [dir, name, a, b] = process.argv.slice(1);
    const at = p.join(dir, name), tmp = at + '.flip';
    let flip = false, n = 0;
    for (;;) {
      flip = !flip;
      try { fs.rmSync(tmp, { force: true }); fs.symlinkSync(flip ? a : b, tmp); fs.renameSync(tmp, at); n++; } catch {}
      ${COUNT_FLIPS}
    }`;
  return spawn(process.execPath, ['-e', script, dir, name, a, b], { stdio: 'ignore' });
}

function repoWithSecret() {
  const base = mkdtempSync(join(tmpdir(), 'file-tools-race-'));
  const repo = join(base, 'repo');
  mkdirSync(join(repo, 'sub'), { recursive: true });
  writeFileSync(join(repo, 'harmless.txt'), 'harmless words\n');
  writeFileSync(join(repo, '.env'), `API_KEY=${MARK}\n`);
  writeFileSync(join(repo, 'sub', 'inner.txt'), 'inner words\n');
  writeFileSync(join(base, 'outside.txt'), `${MARK} outside\n`);
  return { base, repo };
}

// A second process: renames a regular file and a link to `target` over `name` in turn, so
// that a name the component found to be a file is a link when it opens it.
function fileFlipper(dir, name, target) {
  const script = `
    const fs = require('node:fs'); const p = require('node:path');
    const [dir, name, target] = process.argv.slice(1);
    const at = p.join(dir, name), file = at + '.file', link = at + '.link';
    let n = 0;
    for (;;) {
      try { fs.writeFileSync(file, 'harmless words\\n'); fs.renameSync(file, at); } catch {}
      try { fs.rmSync(link, { force: true }); fs.symlinkSync(target, link); fs.renameSync(link, at); n++; } catch {}
      ${COUNT_FLIPS}
    }`;
  return spawn(process.execPath, ['-e', script, dir, name, target], { stdio: 'ignore' });
}

// How many flips the second process has counted in `dir` (0 before its first hundred).
const flips = (dir) => {
  try {
    return Number(fs.readFileSync(join(dir, '.flips'), 'utf8'));
  } catch {
    return 0;
  }
};

// Makes the call `read` ROUNDS times while `child` runs, once it has flipped a hundred
// times, and on until it has flipped at least a hundred more and `wanted()` holds (up to
// 20 s: a positive control that needs a lucky interleaving gets more tries); counts
// harmless answers, refusals and answers that hold the secret marker.
async function measure(read, child, dir, wanted = () => true) {
  let ok = 0, refused = 0, leaked = 0;
  for (let waited = 0; dir && flips(dir) === 0; waited++) {
    assert.ok(waited < 1000, 'the second process never started flipping');
    await new Promise((r) => setTimeout(r, 10));
  }
  const before = dir ? flips(dir) : 0;
  const until = Date.now() + 20_000;
  const more = () => Date.now() < until && ((dir && flips(dir) <= before) || !wanted());
  let i = 0;
  try {
    for (; i < ROUNDS || more(); i++) {
      try {
        const r = read();
        if (JSON.stringify(r).includes(MARK)) leaked++; else ok++;
      } catch (e) {
        if (JSON.stringify(e).includes(MARK)) leaked++; else refused++;
      }
      // Let the flipper run between calls (the calls themselves are synchronous).
      if (i % 20 === 0) await new Promise((r) => setTimeout(r, 1));
    }
  } finally {
    const exited = child.exitCode !== null ? null : new Promise((r) => child.once('exit', r));
    child.kill();
    await exited;
  }
  if (dir) assert.ok(flips(dir) > before, 'the second process did not flip during the reads');
  return { ok, refused, leaked, rate: (100 * leaked / i).toFixed(1) };
}

for (const hostFs of [true, false]) test(`a link flipped between a harmless file and .env: leak rate under Node (hostFs: ${hostFs})`, async () => {
  const { repo } = repoWithSecret();
  symlinkSync('harmless.txt', join(repo, 'link.txt'));
  const tools = await openFileTools({ repo, hostFs });
  const m = await measure(() => tools.call('read_file', { path: 'link.txt' }), flipper(repo, 'link.txt', 'harmless.txt', '.env'), repo);
  console.log(`node race (link flip, hostFs: ${tools.hostFs}): ${m.ok + m.refused + m.leaked} reads, ${m.ok} harmless, ${m.refused} refused, ${m.leaked} leaked the secret (${m.rate}%)`);
  assert.ok(m.ok > 0, 'no harmless read succeeded: the positive control failed');
  if (tools.hostFs) assert.equal(m.leaked, 0, 'the secret came back through held directories');
});

for (const hostFs of [true, false]) test(`a directory swapped for a link leading outside: leak rate under Node (hostFs: ${hostFs})`, async () => {
  const { base, repo } = repoWithSecret();
  // `dir` flips between a link to the harmless `sub` and a link climbing out of the
  // repository, whose `inner.txt` would be outside.
  mkdirSync(join(base, 'outdir'));
  writeFileSync(join(base, 'outdir', 'inner.txt'), `${MARK} outside\n`);
  symlinkSync('sub', join(repo, 'dir'));
  const tools = await openFileTools({ repo, hostFs });
  const m = await measure(() => tools.call('read_file', { path: 'dir/inner.txt' }), flipper(repo, 'dir', 'sub', '../outdir'), repo);
  console.log(`node race (directory link flip, outside, hostFs: ${tools.hostFs}): ${m.ok + m.refused + m.leaked} reads, ${m.ok} harmless, ${m.refused} refused, ${m.leaked} leaked outside content (${m.rate}%)`);
  assert.ok(m.ok > 0, 'no harmless read succeeded: the positive control failed');
  if (tools.hostFs) assert.equal(m.leaked, 0, 'outside content came back through held directories');
});

// Through the shim every such read is refused (the component finds a new inode at each
// look), so this one runs where the host holds the directories.
test('a file name flipped between a file and a link to .env: no leak (host-held directories)', async (t) => {
  const { repo } = repoWithSecret();
  writeFileSync(join(repo, 'data.txt'), 'harmless words\n');
  const tools = await openFileTools({ repo });
  if (!tools.hostFs) return t.skip('no /proc/self/fd here: the shim serves');
  const m = await measure(() => tools.call('read_file', { path: 'data.txt' }), fileFlipper(repo, 'data.txt', '.env'), repo);
  console.log(`node race (file and link flip, hostFs: ${tools.hostFs}): ${m.ok + m.refused + m.leaked} reads, ${m.ok} harmless, ${m.refused} refused, ${m.leaked} leaked the secret (${m.rate}%)`);
  assert.ok(m.ok > 0, 'no harmless read succeeded: the positive control failed');
  assert.equal(m.leaked, 0, 'the secret came back through held directories');
});

// The host's batched reads under the same flips: a search reads every file it visits in
// one `read-file` call, by its logical path, opened one name at a time without following a
// link. The secret's marker never comes back; the harmless words do (positive control).
async function searchUnderFlips(repo, child, query, expected) {
  rmSync(join(repo, '.flips'), { force: true });
  const tools = await openFileTools({ repo });
  if (!tools.hostFs) {
    child.kill();
    return null;
  }
  let found = 0;
  const m = await measure(() => {
    const r = tools.call('search_text', { query, regex: true });
    if (JSON.stringify(r).includes(`"${expected}"`)) found++;
    return r;
  }, child, repo, () => found > 0);
  return { ...m, found };
}

test('searches while a file name flips to a link to .env and a directory to a link out: no leak (host-held directories)', async (t) => {
  const { base, repo } = repoWithSecret();
  mkdirSync(join(base, 'outdir'));
  writeFileSync(join(base, 'outdir', 'inner.txt'), `${MARK} outside\n`);
  writeFileSync(join(repo, 'data.txt'), 'harmless words\n');
  const query = `${MARK}|words`;
  const byFile = await searchUnderFlips(repo, fileFlipper(repo, 'data.txt', '.env'), query, 'data.txt');
  if (byFile === null) return t.skip('no /proc/self/fd here: the shim serves');
  // `sub` is a real directory, then a link climbing out, in turn: a search that listed it
  // as a directory reads `sub/inner.txt` by that path.
  const byDir = await searchUnderFlips(repo, dirSwapper(repo, 'sub', '../outdir'), query, 'sub/inner.txt');
  console.log(`node race (search, file flip): ${JSON.stringify(byFile)}; (search, directory swap): ${JSON.stringify(byDir)}`);
  for (const m of [byFile, byDir]) {
    assert.equal(m.leaked, 0, 'a search returned the secret or outside content');
    assert.ok(m.found > 0, 'no search found the flipped file while it was harmless: the positive control failed');
  }
});

test('a hard link to a file outside is searched only where the policy allows hard links (host-held directories)', async (t) => {
  const { base, repo } = repoWithSecret();
  linkSync(join(base, 'outside.txt'), join(repo, 'other-name.txt'));
  const plain = await openFileTools({ repo });
  if (!plain.hostFs) return t.skip('no /proc/self/fd here: the shim serves');
  const refused = plain.call('search_text', { query: MARK });
  assert.ok(!JSON.stringify(refused).includes(`${MARK} outside`), JSON.stringify(refused));
  // Positive control: allowed by the policy, the same file is found.
  const allowed = await openFileTools({ repo, policy: { allow_hardlinks: true } });
  assert.ok(JSON.stringify(allowed.call('search_text', { query: MARK })).includes('other-name.txt'));
});

// A directory renamed away and replaced by a link, by a second process, in a loop: the
// attack on a held directory descriptor, which the shim resolves again through the link.
function dirSwapper(dir, name, link) {
  const script = `
    const fs = require('node:fs'); const p = require('node:path');
    const [dir, name, link] = process.argv.slice(1);
    const at = p.join(dir, name), away = at + '.away';
    let n = 0;
    for (;;) {
      try { fs.renameSync(at, away); fs.symlinkSync(link, at); } catch {}
      try { fs.unlinkSync(at); fs.renameSync(away, at); n++; } catch {}
      ${COUNT_FLIPS}
    }`;
  return spawn(process.execPath, ['-e', script, dir, name, link], { stdio: 'ignore' });
}

for (const hostFs of [true, false]) test(`a directory renamed away and replaced by a link climbing out: leak rate under Node (hostFs: ${hostFs})`, async () => {
  const { base, repo } = repoWithSecret();
  mkdirSync(join(base, 'outdir'));
  writeFileSync(join(base, 'outdir', 'inner.txt'), `${MARK} outside\n`);
  const tools = await openFileTools({ repo, hostFs });
  const m = await measure(() => tools.call('read_file', { path: 'sub/inner.txt' }), dirSwapper(repo, 'sub', '../outdir'));
  console.log(`node race (directory renamed away, link out, hostFs: ${tools.hostFs}): ${m.ok + m.refused + m.leaked} reads, ${m.ok} harmless, ${m.refused} refused, ${m.leaked} leaked outside content (${m.rate}%)`);
  assert.ok(m.ok > 0, 'no harmless read succeeded: the positive control failed');
  if (tools.hostFs) assert.equal(m.leaked, 0, 'outside content came back through held directories');
});

// Runs `call` while the shim's `openAt` is hooked: right after the component opens the
// directory `sub` for the first time, `swap` runs, as a second process could at that moment.
function swapAfterOpeningSub(swap, call) {
  const proto = filesystem.types.Descriptor.prototype;
  const inner = proto.openAt;
  // The swap comes after the component opened `sub` and right before it opens the file in
  // it: a look into `sub` for other reasons (the git-shape check of each ancestor) may open
  // it earlier, and the attack is the window between holding `sub` and using it.
  let opened = false;
  let done = false;
  proto.openAt = function (pathFlags, path, openFlags, flags) {
    if (opened && !done && (path.endsWith('inner.txt') || path.includes('new.txt'))) {
      done = true;
      swap();
    }
    const d = inner.call(this, pathFlags, path, openFlags, flags);
    if (path === 'sub' && openFlags.directory) {
      opened = true;
    }
    return d;
  };
  return callHooked(call, () => {
    proto.openAt = inner;
  }, () => done);
}

// Runs `call` (its error as `{ error }`), then `unhook`, and checks that the swap happened.
function callHooked(call, unhook, swapped) {
  try {
    return call();
  } catch (e) {
    return { error: e };
  } finally {
    unhook();
    assert.ok(swapped(), 'the component never opened sub as a directory: the swap did not happen');
  }
}

// `swapAfterOpeningSub` for the host's held directories: the hook is on Node's `openSync`,
// which host-fs.mjs opens every name with.
function swapAfterHostOpensSub(swap, call) {
  const inner = fs.openSync;
  let opened = false;
  let done = false;
  fs.openSync = function (path, flags, ...rest) {
    const p = String(path);
    if (opened && !done && (p.endsWith('/inner.txt') || p.includes('new.txt'))) {
      done = true;
      swap();
    }
    const fd = inner.call(this, path, flags, ...rest);
    if (p.endsWith('/sub') && (flags & fs.constants.O_DIRECTORY)) opened = true;
    return fd;
  };
  syncBuiltinESMExports();
  return callHooked(call, () => {
    fs.openSync = inner;
    syncBuiltinESMExports();
  }, () => done);
}

// The deterministic form of the attack, in all modes: with the shim's descriptors held
// (what a Wasmtime host has) the shim leaks, which shows the swap is the real attack; with
// its path descriptors, and with the directories the host holds itself, nothing hidden
// comes back and nothing is written outside.
for (const descriptors of ['held', 'paths', 'host']) {
  test(`a held directory swapped for a link out of the repository (descriptors: ${descriptors})`, async (t) => {
    const { base, repo } = repoWithSecret();
    mkdirSync(join(base, 'outdir'));
    writeFileSync(join(base, 'outdir', 'inner.txt'), `${MARK} outside\n`);
    const policy = { read: { block: ['private/**'] }, write: { block: ['private/**'] } };
    mkdirSync(join(repo, 'private'));
    writeFileSync(join(repo, 'private', 'inner.txt'), `${MARK} private\n`);
    const hostFs = descriptors === 'host';
    const tools = await openFileTools({ repo, policy, hostFs, ...(hostFs ? {} : { descriptors }) });
    if (hostFs && !tools.hostFs) return t.skip('no /proc/self/fd here: the shim serves');
    const swapAfter = hostFs ? swapAfterHostOpensSub : swapAfterOpeningSub;
    const swapTo = (target) => () => {
      renameSync(join(repo, 'sub'), join(repo, 'sub.away'));
      symlinkSync(target, join(repo, 'sub'));
    };
    const restore = () => {
      if (existsSync(join(repo, 'sub.away'))) {
        renameSync(join(repo, 'sub'), join(repo, 'sub.link'));
        renameSync(join(repo, 'sub.away'), join(repo, 'sub'));
      }
    };
    // Positive control: untouched, the harmless file reads.
    assert.equal(tools.call('read_file', { path: 'sub/inner.txt' }).content, 'inner words\n');

    const results = [];
    for (const target of ['../outdir', 'private']) {
      results.push(swapAfter(swapTo(target), () => tools.call('read_file', { path: 'sub/inner.txt' })));
      restore();
      results.push(swapAfter(swapTo(target), () => tools.call('write_file', { path: 'sub/new.txt', content: 'planted\n' })));
      restore();
    }
    const leaked = results.filter((r) => JSON.stringify(r, (_, v) => (typeof v === 'bigint' ? String(v) : v)).includes(MARK)).length;
    const planted = ['outdir', 'repo/private'].filter((d) => readdirSync(join(base, d)).includes('new.txt'));
    if (hostFs) {
      // The held `sub` is the directory as it was opened: its file is read, not the link's.
      for (const r of [results[0], results[2]]) assert.equal(r.content, 'inner words\n', JSON.stringify(r));
    }
    if (descriptors === 'held') {
      assert.ok(leaked > 0 || planted.length > 0, 'the swap no longer reaches through a held descriptor: this control shows nothing');
    } else {
      assert.equal(leaked, 0, 'hidden content came back through a swapped directory');
      assert.deepEqual(planted, [], 'a write landed outside the checked directory');
    }
    console.log(`node swap after open (${descriptors}): ${leaked} of 2 reads leaked, writes planted in: ${planted.join(', ') || 'nowhere'}`);
  });
}

// Run in a child process with a deadline: an open that waits for a FIFO's writer would
// stop this process's event loop, and with it any timeout of the test itself.
test('a FIFO swapped in for the file being read is refused at once (host-held directories)', (t) => {
  const { repo } = repoWithSecret();
  const script = `
    import fs from 'node:fs';
    import { syncBuiltinESMExports } from 'node:module';
    import { execFileSync } from 'node:child_process';
    import { openFileTools } from ${JSON.stringify(new URL('./file-tools.mjs', import.meta.url).href)};
    const repo = ${JSON.stringify(repo)};
    const tools = await openFileTools({ repo });
    if (!tools.hostFs) { console.log('SKIP'); process.exit(0); }
    const first = tools.call('read_file', { path: 'sub/inner.txt' }).content;
    const inner = fs.openSync;
    let swapped = false;
    fs.openSync = function (path, flags, ...rest) {
      if (!swapped && String(path).endsWith('/inner.txt')) {
        swapped = true;
        fs.unlinkSync(repo + '/sub/inner.txt');
        execFileSync('mkfifo', [repo + '/sub/inner.txt']);
      }
      return inner.call(this, path, flags, ...rest);
    };
    syncBuiltinESMExports();
    let second;
    try { second = tools.call('read_file', { path: 'sub/inner.txt' }); } catch (e) { second = { refused: e.code }; }
    console.log(JSON.stringify({ first, swapped, second }));
  `;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { timeout: 20_000, encoding: 'utf8' });
  assert.equal(run.signal, null, 'the read of a FIFO swapped in blocked until killed');
  assert.equal(run.status, 0, run.stderr);
  if (run.stdout.trim() === 'SKIP') return t.skip('no /proc/self/fd here: the shim serves');
  const out = JSON.parse(run.stdout);
  // Positive control before the swap; then the swap happened and the read was refused.
  assert.equal(out.first, 'inner words\n');
  assert.ok(out.swapped, 'the component never opened sub/inner.txt');
  assert.ok(out.second.refused, `a FIFO was read: ${JSON.stringify(out.second)}`);
});

test('FIFO swap and directory exchange through the shim', { skip: 'preview2-shim has no non-blocking open (a FIFO swapped in would block the test process) and Node has no renameat2 RENAME_EXCHANGE; both are covered through the Wasmtime host' }, () => {});
