// Mends the glue `jco transpile` writes (gen/file-tools.js, or the file named as the first
// argument): it decodes every string the component passes out with `new TextDecoder()`,
// which drops a byte order mark at the start of a string, so a name beginning with U+FEFF
// reached the host as another name (`\uFEFFnotes.md` opened `notes.md`) and audit events
// and errors lost it. The decoders are made to keep it. Run after every transpile (the
// `transpile` script does); fails when the glue no longer has the decoder it mends.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const file = process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), 'gen', 'file-tools.js');
const KEEP = "new TextDecoder('utf-8', { ignoreBOM: true })";
let glue = readFileSync(file, 'utf8');
const utf8 = glue.split('new TextDecoder()').length - 1;
if (utf8 === 0 && !glue.includes(KEEP)) {
  console.error(`patch-glue: ${file} has no UTF-8 decoder to mend; check what jco writes now`);
  process.exit(1);
}
glue = glue.replaceAll('new TextDecoder()', KEEP)
  .replaceAll("new TextDecoder('utf-16')", "new TextDecoder('utf-16', { ignoreBOM: true })");
writeFileSync(file, glue);
