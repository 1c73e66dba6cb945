// Hostile input (the product promise, docs/decisions.md §4): bad input always gets a clear 4xx in the error
// envelope with X-Request-Id, naming the field, parameter or header that is wrong; never a 500,
// never a half-written record. The cases are the ones a client probing the running server would
// try: arrays for objects, repeated or unknown parameters, malformed HTTP, bodies cut short.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { harness, type Harness, type TestResponse } from '../helpers/harness';
import { listening } from '../helpers/node-server';

const NODE_MAJOR = Number(process.versions.node.split('.')[0]);

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

function assertInvalid(res: TestResponse, field: string): void {
  assert.equal(res.status, 400, res.text);
  assert.equal(res.json.error.code, 'invalid_request');
  assert.ok(res.json.error.message.startsWith(`${field}:`), `message names ${field}: ${res.json.error.message}`);
  assert.match(res.headers.get('x-request-id') ?? '', REQUEST_ID);
}

async function memo(h: Harness, token: string): Promise<string> {
  const res = await h.req('POST', '/api/v2/recordings', { token, headers: { 'idempotency-key': `k-${Math.random()}` }, body: { type: 'memo', title: 'kept' } });
  assert.equal(res.status, 201, res.text);
  return res.json.recording.id as string;
}

describe('an array sent where an object is expected is a 400 naming it', () => {
  it('a value of the wrong type is named with the type it must be, in words (not the validation library\'s)', async () => {
    const h = harness();
    const key = h.key();
    const res = await h.req('POST', '/api/v2/recordings', { token: key, headers: { 'idempotency-key': 'types-1' }, body: { type: 'memo', title: null } });
    assert.equal(res.status, 400);
    assert.equal(res.json.error.message, 'body.title: must be a string, not null');
    const object = await h.req('POST', '/api/v2/recordings', { token: key, headers: { 'idempotency-key': 'types-3' }, body: { type: 'memo', title: { a: 1 } } });
    assert.equal(object.json.error.message, 'body.title: must be a string, not an object');
    // The kind of what was sent, never the value (long, or a password sent as a number).
    const long = await h.req('POST', '/api/v2/recordings', { token: key, headers: { 'idempotency-key': 'types-4' }, body: { type: 'memo', recordedAt: 'x'.repeat(5000) } });
    assert.equal(long.json.error.message, 'body.recordedAt: must be a number, not a string');
    const password = await h.req('POST', '/api/session', { body: { account: 'x', password: 123456789 } });
    assert.equal(password.json.error.message, 'body.password: must be a string, not a number');
    const id = await memo(h, key);
    const pinned = await h.req('PATCH', `/api/v2/recordings/${id}`, { token: key, headers: { 'if-match': '"1"' }, body: { pinned: 'yes' } });
    assert.equal(pinned.json.error.message, 'body.pinned: must be true or false, not a string');
  });

  it('a whole body of [] is refused, not read as {} (PATCH changes nothing)', async () => {
    const h = harness();
    const key = h.key();
    const id = await memo(h, key);
    for (const [method, path] of [['PATCH', `/api/v2/recordings/${id}`], ['PUT', `/api/v1/recordings/${id}`]] as const) {
      const res = await h.req(method, path, { token: key, headers: { 'if-match': '"1"' }, body: '[]' });
      assertInvalid(res, 'body');
      assert.match(res.json.error.message, /^body: must be an object, not an array$/);
    }
    const after = await h.req('GET', `/api/v2/recordings/${id}`, { token: key });
    assert.equal(after.json.recording.revision, 1);
  });

  it('nested objects given as arrays name their path: inputs, rules, revisions[0].inputs, audio[0]', async () => {
    const h = harness();
    const key = h.key();
    h.services.devices.add(h.accountId, { id: 'ring-1', name: 'Ring', model: 'ring' });
    const etag = (await h.req('GET', '/api/v2/devices/ring-1/settings', { token: key })).headers.get('etag') ?? '';
    assertInvalid(await h.req('PATCH', '/api/v2/devices/ring-1/settings', { token: key, headers: { 'if-match': etag }, body: { inputs: [] } }), 'body.inputs');
    assertInvalid(await h.req('PATCH', '/api/v2/devices/ring-1/settings', { token: key, headers: { 'if-match': etag }, body: { inputs: ['memo'] } }), 'body.inputs');
    assertInvalid(
      await h.req('POST', '/api/v1/input-mappings', { token: key, body: { revisions: [{ id: 'r1', deviceId: 'ring-1', inputs: [] }] } }),
      'body.revisions[0].inputs',
    );
    assertInvalid(
      await h.req('POST', '/api/v1/webhooks', { token: h.session, body: { url: 'https://example.com/h', payloadMode: 'text', rules: [] } }),
      'body.rules',
    );
    assertInvalid(
      await h.req('POST', '/api/v2/recordings', { token: key, headers: { 'idempotency-key': 'a1' }, body: { type: 'memo', audio: [['c', 'f']] } }),
      'body.audio[0]',
    );
    // Nothing was stored on the way: no settings revision, no mapping, no webhook, no recording.
    assert.equal((await h.req('GET', '/api/v2/devices/ring-1/settings', { token: key })).headers.get('etag'), etag);
    assert.deepEqual((await h.req('GET', '/api/v1/input-mappings', { token: key })).json.revisions, []);
    assert.equal((await h.req('GET', '/api/v2/recordings', { token: key })).json.recordings.length, 0);
    assert.equal((await h.req('POST', '/api/v2/recordings', { token: key, headers: { 'idempotency-key': 'a1' }, body: { type: 'memo' } })).status, 201);
  });
});

describe('query parameters: each given once, only the declared ones', () => {
  it('a parameter given twice is a 400 naming it, v2 and v1', async () => {
    const h = harness();
    const key = h.key();
    assertInvalid(await h.req('GET', '/api/v2/recordings?limit=1&limit=2', { token: key }), 'query.limit');
    assertInvalid(await h.req('GET', '/api/v2/recordings?q=a&q=b', { token: key }), 'query.q');
    assertInvalid(await h.req('GET', '/api/v2/events?limit=5&limit=5', { token: key }), 'query.limit');
    assertInvalid(await h.req('GET', '/api/v1/events?after=0&after=10', { token: key }), 'query.after');
    assertInvalid(await h.req('GET', '/api/v1/recordings/latest-clip?deviceId=a&deviceId=b', { token: key }), 'query.deviceId');
  });

  it('an undeclared parameter (a typo such as curser) is a 400 naming it on every operation that takes a query', async () => {
    const h = harness();
    const key = h.key();
    for (const path of ['/api/v2/events?curser=x', '/api/v1/events?afterr=3', '/api/v1/input-mappings?device=ring-1', '/api/v2/recordings?limt=5', '/api/v1/recordings?kind=clip&zz=1']) {
      const name = /[?&](curser|afterr|device|limt|zz)=/.exec(path)?.[1] ?? '';
      const res = await h.req('GET', path, { token: key });
      assertInvalid(res, `query.${name}`);
      assert.match(res.json.error.message, /unknown parameter/);
    }
    // The declared ones still work, and an odd name is quoted rather than printed raw.
    assert.equal((await h.req('GET', '/api/v2/events?limit=5', { token: key })).status, 200);
    assert.equal((await h.req('GET', '/api/v1/input-mappings?deviceId=ring-1', { token: key })).status, 200);
    assertInvalid(await h.req('GET', '/api/v2/events?%00=1', { token: key }), 'query."\\u0000"');
  });

  it('a value whose percent-escapes are not UTF-8 (%FF, %zz) is a 400 naming it, not a search for "ff"', async () => {
    const h = harness();
    const key = h.key();
    await memo(h, key);
    for (const path of ['/api/v2/recordings?q=%FF', '/api/v2/recordings?q=kept%zz', '/api/v1/recordings?q=%E2%82', '/api/v2/events?cursor=%FF']) {
      const res = await h.req('GET', path, { token: key });
      assertInvalid(res, `query.${/[?&](\w+)=/.exec(path)?.[1]}`);
      assert.match(res.json.error.message, /percent-escape/);
    }
    // Well-formed escapes, "+" and a literal "%25" still decode as before.
    for (const q of ['k%C3%A9pt', 'kept+x', 'kept', '%25']) {
      assert.equal((await h.req('GET', `/api/v2/recordings?q=${q}`, { token: key })).status, 200, q);
    }
    assert.equal((await h.req('GET', '/api/v2/recordings?q=kep', { token: key })).json.recordings.length, 1);
  });
});

/** One raw HTTP/1.1 exchange: the bytes as written, the answer as parsed. */
function rawExchange(port: number, request: string): Promise<{ status: number; headers: Record<string, string>; json: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.setTimeout(5000, () => socket.destroy(new Error('no answer within 5 s')));
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', body = ''] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, json });
    });
    socket.write(request);
  });
}

describe('requests refused before the app runs still get the envelope and X-Request-Id', () => {
  it('parser and adapter refusals: unknown method, bad header, bad lengths and chunks, huge headers, missing or bad Host, backslash path, CONNECT', async () => {
    const h = harness();
    const { port, close } = await listening(h.app.fetch);
    try {
      const end = 'Connection: close\r\n\r\n';
      const cases: Array<[string, string, number, RegExp]> = [
        ['unknown method', `FOO /api/v2/recordings HTTP/1.1\r\nHost: x\r\n${end}`, 400, /method/],
        ['space in a header name', `GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n${end}`, 400, /header/],
        ['Content-Length not a number', `POST /api/v2/recordings HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n${end}{}`, 400, /Content-Length/],
        ['malformed chunk', `POST /api/v2/recordings HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n${end}ZZ\r\n{}\r\n0\r\n\r\n`, 400, /chunked/],
        ['headers over 16 KB', `GET /api/v2/recordings HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${'a'.repeat(17_000)}\r\n${end}`, 413, /headers/],
        ['HTTP/1.1 without Host', `GET /healthz HTTP/1.1\r\n${end}`, 400, /Host/],
        ['HTTP/1.1 with an empty Host', `GET /healthz HTTP/1.1\r\nHost: \r\n${end}`, 400, /Host/],
        ['HTTP/1.1 with an empty Host, then another (the first counts)', `GET /healthz HTTP/1.1\r\nHost: \r\nHost: x\r\n${end}`, 400, /Host/],
        // On Node 20, req.headers (which the adapter reads) keeps the first 1,000 headers only: a Host
        // after them is none. From Node 22 on, the parser itself refuses that many headers (a header
        // overflow, as for headers over 16 KB).
        ['HTTP/1.1 with its Host past the first 1,000 headers', `GET /healthz HTTP/1.1\r\n${'X-Pad: 1\r\n'.repeat(1_000)}Host: x\r\n${end}`, ...(NODE_MAJOR >= 22 ? ([413, /headers/] as const) : ([400, /Host/] as const))],
        ['invalid Host', `GET /healthz HTTP/1.1\r\nHost: [::1\r\n${end}`, 400, /host/i],
        ['backslash in the path', `GET /api/v2/recordings/a\\b HTTP/1.1\r\nHost: x\r\n${end}`, 400, /path/i],
        // Node closes a CONNECT without writing anything unless the server listens for it.
        ['CONNECT', `CONNECT 127.0.0.1:80 HTTP/1.1\r\nHost: 127.0.0.1:80\r\n\r\n`, 400, /CONNECT/],
      ];
      for (const [what, request, status, mentions] of cases) {
        const res = await rawExchange(port, request);
        assert.equal(res.status, status, what);
        assert.match(res.headers['x-request-id'] ?? '', REQUEST_ID, what);
        assert.equal(res.json?.error?.code, status === 413 ? 'payload_too_large' : 'invalid_request', what);
        assert.match(res.json.error.message, mentions, what);
      }
      // The same server answers well-formed requests as before, HTTP/1.0 without Host included.
      assert.equal((await rawExchange(port, `GET /healthz HTTP/1.1\r\nHost: x\r\n${end}`)).status, 200);
      assert.equal((await rawExchange(port, 'GET /healthz HTTP/1.0\r\n\r\n')).status, 200);
      // An expectation other than 100-continue is ignored (Node alone answers a bare 417).
      const expecting = await rawExchange(port, `GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: foo\r\n${end}`);
      assert.equal(expecting.status, 200);
      assert.deepEqual(expecting.json, { status: 'ok' });
    } finally {
      await close();
    }
  });
});

describe('a connection answered outside the app is closed by the server', () => {
  it('even when the client keeps its side open (CONNECT, an unknown method)', async () => {
    const h = harness();
    const { server, port, close } = await listening(h.app.fetch);
    const connections = () => new Promise<number>((resolve, reject) => server.getConnections((e, n) => (e ? reject(e) : resolve(n))));
    try {
      for (const request of ['CONNECT 127.0.0.1:80 HTTP/1.1\r\nHost: 127.0.0.1:80\r\n\r\n', 'FOO / HTTP/1.1\r\nHost: x\r\n\r\n']) {
        const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
        socket.on('data', () => {});
        socket.write(request);
        await once(socket, 'end');
        // The server's side goes away right after the answer is flushed; allow it a moment.
        let open = await connections();
        for (let i = 0; i < 200 && open > 0; i++) {
          await new Promise((resolve) => setTimeout(resolve, 10));
          open = await connections();
        }
        socket.destroy();
        assert.equal(open, 0, request.split(' ')[0]);
      }
    } finally {
      await close();
    }
  });
});

describe('a client that goes away in the middle of its body', () => {
  it('is answered 400 (for nobody), logs no internal error and saves nothing', async () => {
    const h = harness();
    const key = h.key();
    const answers: Array<Promise<Response>> = [];
    let answered = () => {};
    const first = new Promise<void>((resolve) => (answered = resolve));
    // The adapter passes the Node request as a second argument: forward everything.
    const fetch = (...args: Parameters<typeof h.app.fetch>) => {
      answers.push(Promise.resolve(h.app.fetch(...args)));
      answered();
      return answers.at(-1)!;
    };
    const { port, close } = await listening(fetch as (request: Request) => Promise<Response>);
    try {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => {});
      socket.write(
        `POST /api/v2/recordings HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nIdempotency-Key: gone-1\r\n` +
          'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"type":"clip"}',
      );
      await first;
      socket.destroy();
      const res = await answers[0]!;
      assert.equal(res.status, 400);
      assert.match(((await res.json()) as { error: { message: string } }).error.message, /closed the connection/);
      assert.deepEqual(h.errors, []);
      assert.equal((await h.req('GET', '/api/v2/recordings', { token: key })).json.recordings.length, 0);
    } finally {
      await close();
    }
  });
});

describe('OpenAPI describes query integers by their values', () => {
  it('limit, from, to, after: type integer with the bounds, description and numeric default the server enforces', async () => {
    const h = harness();
    const param = (doc: any, path: string, name: string) => doc.paths[path].get.parameters.find((p: { name: string }) => p.name === name).schema; // eslint-disable-line @typescript-eslint/no-explicit-any
    const v2 = (await h.req('GET', '/api/v2/openapi.json')).json;
    const v1 = (await h.req('GET', '/api/v1/openapi.json')).json;
    assert.deepEqual({ ...param(v2, '/recordings', 'limit'), description: undefined }, { type: 'integer', minimum: 1, maximum: 100, default: 50, description: undefined });
    assert.equal(param(v2, '/recordings', 'from').type, 'integer');
    assert.equal(param(v2, '/events', 'limit').maximum, 1000);
    assert.equal(param(v2, '/events', 'limit').default, 100);
    assert.equal(param(v1, '/events', 'after').minimum, 0);
    assert.equal(param(v1, '/recordings', 'to').maximum, Number.MAX_SAFE_INTEGER);
    // No query parameter is left documented as a digit string.
    assert.doesNotMatch(JSON.stringify([v1, v2]), /\\\\d\{1,16\}/);
  });
});

describe('a missing required field is named as missing', () => {
  it('body.<field>: required field is missing, at any depth', async () => {
    const h = harness();
    const key = h.key();
    for (const [method, path, body, field] of [
      ['POST', '/api/v2/recordings', { title: 't' }, 'body.type'],
      ['POST', '/api/v1/recordings', { title: 't' }, 'body.kind'],
      ['POST', '/api/v2/recordings', { type: 'memo', audio: [{ clientId: 'c' }] }, 'body.audio[0].fileId'],
      ['POST', '/api/v1/input-mappings', { revisions: [{ id: 'r1', inputs: {} }] }, 'body.revisions[0].deviceId'],
    ] as const) {
      const res = await h.req(method, path, { token: key, headers: { 'idempotency-key': `m-${field}` }, body });
      assertInvalid(res, field);
      assert.match(res.json.error.message, /required field is missing$/);
    }
    const res = await h.req('POST', '/api/v2/api-keys', { token: h.session, body: { name: 'k' } });
    assertInvalid(res, 'body.permissions');
  });
});

describe('text must be valid Unicode: a lone surrogate escape is a 400 naming the field', () => {
  it('\\ud800 alone is refused wherever it is (nothing stored), a full pair is kept and read back as sent', async () => {
    const h = harness();
    const key = h.key();
    const cases: Array<[string, string, string, string]> = [
      ['/api/v2/recordings', '{"type":"memo","title":"a\\ud800b"}', 'body.title', 'POST'],
      ['/api/v2/recordings', '{"type":"memo","transcript":"x\\udfffy"}', 'body.transcript', 'POST'],
      // Upper-case hex, as JSON allows.
      ['/api/v2/recordings', '{"type":"memo","summary":"\\uDC00 \\u00e9"}', 'body.summary', 'POST'],
      ['/api/v1/recordings', '{"kind":"memo","audio":[{"clientId":"c","fileId":"f"}],"summary":"\\udbff"}', 'body.summary', 'POST'],
      ['/api/v2/api-keys', '{"name":"\\ud800","permissions":["events:read"]}', 'body.name', 'POST'],
      ['/api/v2/recordings', '{"type":"memo","ti\\ud800":1}', 'body (a field name)', 'POST'],
    ];
    for (const [path, body, field, method] of cases) {
      const res = await h.req(method, path, { token: path.includes('api-keys') ? h.session : key, headers: { 'idempotency-key': `u-${field}` }, body });
      assertInvalid(res, field);
      assert.match(res.json.error.message, /lone UTF-16 surrogate/);
    }
    assert.equal((await h.req('GET', '/api/v2/recordings', { token: key })).json.recordings.length, 0);
    const ok = await h.req('POST', '/api/v2/recordings', { token: key, headers: { 'idempotency-key': 'pair' }, body: '{"type":"memo","title":"mic \\ud83c\\udf99 on"}' });
    assert.equal(ok.status, 201, ok.text);
    const read = await h.req('GET', `/api/v2/recordings/${ok.json.recording.id}`, { token: key });
    assert.equal(read.json.recording.title, 'mic \u{1F399} on');
  });

  it('a body nested 500,000 levels deep is a prompt 400, not a stack overflow', async () => {
    const h = harness();
    const token = h.key();
    const body = `{"type":"memo","title":${'['.repeat(500_000)}"\\ud800"${']'.repeat(500_000)}}`;
    // Timed from the request alone; the bound is generous for a loaded 2-core CI machine (it runs
    // in ~0.3 s alone) and still far below what a quadratic walk of the nesting would take.
    const started = Date.now();
    const res = await h.req('POST', '/api/v2/recordings', { token, headers: { 'idempotency-key': 'deep' }, body });
    assert.equal(res.status, 400);
    assert.ok(res.json.error.message.startsWith('body.title[0][0][0]'), res.json.error.message.slice(0, 100));
    assert.ok(res.json.error.message.length < 400, 'the path in the message is cut short');
    assert.ok(Date.now() - started < 5000, `${Date.now() - started} ms`);
    assert.deepEqual(h.errors, []);
  });
});

describe('messages say what to change', () => {
  const h = harness();
  const key = h.key();

  it('a method the path does not take is the contract\'s 404 not_found, naming the methods the path takes (PUT where v2 edits with PATCH)', async () => {
    const put = await h.req('PUT', '/api/v2/recordings/rec_x', { token: key });
    assert.equal(put.status, 404);
    assert.equal(put.json.error.code, 'not_found');
    assert.equal(put.json.error.message, 'no route for PUT /api/v2/recordings/rec_x; /api/v2/recordings/rec_x takes GET, PATCH, DELETE');
    const nowhere = await h.req('GET', '/api/v2/nowhere', { token: key });
    assert.equal(nowhere.json.error.message, 'no route for GET /api/v2/nowhere');
  });

  it('a query number out of its range says the range; an externalId reused with another body says to use another externalId', async () => {
    const from = await h.req('GET', '/api/v2/recordings?from=-1', { token: key });
    assert.equal(from.status, 400);
    assert.match(from.json.error.message, /^query\.from: must be a whole number from 0 to \d+$/);
    const first = await h.req('POST', '/api/v1/recordings', { token: key, headers: { 'idempotency-key': 'ext-1' }, body: { kind: 'memo', title: 'a', externalId: 'import-7' } });
    assert.equal(first.status, 200, first.text);
    const other = await h.req('POST', '/api/v1/recordings', { token: key, headers: { 'idempotency-key': 'ext-2' }, body: { kind: 'memo', title: 'b', externalId: 'import-7' } });
    assert.equal(other.status, 409);
    assert.match(other.json.error.message, /^externalId was already used with a different body \(recording rec_\w+\); use another externalId for a new recording$/);
  });
});
