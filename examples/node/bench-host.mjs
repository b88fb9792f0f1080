// Start-up and per-call costs of the Node host, printed as rows of the benchmark table
// (`FILE_TOOLS_BENCH=hosts bash scripts/bench.sh`, beside the Rust host's overhead rows).
//
//   node bench-host.mjs FILES_DIR
//
// Uses the transpiled component in ./gen. "First open" is the process's first (it compiles
// the core modules); "second open" another instance in the same process. The warm calls
// run with the directories the host holds itself (Linux) and through preview2-shim's WASI.
// No audit listener.
import { openFileTools } from './file-tools.mjs';

const repo = process.argv[2];
const p50 = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
function timed(n, f) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    f();
    out.push(performance.now() - t);
  }
  return out;
}

const rows = [];
let t = performance.now();
let tools = await openFileTools({ repo });
tools.call('file_info', { path: '1k.txt' });
rows.push(['first open in a process (compiles), open + file_info', performance.now() - t]);
t = performance.now();
tools = await openFileTools({ repo });
tools.call('file_info', { path: '1k.txt' });
rows.push(['second open in the same process, open + file_info', performance.now() - t]);
for (const hostFs of [true, false]) {
  tools = await openFileTools({ repo, hostFs });
  const how = tools.hostFs ? 'held directories' : 'through the shim';
  const refused = () => {
    try {
      tools.call('read_file', { path: '../x' });
    } catch {
      // the refusal is the call being measured
    }
  };
  rows.push([`warm trivial call (a refused read), ${how}`, p50(timed(300, refused))]);
  rows.push([`warm file_info of a 1 KB file, ${how}`, p50(timed(300, () => tools.call('file_info', { path: '1k.txt' })))]);
  rows.push([`warm read_file of a 1 KB file, ${how}`, p50(timed(300, () => tools.call('read_file', { path: '1k.txt' })))]);
  rows.push([`warm read_file of a 300 KB file, ${how}`, p50(timed(50, () => tools.call('read_file', { path: '300k.txt' })))]);
}

console.log('\n## Node host (jco + preview2-shim, no audit listener)\n');
console.log('| measure | figure |');
console.log('|---|---|');
for (const [label, ms] of rows) {
  console.log(`| ${label} | ${ms >= 10 ? `${ms.toFixed(1)} ms` : `${(ms * 1000).toFixed(0)} µs`} |`);
}
