// The Node host reads, edits and is refused an escape, through the real component.
// Run with `npm test` after `npm run transpile`.

import { test, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, writeFileSync, symlinkSync, readdirSync, statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openFileTools, ToolError } from './file-tools.mjs';

const DEMO = join(dirname(fileURLToPath(import.meta.url)), '..', 'demo-repo');
let base;
let repo;

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'file-tools-node-'));
  repo = join(base, 'repo');
  cpSync(DEMO, repo, { recursive: true });
  writeFileSync(join(base, 'outside.txt'), 'outside\n');
});

const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');

function tree(root) {
  const out = {};
  const walk = (dir) => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else out[relative(root, p)] = sha256(readFileSync(p));
    }
  };
  walk(root);
  return out;
}

test('reads, edits with expected_sha256 and reports audit events', async () => {
  const events = [];
  const tools = await openFileTools({ repo, onAudit: (e) => events.push(e) });
  const page = tools.call('read_file', { path: 'src/lib.rs' });
  assert.equal(page.content, readFileSync(join(repo, 'src/lib.rs'), 'utf8'));
  assert.equal(page.sha256, sha256(readFileSync(join(repo, 'src/lib.rs'))));

  const first = page.content.split('\n')[0];
  tools.call('edit_file', {
    path: 'src/lib.rs',
    expected_sha256: page.sha256,
    edits: [{ old_text: first, new_text: `${first} // from node` }],
  });
  assert.equal(readFileSync(join(repo, 'src/lib.rs'), 'utf8').split('\n')[0], `${first} // from node`);

  assert.throws(
    () => tools.call('write_file', { path: 'src/lib.rs', content: 'x\n', expected_sha256: page.sha256 }),
    (e) => e instanceof ToolError && e.code === 'WRITE_CONFLICT' && e.path === 'src/lib.rs',
  );
  assert.deepEqual(events.map((e) => e.tool), ['read_file', 'edit_file', 'write_file']);
  assert.deepEqual(events[1].pathsWritten, ['src/lib.rs']);
  assert.equal(events[2].errorCode, 'WRITE_CONFLICT');
});

test('escapes are refused and nothing changes', async () => {
  const tools = await openFileTools({ repo });
  const before = tree(repo);
  symlinkSync(join(base, 'outside.txt'), join(repo, 'link'));
  for (const [tool, args] of [
    ['read_file', { path: '../outside.txt' }],
    ['read_file', { path: '/etc/passwd' }],
    ['read_file', { path: 'link' }],
    ['write_file', { path: '../outside.txt', content: 'pwned\n' }],
    ['write_file', { path: 'link', content: 'pwned\n' }],
  ]) {
    assert.throws(() => tools.call(tool, args), (e) => e instanceof ToolError && e.code === 'PATH_REJECTED', `${tool} ${JSON.stringify(args)}`);
  }
  assert.equal(readFileSync(join(base, 'outside.txt'), 'utf8'), 'outside\n');
  const after = tree(repo);
  delete after.link;
  assert.deepEqual(after, before);
});

test('a read-only host offers no mutation tools and writes nothing', async () => {
  const tools = await openFileTools({ repo, readOnly: true });
  const names = tools.describe().map((t) => t.name);
  assert.ok(names.includes('read_file'));
  assert.ok(!names.includes('write_file'));
  const before = tree(repo);
  assert.throws(() => tools.call('write_file', { path: 'new.txt', content: 'x\n' }), ToolError);
  assert.deepEqual(tree(repo), before);
});

test('the approval callback decides on changes the policy marks', async () => {
  const asked = [];
  const policy = { approval: { delete: true } };
  const no = await openFileTools({ repo, policy, approve: (r) => { asked.push(r); return false; } });
  const { sha256 } = no.call('read_file', { path: 'src/lib.rs' });
  assert.throws(() => no.call('delete_file', { path: 'src/lib.rs', expected_sha256: sha256 }), (e) => e.code === 'APPROVAL_REQUIRED');
  assert.ok(statSync(join(repo, 'src/lib.rs')).isFile());
  assert.deepEqual(asked[0].reasons, ['deletes src/lib.rs']);
  const yes = await openFileTools({ repo, policy, approve: () => true });
  yes.call('delete_file', { path: 'src/lib.rs', expected_sha256: sha256 });
  assert.throws(() => statSync(join(repo, 'src/lib.rs')));
});

test('opening leaves no trace of its stand-in for WebAssembly.promising, also when opens overlap', async () => {
  const had = WebAssembly.promising;
  const opened = await Promise.all([1, 2, 3].map(() => openFileTools({ repo: DEMO, readOnly: true })));
  for (const tools of opened) assert.ok(tools.call('file_info', { path: 'README.md' }).size > 0);
  assert.equal(WebAssembly.promising, had);
});

test('close releases every descriptor the host holds, and later calls are refused', async (t) => {
  const count = () => readdirSync('/proc/self/fd').length;
  const first = await openFileTools({ repo: DEMO, readOnly: true });
  if (!first.hostFs) return t.skip('no /proc/self/fd here: the shim serves');
  first.close();
  const before = count();
  for (let i = 0; i < 50; i++) {
    const tools = await openFileTools({ repo: DEMO, readOnly: true });
    // Positive control: held directories serve the calls (and hold descriptors meanwhile).
    assert.ok(tools.hostFs && tools.call('list_dir', { path: 'src' }).entries.length > 0);
    const during = count();
    tools.close();
    assert.ok(count() < during, 'close released nothing');
    assert.throws(() => tools.call('file_info', { path: 'README.md' }), /closed/);
  }
  // Other tests' instances, collected meanwhile, may have released theirs too.
  assert.ok(count() <= before, `descriptors were left open: ${count()} > ${before}`);
});
