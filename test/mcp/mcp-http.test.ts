// The MCP endpoint (docs/decisions.md §9) through the SDK's own client over a real socket: the tools, their
// schemas, text and structuredContent, isError for permissions and ids, credentials and rate limit.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { harness, type Harness } from '../helpers/harness';
import { serveInProcess } from '../helpers/in-process-server';
import { call, mcpClient, serve, textOf, type Served } from '../helpers/mcp';
import { v1Created, v1Put } from '../helpers/v1-client';

const DAY = 86_400_000;
const MAY_1 = Date.UTC(2026, 4, 1, 9, 30);

let idem = 0;
async function create(h: Harness, token: string, body: Record<string, unknown>): Promise<string> {
  const res = await h.req('POST', '/api/v2/recordings', { token, body, headers: { 'idempotency-key': `t-${++idem}` } });
  assert.equal(res.status, 201, res.text);
  return res.json.recording.id;
}

const v2Get = async (h: Harness, token: string, id: string) => (await h.req('GET', `/api/v2/recordings/${id}`, { token })).json.recording;

describe('MCP tools over Streamable HTTP', () => {
  const h = harness();
  const key = h.key();
  let served: Served;
  const ids: Record<string, string> = {};

  before(async () => {
    served = await serve(h);
    ids.old = await create(h, key, { type: 'memo', title: 'Groceries', transcript: 'Remember to buy milk and eggs.', recordedAt: MAY_1 - 10 * DAY });
    ids.clip = await create(h, key, { type: 'clip', title: 'Standup', transcript: 'Meeting notes: the milk supplier called.', recordedAt: MAY_1 });
    ids.long = await create(h, key, {
      type: 'memo',
      title: 'Long walk',
      transcript: `${'We walked along the river and talked about nothing much at all. '.repeat(6)}Then Zoë mentioned the café on the corner. ${'The end. '.repeat(20)}`,
      recordedAt: MAY_1 + DAY,
    });
  });
  after(() => served.close());

  it('lists the four tools of §9 with input schemas an assistant can fill and an output schema each', async () => {
    const client = await mcpClient(served.url, key);
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ['search_recordings', 'list_recordings', 'get_recording', 'create_note']);
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    const props = (name: string) => byName[name]!.inputSchema.properties as Record<string, { description?: string; minimum?: number; maximum?: number; default?: unknown; enum?: unknown[] }>;
    assert.deepEqual(Object.keys(props('search_recordings')), ['query', 'type', 'from', 'to', 'limit', 'cursor']);
    assert.deepEqual(byName.search_recordings!.inputSchema.required, ['query']);
    assert.deepEqual([props('search_recordings').limit!.minimum, props('search_recordings').limit!.maximum, props('search_recordings').limit!.default], [1, 50, 10]);
    assert.deepEqual(Object.keys(props('list_recordings')), ['type', 'limit', 'cursor']);
    assert.deepEqual(byName.get_recording!.inputSchema.required, ['id']);
    assert.deepEqual(byName.create_note!.inputSchema.required, ['text']);
    assert.equal(props('create_note').type!.default, 'memo');
    // The limits an assistant can know before it sends (a POST is at most 1.5 MB).
    assert.equal((props('create_note').text as { maxLength?: number }).maxLength, 400_000);
    assert.equal((props('create_note').title as { maxLength?: number }).maxLength, 1_000);
    assert.deepEqual(props('list_recordings').type!.enum, ['clip', 'memo']);
    for (const t of tools) {
      assert.ok((t.description ?? '').length > 40, `${t.name} has a description`);
      for (const [name, p] of Object.entries(t.inputSchema.properties ?? {})) assert.ok((p as { description?: string }).description, `${t.name}.${name} is described`);
      assert.equal(t.outputSchema?.type, 'object', `${t.name} declares its structuredContent`);
      assert.equal(t.annotations?.readOnlyHint, t.name !== 'create_note');
    }
    await client.close();
  });

  it('search_recordings: every word must match, newest first, a snippet around the match, text and structuredContent agree', async () => {
    const client = await mcpClient(served.url, key);
    const r = await call(client, 'search_recordings', { query: 'milk' });
    assert.equal(r.isError, undefined);
    assert.deepEqual(r.structuredContent, {
      recordings: [
        { id: ids.clip, type: 'clip', title: 'Standup', recordedAt: MAY_1, snippet: 'Meeting notes: the milk supplier called.' },
        { id: ids.old, type: 'memo', title: 'Groceries', recordedAt: MAY_1 - 10 * DAY, snippet: 'Remember to buy milk and eggs.' },
      ],
      nextCursor: null,
    });
    const text = textOf(r);
    assert.ok(text.indexOf(ids.clip!) < text.indexOf(ids.old!), text);
    assert.match(text, /Standup — clip, 2026-05-01 09:30 UTC/);

    const accent = await call(client, 'search_recordings', { query: 'cafe' });
    assert.equal(accent.structuredContent.recordings.length, 1);
    const snip: string = accent.structuredContent.recordings[0].snippet;
    assert.ok(snip.startsWith('…') && snip.includes('café'), snip);
    assert.ok(snip.length <= 160, `snippet is bounded, ellipses included (${snip.length})`);

    assert.deepEqual((await call(client, 'search_recordings', { query: 'milk eggs' })).structuredContent.recordings.map((x: { id: string }) => x.id), [ids.old]);
    const none = await call(client, 'search_recordings', { query: 'zebra' });
    assert.deepEqual(none.structuredContent, { recordings: [], nextCursor: null });
    assert.match(textOf(none), /No recordings match "zebra"/);
    await client.close();
  });

  it('search_recordings: type, from and to (ISO dates or Unix ms) filter; limit and cursor page', async () => {
    const client = await mcpClient(served.url, key);
    const found = async (args: Record<string, unknown>) => (await call(client, 'search_recordings', { query: 'milk', ...args })).structuredContent.recordings.map((x: { id: string }) => x.id);
    assert.deepEqual(await found({ type: 'memo' }), [ids.old]);
    assert.deepEqual(await found({ from: '2026-05-01' }), [ids.clip]);
    assert.deepEqual(await found({ to: '2026-04-30' }), [ids.old]);
    assert.deepEqual(await found({ to: '2026-05-01' }), [ids.clip, ids.old], 'a date alone as to includes that whole day');
    assert.deepEqual(await found({ from: '2026-05-01T09:31:00Z' }), []);
    assert.deepEqual(await found({ from: MAY_1, to: MAY_1 }), [ids.clip]);
    const first = await call(client, 'search_recordings', { query: 'milk', limit: 1 });
    assert.equal(first.structuredContent.recordings.length, 1);
    assert.equal(typeof first.structuredContent.nextCursor, 'string');
    assert.match(textOf(first), /cursor/);
    const second = await call(client, 'search_recordings', { query: 'milk', limit: 1, cursor: first.structuredContent.nextCursor });
    assert.deepEqual(second.structuredContent.recordings.map((x: { id: string }) => x.id), [ids.old]);
    assert.equal(second.structuredContent.nextCursor, null);
    await client.close();
  });

  it('list_recordings: newest first by capture time, type filter, limit default 10, cursor paging', async () => {
    const client = await mcpClient(served.url, key);
    const all = await call(client, 'list_recordings');
    assert.deepEqual(all.structuredContent.recordings.map((x: { id: string }) => x.id), [ids.long, ids.clip, ids.old]);
    assert.equal(all.structuredContent.nextCursor, null);
    assert.equal(all.structuredContent.recordings[0].snippet.slice(0, 20), 'We walked along the ');
    assert.ok(all.structuredContent.recordings[0].snippet.endsWith('…'));
    assert.deepEqual((await call(client, 'list_recordings', { type: 'clip' })).structuredContent.recordings.map((x: { id: string }) => x.id), [ids.clip]);
    const page = await call(client, 'list_recordings', { limit: 2 });
    const rest = await call(client, 'list_recordings', { limit: 2, cursor: page.structuredContent.nextCursor });
    assert.deepEqual(rest.structuredContent.recordings.map((x: { id: string }) => x.id), [ids.old]);
    await client.close();
  });

  it('get_recording: structuredContent.recording is exactly the v2 recording JSON', async () => {
    const client = await mcpClient(served.url, key);
    const r = await call(client, 'get_recording', { id: ids.old });
    assert.deepEqual(r.structuredContent, { recording: await v2Get(h, key, ids.old!) });
    assert.match(textOf(r), /Groceries \(memo, recorded 2026-04-21 09:30 UTC/);
    assert.match(textOf(r), /Remember to buy milk and eggs\./);
    await client.close();
  });

  it('create_note: a memo by default with the text as transcript, searchable at once; the answer is the v2 recording', async () => {
    const client = await mcpClient(served.url, key);
    const r = await call(client, 'create_note', { text: 'Call the plumber about the boiler', title: 'Boiler' });
    const { recording } = r.structuredContent;
    assert.deepEqual(recording, await v2Get(h, key, recording.id));
    assert.deepEqual([recording.type, recording.title, recording.transcript, recording.status], ['memo', 'Boiler', 'Call the plumber about the boiler', 'ready']);
    assert.match(textOf(r), /Saved/);
    const clip = await call(client, 'create_note', { text: 'a clip note', type: 'clip' });
    assert.equal(clip.structuredContent.recording.type, 'clip');
    assert.notEqual(clip.structuredContent.recording.id, recording.id, 'each call is a new recording (its own idempotency key)');
    assert.deepEqual((await call(client, 'search_recordings', { query: 'plumber' })).structuredContent.recordings.map((x: { id: string }) => x.id), [recording.id]);
    await client.close();
  });

  it('bad arguments are isError results naming the argument', async () => {
    const client = await mcpClient(served.url, key);
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['search_recordings', {}, /arguments\.query: required/],
      ['search_recordings', { query: '  ' }, /arguments\.query: must not be empty/],
      ['search_recordings', { query: 'x', limit: 51 }, /arguments\.limit: must be 1-50/],
      ['search_recordings', { query: 'x', from: 'last tuesday' }, /arguments\.from: "last tuesday" is not a date/],
      ['search_recordings', { query: 'x', from: '2026-05-02', to: '2026-05-01' }, /from: must not be after/],
      ['list_recordings', { cursor: 'nonsense' }, /^arguments\.cursor: not a nextCursor returned by this tool with the same arguments/],
      ['search_recordings', { query: 'x', cursor: 'nonsense' }, /^arguments\.cursor: not a nextCursor returned by this tool/],
      ['search_recordings', { query: '"' }, /^arguments\.query: "\\"" has no words to search for \(letters or numbers\); use list_recordings to browse$/],
      ['search_recordings', { query: '🎉 !?' }, /has no words to search for/],
      ['list_recordings', { colour: 'red' }, /arguments\.colour: unknown field/],
      ['get_recording', { id: '../etc' }, /arguments\.id/],
      ['create_note', { text: '   ' }, /arguments\.text: must not be empty/],
      ['create_note', { text: 'x', type: 'song' }, /arguments\.type/],
      ['create_note', { text: 'x'.repeat(400_001) }, /^arguments\.text: must be at most 400,000 characters/],
    ];
    for (const [name, args, message] of cases) {
      const r = await call(client, name, args);
      assert.equal(r.isError, true, `${name} ${JSON.stringify(args)}`);
      assert.match(textOf(r), message);
    }
    await client.close();
  });
});

describe('MCP tool failures are isError results, not protocol errors', () => {
  const h = harness();
  let served: Served;
  before(async () => {
    served = await serve(h);
  });
  after(() => served.close());

  it('a key without recordings:read gets isError naming recordings:read from search, list and get', async () => {
    const client = await mcpClient(served.url, h.key(['recordings:create']));
    for (const [name, args] of [['search_recordings', { query: 'x' }], ['list_recordings', {}], ['get_recording', { id: 'rec_x' }]] as const) {
      const r = await call(client, name, args);
      assert.equal(r.isError, true, name);
      assert.equal(r.structuredContent, undefined);
      assert.match(textOf(r), /lacks the recordings:read permission/);
    }
    // create_note works, and answers only the id and revision, as v2 does for such a key.
    const created = await call(client, 'create_note', { text: 'write only' });
    assert.deepEqual(Object.keys(created.structuredContent.recording).sort(), ['id', 'revision']);
    await client.close();
  });

  it('a key without recordings:create gets isError naming recordings:create, and nothing is stored', async () => {
    const client = await mcpClient(served.url, h.key(['recordings:read']));
    const r = await call(client, 'create_note', { text: 'not allowed' });
    assert.equal(r.isError, true);
    assert.match(textOf(r), /lacks the recordings:create permission/);
    assert.deepEqual((await call(client, 'search_recordings', { query: 'allowed' })).structuredContent.recordings, []);
    await client.close();
  });

  it('an unknown id names the id; a deleted one says it was deleted', async () => {
    const key = h.key();
    const client = await mcpClient(served.url, key);
    const unknown = await call(client, 'get_recording', { id: 'rec_doesNotExist' });
    assert.equal(unknown.isError, true);
    assert.match(textOf(unknown), /rec_doesNotExist not found/);
    const id = await create(h, key, { type: 'memo', transcript: 'soon gone' });
    assert.equal((await h.req('DELETE', `/api/v2/recordings/${id}`, { token: key, headers: { 'if-match': '1' } })).status, 204);
    const gone = await call(client, 'get_recording', { id });
    assert.equal(gone.isError, true);
    assert.match(textOf(gone), new RegExp(`${id} was deleted`));
    await client.close();
  });

  it('a recording of another account is unknown', async () => {
    const other = h.services.auth.createAccount('other', 'another password');
    const theirs = h.services.auth.createKey(other.id, { name: 'k', permissions: ['recordings:create', 'recordings:read'] }).secret;
    const id = await create(h, theirs, { type: 'memo', transcript: 'private' });
    const client = await mcpClient(served.url, h.key());
    assert.match(textOf(await call(client, 'get_recording', { id })), new RegExp(`${id} not found`));
    assert.deepEqual((await call(client, 'search_recordings', { query: 'private' })).structuredContent.recordings, []);
    await client.close();
  });
});

describe('/mcp over HTTP: credentials, methods, rate limit, OpenAPI', () => {
  const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
  const ACCEPT = { accept: 'application/json, text/event-stream' };

  it('without credentials: 401 in the error envelope, and the SDK client cannot connect', async () => {
    const h = harness();
    const res = await h.req('POST', '/mcp', { body: INIT, headers: ACCEPT });
    assert.equal(res.status, 401);
    assert.equal(res.json.error.code, 'unauthenticated');
    assert.ok(res.headers.get('x-request-id'));
    assert.equal((await h.req('POST', '/mcp', { body: INIT, headers: ACCEPT, token: 'rlk_notAKey' })).status, 401);
    const served = await serve(h);
    await assert.rejects(mcpClient(served.url, 'rlk_notAKey'), (e: Error & { code?: number }) => e.code === 401 && /unauthenticated/.test(e.message));
    await served.close();
  });

  it('a session token works as a credential too', async () => {
    const h = harness();
    const res = await h.req('POST', '/mcp', { body: INIT, headers: ACCEPT, token: h.session });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.result.serverInfo.name, 'reclib');
    assert.ok(res.json.result.capabilities.tools);
    assert.match(res.headers.get('x-request-id') ?? '', /^req_/);
    assert.equal(res.headers.get('ratelimit-limit'), '120');
  });

  it('over a socket the answer carries X-Request-Id and the RateLimit headers', async () => {
    const h = harness();
    const served = await serve(h);
    const res = await fetch(`${served.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.key()}`, 'content-type': 'application/json', 'x-request-id': 'mine-1', ...ACCEPT },
      body: JSON.stringify(INIT),
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-request-id'), 'mine-1');
    assert.equal(res.headers.get('ratelimit-remaining'), '119');
    assert.equal(((await res.json()) as { result: { serverInfo: { name: string } } }).result.serverInfo.name, 'reclib');
    await served.close();
  });

  it('GET and DELETE answer 405 with Allow: POST (stateless: no stream, no session)', async () => {
    const h = harness();
    for (const method of ['GET', 'DELETE']) {
      const res = await h.req(method, '/mcp', { token: h.key(), headers: { accept: 'text/event-stream' } });
      assert.equal(res.status, 405, method);
      assert.equal(res.headers.get('allow'), 'POST');
    }
  });

  it('a body that is not a JSON-RPC message, or a missing Accept, is 400 in the error envelope', async () => {
    const h = harness();
    const key = h.key();
    for (const [body, headers] of [['{"hello":1}', ACCEPT], ['not json', ACCEPT], [INIT, {}]] as const) {
      const res = await h.req('POST', '/mcp', { token: key, body, headers });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.json.error.code, 'invalid_request');
    }
  });

  it("each POST counts against the key's rate limit, shared with the REST API", async () => {
    const h = harness({ rateLimit: 5 });
    const key = h.key();
    const served = await serve(h);
    // initialize + notifications/initialized + tools/call: three POSTs (the GET stream attempt is public and answered 405).
    const client = await mcpClient(served.url, key);
    await call(client, 'list_recordings');
    const rest = await h.req('GET', '/api/v2/recordings', { token: key });
    assert.equal(rest.status, 200);
    assert.equal(rest.headers.get('ratelimit-remaining'), '1');
    await call(client, 'list_recordings');
    await assert.rejects(call(client, 'list_recordings'), (e: Error & { code?: number }) => e.code === 429 && /rate_limited/.test(e.message));
    const res = await h.req('POST', '/mcp', { token: key, body: INIT, headers: ACCEPT });
    assert.equal(res.status, 429);
    assert.equal(res.json.error.code, 'rate_limited');
    await client.close();
    await served.close();
  });

  const listCall = (id: number, args: Record<string, unknown> = {}) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'list_recordings', arguments: args } });
  const batchOf = (n: number) => Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'tools/list' }));

  it('a batch with two requests of one id is refused whole (the SDK would run both and lose one answer), nothing saved', async () => {
    const h = harness();
    const key = h.key();
    const note = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'create_note', arguments: { text: 'an answer that would be lost' } } };
    const res = await h.req('POST', '/mcp', { token: key, body: [note, { jsonrpc: '2.0', id: 7, method: 'ping' }], headers: ACCEPT });
    assert.equal(res.status, 400);
    assert.equal(res.json.error.code, 'invalid_request');
    assert.match(res.json.error.message, /two requests with the id 7/);
    assert.equal((await h.req('GET', '/api/v2/recordings', { token: key })).json.recordings.length, 0);
    // Ids of one value but another type ("7" and 7) are two ids.
    const ok = await h.req('POST', '/mcp', { token: key, body: [{ jsonrpc: '2.0', id: '7', method: 'ping' }, { jsonrpc: '2.0', id: 7, method: 'ping' }], headers: ACCEPT });
    assert.equal(ok.status, 200, ok.text);
  });

  it('a batch counts as the messages it holds; one the limit has no room for is refused whole, naming its size', async () => {
    const h = harness({ rateLimit: 10 });
    const key = h.key();
    const four = await h.req('POST', '/mcp', { token: key, body: batchOf(4), headers: ACCEPT });
    assert.equal(four.status, 200, four.text);
    assert.equal(four.json.length, 4);
    assert.equal(four.headers.get('ratelimit-remaining'), '6');
    const seven = await h.req('POST', '/mcp', { token: key, body: batchOf(7), headers: ACCEPT });
    assert.equal(seven.status, 429);
    assert.equal(seven.json.error.code, 'rate_limited');
    assert.match(seven.json.error.message, /this batch holds 7 messages, each counted as a request, and there is room for 6 of them now; retry in 60 s/);
    // After Retry-After the four of the first batch have left the window: room for all seven.
    assert.equal(seven.headers.get('retry-after'), '60');
    // Refused whole, it cost one request, the POST itself (its body was read for it).
    const one = await h.req('POST', '/mcp', { token: key, body: INIT, headers: ACCEPT });
    assert.equal(one.headers.get('ratelimit-remaining'), '4');
    // A batch that could never fit is a 400 saying so, with no Retry-After that would never come true.
    const eleven = await h.req('POST', '/mcp', { token: key, body: batchOf(11), headers: ACCEPT });
    assert.equal(eleven.status, 400);
    assert.match(eleven.json.error.message, /this batch holds 11 messages, each counted as a request, and the rate limit is 10 a minute: send at most 10 in one POST/);
    assert.equal(eleven.headers.get('retry-after'), null);
    assert.equal((await h.req('POST', '/mcp', { token: key, body: INIT, headers: ACCEPT })).headers.get('ratelimit-remaining'), '2');
    // And at most 50 messages whatever the limit (each is run before any is answered).
    const unlimited = harness({ rateLimit: 0 });
    const fiftyOne = await unlimited.req('POST', '/mcp', { token: unlimited.key(), body: batchOf(51), headers: ACCEPT });
    assert.equal(fiftyOne.status, 400);
    assert.match(fiftyOne.json.error.message, /at most 50/);
  });

  it('on serve (writes answered by the writer thread) a batch is counted the same, before the hand-over', async (t) => {
    const served = await serveInProcess(t, { rateLimit: 10 });
    const { key } = served.account();
    const post = (body: unknown) =>
      fetch(`${served.url}/mcp`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...ACCEPT }, body: JSON.stringify(body) });
    const four = await post(batchOf(4));
    assert.equal(four.status, 200);
    assert.equal(((await four.json()) as unknown[]).length, 4);
    assert.equal(four.headers.get('ratelimit-remaining'), '6');
    const seven = await post(batchOf(7));
    assert.equal(seven.status, 429);
    assert.match(((await seven.json()) as { error: { message: string } }).error.message, /batch holds 7 messages/);
    assert.equal((await post(INIT)).headers.get('ratelimit-remaining'), '4', 'the refused batch cost one request');
    // A byte order mark before the batch changes nothing (the writer thread's JSON reading skips it).
    const bom = await fetch(`${served.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...ACCEPT },
      body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(batchOf(5)))]),
    });
    assert.equal(bom.status, 429, 'counted as its five messages: no room for them');
  });

  it("a batch's tool results are bounded: once they hold about 8 MB, its further calls are isError results saying to send them alone", async () => {
    const h = harness();
    const key = h.key();
    // Twelve recordings of ~1.2 MB (title and transcript): a page of list_recordings is cut at 4 MB.
    for (let i = 0; i < 12; i++) {
      const res = await h.req('POST', '/api/v2/recordings', {
        token: key,
        body: { type: 'memo', title: `${i} ${'t'.repeat(600_000)}`, transcript: 'w '.repeat(300_000) },
        headers: { 'idempotency-key': `big-${i}` },
      });
      assert.equal(res.status, 201);
    }
    const calls = Array.from({ length: 6 }, (_, i) => listCall(i + 1, { limit: 50 }));
    const res = await h.req('POST', '/mcp', { token: key, body: calls, headers: ACCEPT });
    assert.equal(res.status, 200);
    const answers = res.json as Array<{ id: number; result: { isError?: boolean; content: Array<{ text: string }> } }>;
    assert.equal(answers.length, 6);
    const refused = answers.filter((a) => a.result.isError);
    assert.ok(refused.length >= 3 && refused.length <= 4, `${refused.length} of 6 refused`);
    assert.ok(answers.slice(0, 6 - refused.length).every((a) => !a.result.isError), 'the first ones are answered');
    assert.match(refused[0]!.result.content[0]!.text, /its limit: send list_recordings again in a POST of its own/);
    assert.ok(res.text.length < 20 * 1024 * 1024, `the answer is ${Math.round(res.text.length / 1024 / 1024)} MB`);
    // Alone, the same call is answered.
    const alone = await h.req('POST', '/mcp', { token: key, body: listCall(9, { limit: 50 }), headers: ACCEPT });
    assert.equal(alone.json.result.isError, undefined);
  });

  it('a request with unusable params is a JSON-RPC invalid params error (-32602) in words, not an internal error with a schema dump', async () => {
    const h = harness();
    const key = h.key();
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ jsonrpc: '2.0', id: 1, method: 'tools/call' }, /^Invalid params: params is required: \{ name, arguments\? \}$/],
      [{ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 5 } }, /^Invalid params: params\.name must be the name of a tool \(a string\)$/],
      [{ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'list_recordings', arguments: null } }, /^Invalid params: params\.arguments must be an object/],
      [{ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'list_recordings', arguments: [1] } }, /^Invalid params: params\.arguments must be an object/],
      [{ jsonrpc: '2.0', id: 5, method: 'initialize' }, /^Invalid params: params is required: \{ protocolVersion, capabilities, clientInfo \}$/],
    ];
    for (const [body, message] of cases) {
      const res = await h.req('POST', '/mcp', { token: key, body, headers: ACCEPT });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.id, body.id);
      assert.equal(res.json.error.code, -32602, res.text);
      assert.match(res.json.error.message, message);
      assert.ok(res.headers.get('x-request-id'));
    }
    // What the transport refuses first it still refuses: an unsupported protocol version is a 400.
    const version = await h.req('POST', '/mcp', { token: key, body: cases[0]![0], headers: { ...ACCEPT, 'mcp-protocol-version': '1999-01-01' } });
    assert.equal(version.status, 400, version.text);
    const initialize = await h.req('POST', '/mcp', { token: key, body: cases[4]![0], headers: { ...ACCEPT, 'mcp-protocol-version': '1999-01-01' } });
    assert.equal(initialize.status, 400, initialize.text);
    // And a message that is no JSON-RPC request to the transport (an id that is not an integer).
    const fraction = await h.req('POST', '/mcp', { token: key, body: { jsonrpc: '2.0', id: 1.5, method: 'tools/call' }, headers: ACCEPT });
    assert.equal(fraction.status, 400, fraction.text);
    // Good params still reach the tool.
    const ok = await h.req('POST', '/mcp', { token: key, body: listCall(6), headers: ACCEPT });
    assert.equal(ok.json.result.isError, undefined);
  });

  it('is described in the v2 OpenAPI document', async () => {
    const h = harness();
    const doc = (await h.req('GET', '/api/v2/openapi.json')).json;
    const item = doc.paths['/mcp'];
    assert.ok(item.post, 'POST /mcp is documented');
    assert.deepEqual(item.servers, [{ url: '/' }]);
    assert.match(item.post.responses['200'].description, /search_recordings/);
    assert.ok(item.get.responses['405']);
  });
});

describe('create_note is an import: capture rules do not fire', () => {
  it('a text webhook with a prefix rule gets nothing from create_note, though a native capture with the same text fires it', async () => {
    const h = harness({ webhookAllow: '127.0.0.1' });
    h.services.devices.add(h.accountId, { id: 'ring-1', name: 'Ring', model: 'ring' });
    const hook = await h.req('POST', '/api/v1/webhooks', { token: h.session, body: { url: 'http://127.0.0.1:9/hook', payloadMode: 'text', rules: { prefix: 'todo' } } });
    assert.equal(hook.status, 200, hook.text);
    const deliveries = (recordingId: string) => h.services.webhooks.deliveries.forRecording(h.accountId, recordingId);
    const served = await serve(h);
    // A session is the strongest case: its creates with capture metadata are native captures.
    for (const token of [h.session, h.key()]) {
      const client = await mcpClient(served.url, token);
      const note = await call(client, 'create_note', { text: 'todo buy milk' });
      assert.equal(note.isError, undefined);
      assert.deepEqual(deliveries(note.structuredContent.recording.id), []);
      await client.close();
    }
    // The control: the same text as a ring capture fires the rule, so the check above can fail.
    const cap = await v1Created(h, h.session, { kind: 'clip', deviceId: 'ring-1', captureInput: 'hold' });
    await v1Put(h, h.session, cap.id, { transcript: 'todo buy milk' }, 1);
    assert.equal(deliveries(cap.id).length, 1);
    await served.close();
  });
});
