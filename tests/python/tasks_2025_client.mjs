// A client of the 2025-11-25 revision (the official TypeScript SDK) that runs tools as
// tasks against file-tools, over stdio or Streamable HTTP, and prints what it saw as one
// JSON object for the test that runs it (tests/python/test_mcp_tasks_2025.py).
//
// Usage: node tasks_2025_client.mjs SDK_DIR (stdio BIN REPO | http URL)
//        node tasks_2025_client.mjs SDK_DIR approve BIN REPO POLICY
// The second form writes docs/new.md as a task under POLICY (which asks approval for it),
// the client's user accepting after a while.

import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const [sdkDir, transportKind, ...rest] = process.argv.slice(2);
const load = (path) => import(pathToFileURL(join(sdkDir, 'dist/esm', path)).href);
const { Client } = await load('client/index.js');
const { CallToolResultSchema, ElicitRequestSchema } = await load('types.js');

let transport;
if (transportKind === 'http') {
    const { StreamableHTTPClientTransport } = await load('client/streamableHttp.js');
    transport = new StreamableHTTPClientTransport(new URL(rest[0]));
} else {
    const { StdioClientTransport } = await load('client/stdio.js');
    const [bin, repo, policy] = rest;
    const args = ['--repo', repo, ...(policy ? ['--policy', policy] : []), 'mcp'];
    transport = new StdioClientTransport({ command: bin, args, stderr: 'inherit' });
}

// The revision the server answered, as the client hands it to its transport.
let negotiated = null;
const setVersion = transport.setProtocolVersion?.bind(transport);
transport.setProtocolVersion = (version) => {
    negotiated = version;
    setVersion?.(version);
};

const approving = transportKind === 'approve';
const capabilities = approving ? { elicitation: { form: {} } } : {};
const client = new Client({ name: 'tasks-2025', version: '1' }, { capabilities });
const asked = [];
if (approving) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
        asked.push(request.params._meta ?? null);
        // Long enough for a poll to see the task waiting.
        await new Promise((resolve) => setTimeout(resolve, 1200));
        return { action: 'accept', content: { approve: true } };
    });
}
await client.connect(transport);

// What a stream of a task-augmented call yields, in order (results kept whole).
async function streamed(name, args) {
    const seen = [];
    const stream = client.experimental.tasks.callToolStream({ name, arguments: args }, CallToolResultSchema);
    for await (const message of stream) {
        if (message.type === 'taskCreated' || message.type === 'taskStatus') {
            seen.push({ type: message.type, task: message.task });
        } else if (message.type === 'result') {
            seen.push({ type: 'result', result: message.result });
        } else {
            seen.push({ type: message.type, error: String(message.error?.message ?? message.error) });
        }
    }
    return seen;
}

async function settled(promise) {
    try {
        return { ok: await promise };
    } catch (e) {
        return { error: String(e?.message ?? e), code: e?.code };
    }
}

if (approving) {
    await client.listTools();
    const seen = await streamed('write_file', { path: 'docs/new.md', content: 'new\n' });
    await client.close();
    console.log(JSON.stringify({ seen, asked }));
    process.exit(0);
}

const out = {};
out.version = negotiated;
out.capabilities = client.getServerCapabilities();
const listed = await client.listTools();
out.taskSupport = Object.fromEntries(listed.tools.map((t) => [t.name, t.execution?.taskSupport ?? null]));
out.search = await streamed('search_text', { query: 'fn ', include: ['*.rs'] });
out.plain = await client.callTool({ name: 'search_text', arguments: { query: 'fn ', include: ['*.rs'] } });
out.missing = await streamed('read_file', { path: 'no/such/file.txt' });
const missingId = out.missing.find((m) => m.type === 'taskCreated')?.task.taskId;
out.missingResult = await settled(client.experimental.tasks.getTaskResult(missingId, CallToolResultSchema));
out.list = await settled(client.experimental.tasks.listTasks());
out.cancelEnded = await settled(client.experimental.tasks.cancelTask(missingId));
out.unknown = await settled(client.experimental.tasks.getTask('no-such-task'));
await client.close();
console.log(JSON.stringify(out));
