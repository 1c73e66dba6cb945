// `reclib mcp --url URL` (docs/decisions.md §9) from the built bundle: the SDK's stdio client talks to it as
// a desktop assistant would, and it relays to URL/mcp with the key from RECLIB_API_KEY.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { BUNDLE, cleanEnv, ensureBundle, runCli } from '../helpers/bundle';
import { harness } from '../helpers/harness';
import { call, serve, textOf, type Served } from '../helpers/mcp';

function bridgeClient(url: string, key: string): { client: Client; transport: StdioClientTransport; stderr: () => string } {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BUNDLE, 'mcp', '--url', url],
    env: cleanEnv({ RECLIB_API_KEY: key }) as Record<string, string>,
    stderr: 'pipe',
  });
  let err = '';
  transport.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  return { client: new Client({ name: 'reclib-stdio-test', version: '1.0.0' }), transport, stderr: () => err };
}

describe('reclib mcp: the stdio bridge', () => {
  const h = harness();
  const key = h.key();
  let served: Served;
  before(async () => {
    ensureBundle();
    served = await serve(h);
    const res = await h.req('POST', '/api/v2/recordings', { token: key, body: { type: 'memo', title: 'Errands', transcript: 'pick up the parcel at noon' }, headers: { 'idempotency-key': 'stdio-1' } });
    assert.equal(res.status, 201, res.text);
  });
  after(() => served.close());

  it('relays tools/list and tools/call to URL/mcp with the key from RECLIB_API_KEY', async () => {
    const { client, transport } = bridgeClient(served.url, key);
    await client.connect(transport);
    assert.equal(client.getServerVersion()?.name, 'reclib');
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ['search_recordings', 'list_recordings', 'get_recording', 'create_note']);
    const found = await call(client, 'search_recordings', { query: 'parcel' });
    assert.equal(found.structuredContent.recordings[0].title, 'Errands');
    assert.match(textOf(found), /pick up the parcel/);
    const note = await call(client, 'create_note', { text: 'from the desktop assistant' });
    assert.equal(note.structuredContent.recording.transcript, 'from the desktop assistant');
    const missing = await call(client, 'get_recording', { id: 'rec_missing' });
    assert.equal(missing.isError, true);
    await client.close();
  });

  it('a URL that already ends in /mcp is used as it is', async () => {
    const { client, transport } = bridgeClient(`${served.url}/mcp`, key);
    await client.connect(transport);
    assert.equal((await client.listTools()).tools.length, 4);
    await client.close();
  });

  it('exits 0 when stdin closes, after answering what it was sent', async () => {
    const child = spawn(process.execPath, [BUNDLE, 'mcp', '--url', served.url], { env: cleanEnv({ RECLIB_API_KEY: key }) });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    child.stdin.end(
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }) + '\n',
    );
    assert.equal(await exited, 0);
    const [line] = out.trim().split('\n');
    assert.equal(JSON.parse(line!).result.serverInfo.name, 'reclib');
  });

  it('a key the server refuses: the request is answered with an error that says 401, not left waiting', async () => {
    const { client, transport, stderr } = bridgeClient(served.url, 'rlk_refusedByTheServer');
    await assert.rejects(client.connect(transport), /unauthenticated/);
    await client.close();
    assert.match(stderr(), /unauthenticated/);
  });

  it('no server at the URL: the request is answered with an error saying the connection was refused', async () => {
    const gone = await serve(harness());
    await gone.close();
    const { client, transport } = bridgeClient(gone.url, key);
    await assert.rejects(client.connect(transport), /did not take the message: fetch failed \(ECONNREFUSED\)/);
    await client.close();
  });

  it('without RECLIB_API_KEY: exit 2 and a message naming it', async () => {
    const r = await runCli(['mcp', '--url', served.url]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /RECLIB_API_KEY is not set/);
    assert.equal(r.stdout, '', 'stdout carries only protocol');
  });

  it('a URL that is not http(s): exit 2', async () => {
    const r = await runCli(['mcp', '--url', 'ftp://example.org'], { env: { RECLIB_API_KEY: key } });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--url/);
  });
});
