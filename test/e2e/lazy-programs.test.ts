// The MCP SDK and prom-client are programs of their own in the bundle (build.mjs, LAZY_PROGRAMS):
// the server's and the writer thread's programs hold none of their text, and a server from the
// bundle loads each, with its own code cache, when it is first needed: the SDK at the first MCP
// request, prom-client at a start with a metrics token. A failed load of the SDK is tried again.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, it } from 'node:test';
import { cliJson, ensureBundle, installCopy, ROOT, startServe } from '../helpers/bundle';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-lazy-programs-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** POSTs one JSON-RPC message to a server's /mcp with `key`: the status and the parsed answer. */
async function mcp(url: string, key: string, body: unknown) {
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as { result?: Record<string, any> } }; // eslint-disable-line @typescript-eslint/no-explicit-any -- JSON-RPC results vary
}

/** Text found only in each library: a class of zod (which only the SDK uses), a metric of prom-client's default collectors. */
const MARKS = { 'mcp-sdk.program.cjs': 'ZodError', 'prom-client.program.cjs': 'process_cpu_user_seconds_total' };

it('the programs a start reads hold none of the MCP SDK or prom-client; their own programs do', () => {
  ensureBundle();
  const text = (name: string) => fs.readFileSync(path.join(ROOT, 'dist', name), 'utf8');
  for (const [name, mark] of Object.entries(MARKS)) {
    assert.ok(text(name).includes(mark), `${name} lacks ${mark}`);
    for (const start of ['reclib.program.cjs', 'writer-thread-worker.program.cjs']) assert.ok(!text(start).includes(mark), `${start} holds ${mark}`);
  }
});

it('a server that answers no MCP request and has no metrics token loads neither program', async (t) => {
  const cache = path.join(dir, 'code-cache-plain');
  const server = await startServe(['--host', '127.0.0.1', '--db', path.join(dir, 'plain.db')], { env: { NODE_COMPILE_CACHE: cache } });
  t.after(() => server.stop('SIGKILL'));
  assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
  assert.equal((await fetch(`${server.url}/api/v2/recordings`)).status, 401);
  // The writer thread starts ~250 ms after the server: both threads' programs are loaded by then.
  await new Promise((resolve) => setTimeout(resolve, 600));
  // Each program loaded writes its cache at exit: the two starts' programs, and no other.
  assert.equal(await server.stop('SIGTERM'), 0);
  // (On Node 22 and later the folder also holds Node's own compile cache, in a folder of its own.)
  const programs = fs.readdirSync(cache).filter((f) => f.includes('.program.cjs-')).map((f) => f.slice(0, f.indexOf('.program.cjs-')));
  assert.deepEqual(programs.sort(), ['reclib', 'writer-thread-worker']);
});

it('a server from the bundle answers MCP and /metrics, and keeps each program\'s code cache', async (t) => {
  const db = path.join(dir, 'reclib.db');
  const cache = path.join(dir, 'code-cache');
  const metricsToken = 'metrics-token-for-the-lazy-programs-test';
  const account = (await cliJson(['accounts', 'create', '--db', db, '--name', 'owner'])).account.id as string;
  const key = (await cliJson(['keys', 'create', '--db', db, '--account', account, '--name', 'assistant', '--permissions', 'recordings:read,recordings:create'])).secret as string;
  const server = await startServe(['--host', '127.0.0.1', '--db', db, '--metrics-token', metricsToken], { env: { NODE_COMPILE_CACHE: cache } });
  t.after(() => server.stop('SIGKILL'));
  const init = await mcp(server.url, key, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'e2e', version: '1' } } });
  assert.equal(init.status, 200);
  assert.equal(init.json.result?.serverInfo.name, 'reclib');
  const listed = await mcp(server.url, key, { jsonrpc: '2.0', id: 2, method: 'tools/list' });
  assert.deepEqual(listed.json.result?.tools.map((tool: { name: string }) => tool.name), ['search_recordings', 'list_recordings', 'get_recording', 'create_note']);

  // create_note writes: on the writer thread, which loads the SDK's program too when the call is forwarded to it.
  const note = await mcp(server.url, key, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'create_note', arguments: { text: 'from an assistant, through the bundle' } } });
  assert.equal(note.json.result?.structuredContent.recording.transcript, 'from an assistant, through the bundle');

  const metrics = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } });
  const exposition = await metrics.text();
  assert.equal(metrics.status, 200, exposition);
  assert.match(exposition, /^reclib_http_requests_total\{.*route="\/mcp".*\} 3$/m);
  assert.match(exposition, /^process_cpu_user_seconds_total /m);

  // A program's cache is written at exit when the process ends before the cache's timer.
  assert.equal(await server.stop('SIGTERM'), 0);
  const files = fs.readdirSync(cache);
  for (const name of ['reclib.program.cjs', ...Object.keys(MARKS)]) assert.ok(files.some((f) => f.startsWith(`${name}-`)), `no cache of ${name}: ${files.join(' ')}`);
});

it('an MCP request while the SDK\'s program cannot be read fails alone: the next one loads it', async (t) => {
  // A copy of the install, so that its dist/ can lose a file.
  const copy = installCopy(path.join(dir, 'install'));
  const db = path.join(dir, 'retry.db');
  const account = (await cliJson(['accounts', 'create', '--db', db, '--name', 'owner'])).account.id as string;
  const key = (await cliJson(['keys', 'create', '--db', db, '--account', account, '--name', 'assistant', '--permissions', 'recordings:read'])).secret as string;
  const server = await startServe(['--host', '127.0.0.1', '--db', db], { bundle: path.join(copy, 'reclib.cjs'), env: { NODE_COMPILE_CACHE: path.join(dir, 'code-cache-retry') } });
  t.after(() => server.stop('SIGKILL'));
  const list = async () => (await mcp(server.url, key, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).status;
  const program = path.join(copy, 'mcp-sdk.program.cjs');
  fs.renameSync(program, `${program}.away`);
  assert.equal(await list(), 500);
  fs.renameSync(`${program}.away`, program);
  assert.equal(await list(), 200);
});
