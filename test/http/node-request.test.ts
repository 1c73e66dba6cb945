// Requests read from Node's own request object (src/http/node-request.ts) mean what they would
// through the Fetch API: headers as Headers.get() reads them, bodies under the same body rules; and
// the hot read routes, which answer with plain headers (jsonAnswer), still carry every header.
import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, it } from 'node:test';
import { harness } from '../helpers/harness';
import { listening } from '../helpers/node-server';

describe('headers read from the Node request mean what Headers.get() means', () => {
  it('on the node server: Authorization and X-Request-Id work, a repeated Authorization is refused', async () => {
    const h = harness();
    const token = h.key(['recordings:read']);
    const { port, close } = await listening(h.app.fetch, h.config);
    try {
      // Raw bytes, so that a header line can be sent twice.
      const get = (lines: string[]) =>
        new Promise<{ status: number; requestId: string | undefined }>((resolve, reject) => {
          const socket = net.connect(port, '127.0.0.1');
          let text = '';
          socket.on('data', (b) => (text += b.toString()));
          socket.on('error', reject);
          socket.on('end', () => resolve({ status: Number(text.split(' ')[1]), requestId: /\r\nx-request-id: ([^\r]*)/i.exec(text)?.[1] }));
          socket.write(`GET /api/v2/recordings HTTP/1.1\r\nHost: x\r\n${lines.map((l) => `${l}\r\n`).join('')}Connection: close\r\n\r\n`);
        });
      const ok = await get([`Authorization: Bearer ${token}`, 'X-Request-Id: my-request.1']);
      assert.equal(ok.status, 200);
      assert.equal(ok.requestId, 'my-request.1');
      const twice = await get([`authorization: Bearer ${token}`, `AUTHORIZATION: Bearer ${token}`]);
      assert.equal(twice.status, 401, 'two credentials: Headers.get() joins them, which is no valid credential');
      assert.match(twice.requestId ?? '', /^req_/);
      assert.equal((await get([])).status, 401);
    } finally {
      await close();
    }
  });
});

describe('the hot read routes answer with plain headers (jsonAnswer) and still carry every header', () => {
  const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
  const paths = (id: string) => [`/api/v2/recordings/${id}`, '/api/v2/recordings?q=hello', '/api/v2/recordings?limit=1', '/api/v2/events'];

  it('in process: X-Request-Id (generated, or the valid incoming one), JSON content type, RateLimit-*, ETag on the single recording', async () => {
    const h = harness();
    const token = h.key();
    const created = await h.req('POST', '/api/v2/recordings', { token, body: { type: 'clip', transcript: 'hello there' }, headers: { 'idempotency-key': 'k1' } });
    const id = created.json.recording.id as string;
    for (const p of paths(id)) {
      const res = await h.req('GET', p, { token });
      assert.equal(res.status, 200, p);
      assert.ok(REQUEST_ID.test(res.headers.get('x-request-id') ?? ''), p);
      assert.equal(res.headers.get('content-type'), 'application/json', p);
      // The rate limit is on in the harness: its headers come with these answers as with any other.
      assert.equal(res.headers.get('ratelimit-limit'), '120', p);
      assert.match(res.headers.get('ratelimit-remaining') ?? '', /^\d+$/, p);
      const echoed = await h.req('GET', p, { token, headers: { 'x-request-id': 'trace-7' } });
      assert.equal(echoed.headers.get('x-request-id'), 'trace-7', p);
    }
    assert.equal((await h.req('GET', `/api/v2/recordings/${id}`, { token })).headers.get('etag'), '"1"');
    // Errors on these routes still go through onError with the header.
    const missing = await h.req('GET', '/api/v2/recordings/rec_missing', { token, headers: { 'x-request-id': 'trace-8' } });
    assert.equal(missing.status, 404);
    assert.equal(missing.headers.get('x-request-id'), 'trace-8');
  });

  it('on the node server: the same headers, and a Content-Length that matches the body', async () => {
    const h = harness();
    const token = h.key();
    const created = await h.req('POST', '/api/v2/recordings', { token, body: { type: 'clip', transcript: 'hello wörld' }, headers: { 'idempotency-key': 'k1' } });
    const { port, close } = await listening(h.app.fetch, h.config);
    try {
      const base = `http://127.0.0.1:${port}`;
      for (const p of paths(created.json.recording.id as string)) {
        const res = await fetch(base + p, { headers: { authorization: `Bearer ${token}`, 'x-request-id': 'trace-9' } });
        const bytes = Buffer.from(await res.arrayBuffer());
        assert.equal(res.status, 200, p);
        assert.equal(res.headers.get('x-request-id'), 'trace-9', p);
        assert.equal(res.headers.get('content-type'), 'application/json', p);
        assert.equal(res.headers.get('ratelimit-limit'), '120', p);
        assert.equal(Number(res.headers.get('content-length')), bytes.length, p);
        assert.ok(JSON.parse(bytes.toString('utf8')), p);
      }
      const one = await fetch(`${base}/api/v2/recordings/${created.json.recording.id as string}`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(one.headers.get('etag'), '"1"');
      assert.ok(REQUEST_ID.test(one.headers.get('x-request-id') ?? ''));
    } finally {
      await close();
    }
  });
});

describe('/healthz answers with plain headers (plainJsonRoute) and the same headers as before', () => {
  it('on the node server: exactly Content-Type application/json, X-Request-Id (generated or echoed) and a matching Content-Length; {"status":"ok"}', async () => {
    const h = harness();
    const { port, close } = await listening(h.app.fetch, h.config);
    try {
      const base = `http://127.0.0.1:${port}`;
      for (const headers of [{}, { 'x-request-id': 'probe-1' }] as Record<string, string>[]) {
        const res = await fetch(`${base}/healthz`, { headers });
        const body = await res.text();
        assert.equal(res.status, 200);
        assert.equal(body, '{"status":"ok"}');
        const names = [...res.headers.keys()].filter((n) => !['date', 'connection', 'keep-alive'].includes(n)).sort();
        assert.deepEqual(names, ['content-length', 'content-type', 'x-request-id']);
        assert.equal(res.headers.get('content-type'), 'application/json');
        assert.equal(res.headers.get('content-length'), String(Buffer.byteLength(body)));
        assert.match(res.headers.get('x-request-id') ?? '', headers['x-request-id'] ? /^probe-1$/ : /^req_/);
      }
    } finally {
      await close();
    }
  });
});

describe('request bodies read from the Node request keep the body rules', () => {
  /** One raw HTTP exchange; `body` is sent as given (Content-Length or chunked framing). */
  function exchange(port: number, head: string[], body: string | Buffer): Promise<{ status: number; json: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1');
      let text = '';
      socket.on('data', (b) => (text += b.toString()));
      socket.on('error', reject);
      socket.on('close', () => {
        const payload = text.slice(text.indexOf('\r\n\r\n') + 4);
        let json: unknown;
        try {
          json = JSON.parse(payload);
        } catch {
          json = undefined;
        }
        resolve({ status: Number(text.split(' ')[1]), json });
      });
      socket.write(`POST /api/v2/recordings HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${head.map((l) => `${l}\r\n`).join('')}\r\n`);
      socket.end(body);
    });
  }

  it('on the node server: a create is read from the socket; over 1,500,000 bytes (declared or chunked) is 413; bad JSON, UTF-8 and Content-Type are 400', async () => {
    const h = harness();
    const token = h.key(['recordings:create', 'recordings:read']);
    const { port, close } = await listening(h.app.fetch, h.config);
    const auth = [`Authorization: Bearer ${token}`, 'Idempotency-Key: k1'];
    const json = (text: string) => ['Content-Type: application/json', `Content-Length: ${Buffer.byteLength(text)}`];
    const chunked = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n0\r\n\r\n`;
    try {
      const ok = JSON.stringify({ type: 'clip', title: 'über' });
      const created = await exchange(port, [...auth, ...json(ok)], ok);
      assert.equal(created.status, 201);
      assert.equal(created.json.recording.title, 'über');
      const big = JSON.stringify({ type: 'memo', transcript: 'a'.repeat(1_500_000) });
      assert.equal((await exchange(port, [...auth, ...json(big)], big)).status, 413, 'declared length');
      const sent = await exchange(port, [...auth, 'Content-Type: application/json', 'Transfer-Encoding: chunked'], chunked(big));
      assert.equal(sent.status, 413, 'chunked');
      assert.equal(sent.json.error.code, 'payload_too_large');
      const small = JSON.stringify({ type: 'clip', title: 'chunked' });
      const viaChunks = await exchange(port, ['Authorization: Bearer ' + token, 'Idempotency-Key: k2', 'Content-Type: application/json', 'Transfer-Encoding: chunked'], chunked(small));
      assert.equal(viaChunks.status, 201);
      const notJson = await exchange(port, [...auth, ...json('{"type":')], '{"type":');
      assert.equal(notJson.status, 400);
      assert.match(notJson.json.error.message, /not valid JSON/);
      const latin1 = Buffer.from('{"type":"clip","title":"\xff"}', 'latin1');
      const badUtf8 = await exchange(port, [...auth, 'Content-Type: application/json', `Content-Length: ${latin1.length}`], latin1);
      assert.equal(badUtf8.status, 400);
      const text = await exchange(port, [...auth, 'Content-Type: text/plain', `Content-Length: ${Buffer.byteLength(ok)}`], ok);
      assert.equal(text.status, 400);
      assert.match(text.json.error.message, /Content-Type/);
      const empty = await exchange(port, [...auth, 'Content-Type: application/json', 'Content-Length: 0'], '');
      assert.equal(empty.status, 400);
      assert.match(empty.json.error.message, /body is required/);
    } finally {
      await close();
    }
  });
});
