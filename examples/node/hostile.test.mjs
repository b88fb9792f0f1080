// Hostile repository content that only the Node host's file system would misread:
// preview2-shim takes every `\` in a path for `/` and resolves `..` by text, and it
// resolves the preopen itself again on every call. Each test runs through the shim
// (`hostFs: false`) and through the directories the host holds itself on Linux (where a
// `\` is an ordinary byte of a name, as under Wasmtime). Each refusal stands beside a
// positive control. Run with `npm test` after `npm run transpile`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openFileTools } from './file-tools.mjs';

const MARK = 'SECRET-VALUE-5c1e';
const GIT_CONFIG = '[core]\n\tbare = false\n';

function hostileRepo() {
  const base = mkdtempSync(join(tmpdir(), 'file-tools-hostile-'));
  const repo = join(base, 'repo');
  mkdirSync(join(repo, '.git'), { recursive: true });
  mkdirSync(join(repo, 'private'));
  writeFileSync(join(repo, 'harmless.txt'), 'harmless words\n');
  writeFileSync(join(repo, '.env'), `API_KEY=${MARK}\n`);
  writeFileSync(join(repo, 'private', 'plan.txt'), `${MARK} plan\n`);
  writeFileSync(join(repo, '.git', 'config'), GIT_CONFIG);
  return { base, repo };
}

const policy = { read: { block: ['private/**'] }, write: { block: ['private/**'] } };
const text = (v) => JSON.stringify(v ?? null, (_, x) => (typeof x === 'bigint' ? String(x) : x));

// Runs a call and returns its result or its error, never throwing.
function attempt(fn) {
  try {
    return { ok: fn() };
  } catch (e) {
    return { error: e };
  }
}

for (const hostFs of [false, true]) test(`backslashes in link texts never reach .env, .git or a blocked file (hostFs: ${hostFs})`, async (t) => {
  const { repo } = hostileRepo();
  symlinkSync('x\\..\\.env\\.', join(repo, 'l_env'));
  symlinkSync('x\\..\\.git\\config', join(repo, 'l_git'));
  symlinkSync('x\\..\\private\\plan.txt', join(repo, 'l_blocked'));
  symlinkSync('harmless.txt', join(repo, 'l_ok'));
  const tools = await openFileTools({ repo, policy, hostFs });
  if (hostFs && !tools.hostFs) return t.skip('no /proc/self/fd here: the shim serves');
  // Positive control: a plain link inside is followed.
  assert.equal(tools.call('read_file', { path: 'l_ok' }).content, 'harmless words\n');
  for (const path of ['l_env', 'l_git', 'l_blocked']) {
    const r = attempt(() => tools.call('read_file', { path }));
    assert.ok(r.error, `${path} was read: ${text(r.ok)}`);
    // Through the shim a `\` link is refused; held directories read its text as one name,
    // which names nothing here.
    assert.equal(r.error.code, hostFs ? 'NOT_FOUND' : 'PATH_REJECTED', `${path}: ${r.error.message}`);
    assert.ok(!text(r).includes(MARK) && !text(r).includes('bare = false'), `${path} leaked`);
  }
  // Writing through the link to .git/config (code execution at the next git command).
  const page = attempt(() => tools.call('edit_file', { path: 'l_git', edits: [{ old_text: 'bare = false', new_text: 'fsmonitor = pwned' }] }));
  assert.ok(page.error, 'edit through a backslash link succeeded');
  assert.equal(readFileSync(join(repo, '.git', 'config'), 'utf8'), GIT_CONFIG);
  // Positive control for the edit: the same edit on a harmless file works.
  const h = tools.call('read_file', { path: 'harmless.txt' });
  tools.call('edit_file', { path: 'harmless.txt', expected_sha256: h.sha256, edits: [{ old_text: 'harmless', new_text: 'edited' }] });
  assert.equal(readFileSync(join(repo, 'harmless.txt'), 'utf8'), 'edited words\n');
});

for (const hostFs of [false, true]) test(`files and directories named with backslashes are passed over or plain names, and walks end (hostFs: ${hostFs})`, async (t) => {
  const { repo } = hostileRepo();
  writeFileSync(join(repo, 'b\\..\\.env\\.'), 'decoy\n');
  writeFileSync(join(repo, 'c\\..\\private\\plan.txt'), 'decoy\n');
  // To the shim, `d\..` is the root again: a walk into it would never end.
  mkdirSync(join(repo, 'd\\..'));
  mkdirSync(join(repo, 'src'));
  writeFileSync(join(repo, 'src', 'found.txt'), `${MARK.slice(0, 6)} visible\n`);
  const tools = await openFileTools({ repo, policy, hostFs });
  if (hostFs && !tools.hostFs) return t.skip('no /proc/self/fd here: the shim serves');
  const started = Date.now();
  const search = tools.call('search_text', { query: 'SECRET' });
  const found = tools.call('find_files', { patterns: ['**/*.txt'] });
  const listed = tools.call('list_dir', { path: '.', max_depth: 4 });
  assert.ok(Date.now() - started < 20_000, 'the walks took too long');
  // Positive control: the visible file is found and searched.
  assert.deepEqual(search.files.map((f) => f.path), ['src/found.txt']);
  assert.ok(found.paths.includes('src/found.txt') && found.paths.includes('harmless.txt'));
  for (const out of [search, found, listed]) {
    assert.ok(!text(out).includes(MARK + '\n') && !text(out).includes('API_KEY') && !text(out).includes(`${MARK} plan`), text(out));
  }
  if (hostFs) {
    // Ordinary names to held directories: the decoys are listed as what they are.
    assert.ok(found.paths.includes('c\\..\\private\\plan.txt'), text(found));
  } else {
    assert.ok(!text(found).includes('plan'), text(found));
    assert.ok(!listed.entries.some((e) => e.path.includes('\\')), text(listed.entries));
  }
});

for (const hostFs of [false, true]) test(`a repository renamed away and replaced by a link is noticed or still held (hostFs: ${hostFs})`, async (t) => {
  const { base, repo } = hostileRepo();
  const elsewhere = join(base, 'elsewhere');
  mkdirSync(elsewhere);
  writeFileSync(join(elsewhere, 'notes.txt'), `${MARK} outside\n`);
  const tools = await openFileTools({ repo, policy, hostFs });
  if (hostFs && !tools.hostFs) return t.skip('no /proc/self/fd here: the shim serves');
  // Positive control before the swap.
  assert.equal(tools.call('read_file', { path: 'harmless.txt' }).content, 'harmless words\n');
  renameSync(repo, join(base, 'repo.away'));
  symlinkSync(elsewhere, repo);
  for (const [tool, args] of [
    ['read_file', { path: 'notes.txt' }],
    ['list_dir', { path: '.' }],
    ['search_text', { query: 'SECRET' }],
    ['write_file', { path: 'planted.txt', content: 'written outside\n' }],
  ]) {
    const r = attempt(() => tools.call(tool, args));
    // The shim resolves the preopen's path again and must notice; held directories go on
    // in the repository as it was opened (now `repo.away`).
    if (!hostFs) assert.ok(r.error, `${tool} worked in the swapped-in tree: ${text(r.ok)}`);
    if (hostFs && tool === 'list_dir') assert.ok(text(r.ok).includes('harmless.txt'), text(r));
    assert.ok(!text(r).includes(MARK), `${tool} leaked the outside content`);
    if (tool !== 'read_file') assert.ok(!text(r).includes('notes.txt'), `${tool} named an outside file`);
  }
  assert.ok(!existsSync(join(elsewhere, 'planted.txt')), 'a file was written outside');
  assert.equal(existsSync(join(base, 'repo.away', 'planted.txt')), hostFs);
});

test('names with a BOM, names that are not UTF-8 and a FIFO, through the held directories', { timeout: 60_000 }, async (t) => {
  const { repo } = hostileRepo();
  mkdirSync(join(repo, 'docs'));
  writeFileSync(join(repo, 'docs', 'notes.md'), 'plain notes\n');
  writeFileSync(join(repo, 'docs', '\uFEFFnotes.md'), 'notes behind a BOM\n');
  // A name whose bytes are not UTF-8, and a FIFO nobody writes to.
  writeFileSync(Buffer.concat([Buffer.from(join(repo, 'docs') + '/'), Buffer.from([0x66, 0xff, 0x2e, 0x6d, 0x64])]), 'not utf-8\n');
  execFileSync('mkfifo', [join(repo, 'docs', 'pipe.md')]);
  const tools = await openFileTools({ repo, policy });
  if (!tools.hostFs) return t.skip('no /proc/self/fd here: the shim serves');
  const listed = tools.call('list_dir', { path: 'docs' });
  const sizes = Object.fromEntries(listed.entries.map((e) => [e.path, e.size]));
  // Both names, each with its own file's size; the other entries listed beside them.
  assert.equal(sizes['docs/notes.md'], 'plain notes\n'.length, text(listed));
  assert.equal(sizes['docs/\uFEFFnotes.md'], 'notes behind a BOM\n'.length, text(listed));
  assert.ok('docs/pipe.md' in sizes, text(listed));
  // A search reads each by its own name, passes over the FIFO without waiting on it, and
  // does not stop at the name it cannot spell.
  const found = tools.call('search_text', { query: 'notes' });
  assert.deepEqual(found.files.map((f) => f.path).sort(), ['docs/notes.md', 'docs/\uFEFFnotes.md'], text(found));
  assert.equal(tools.call('read_file', { path: 'docs/\uFEFFnotes.md' }).content, 'notes behind a BOM\n');
});
