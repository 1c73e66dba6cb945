// The request fast path: validated credentials are reused from a cache (src/services/principal-cache.ts)
// without weakening revocation, expiry or lastUsedAt; headers are read from Node's raw header list
// on the node server with the same meaning as Headers.get().
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { FakeClock } from '../src/clock';
import { testConfig } from '../src/config';
import type { Core } from '../src/context';
import { CommitWatch } from '../src/db/commit-watch';
import { openDatabase } from '../src/db/open';
import { Writer } from '../src/db/writer';
import { createNodeServer } from '../src/http/node-server';
import { newTimeOrderedId, randomBase62 } from '../src/ids';
import { createServices } from '../src/services';
import { harness } from './helpers/harness';

/** A second, independent connection to the same file: what the admin CLI is to the server. */
function services(file: string, clock = new FakeClock()) {
  const db = openDatabase(file);
  const core: Core = { db, writer: new Writer(db, undefined, clock), clock, config: testConfig({ db: file }), masterSecret: randomBytes(32) };
  return createServices(core);
}

describe('the principal cache never outlives a change to the credential', () => {
  /** A key made by `cli` and validated (so cached) by `server`, then revoked by `cli`, after `between`. */
  function revokedElsewhere(server: ReturnType<typeof services>, cli: ReturnType<typeof services>, between = () => {}) {
    const account = cli.auth.createAccount('owner');
    const { key, secret } = cli.auth.createKey(account.id, { name: 'k', permissions: ['recordings:read'] });
    assert.equal(server.auth.authenticate(secret).credentialId, key.id);
    assert.equal(server.auth.authenticate(secret).credentialId, key.id, 'served from the cache');
    between();
    cli.auth.revokeKey(account.id, key.id);
    assert.throws(() => server.auth.authenticate(secret), /revoked/);
  }
  const tempDb = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-auth-')), 'a.db');

  it('a key revoked by ANOTHER connection (the CLI) is refused on the very next request', () => {
    const file = tempDb();
    revokedElsewhere(services(file), services(file));
  });

  it('a key revoked by another connection right after that connection restarted the WAL is refused', () => {
    const file = tempDb();
    const cli = services(file);
    // TRUNCATE empties the WAL, so the next commit starts it over with new salts and frame 1: the
    // wal-index header is rewritten from scratch rather than moved on.
    revokedElsewhere(services(file), cli, () => cli.core.db.pragma('wal_checkpoint(TRUNCATE)'));
  });

  it('between commits the cache is checked without asking SQLite for data_version', () => {
    const file = tempDb();
    const db = openDatabase(file);
    let asked = 0;
    const pragma = db.prepare<[], number>('PRAGMA data_version').pluck();
    const watch = CommitWatch.of(db, () => {
      asked++;
      return pragma.get()!;
    });
    const first = watch.current();
    for (let i = 0; i < 100; i++) assert.equal(watch.current(), first);
    assert.equal(asked, 1, 'nothing was committed: the header alone answered');
    // Our own commit moves the header: data_version is asked once, and (own commit) is unchanged.
    db.exec('CREATE TABLE t (x)');
    assert.equal(watch.current(), first);
    assert.equal(asked, 2);
    // Another connection's commit: asked again, and the answer changes.
    const other = openDatabase(file);
    other.exec('INSERT INTO t VALUES (1)');
    assert.notEqual(watch.current(), first);
    assert.equal(asked, 3);
  });

  it('a database opened through a symlink is watched at its real file (a stale -shm beside the link is ignored)', () => {
    const real = tempDb();
    const link = path.join(path.dirname(real), 'link.db');
    services(real).core.db.close();
    fs.symlinkSync(real, link);
    fs.writeFileSync(`${link}-shm`, Buffer.alloc(32_768, 7)); // never changes
    revokedElsewhere(services(link), services(real));
  });

  it('an in-memory database (no -shm file) asks data_version on every look', () => {
    const db = openDatabase(':memory:');
    let asked = 0;
    const watch = CommitWatch.of(db, () => ++asked);
    watch.current();
    watch.current();
    assert.equal(asked, 2);
  });

  it('a key revoked in this process, and an ended session, are refused on the next request', async () => {
    const h = harness();
    const token = h.key(['recordings:read']);
    assert.equal((await h.req('GET', '/api/v2/recordings', { token })).status, 200);
    const [key] = h.services.auth.listKeys(h.accountId);
    assert.equal((await h.req('DELETE', `/api/v2/api-keys/${key!.id}`, { token: h.session })).status, 204);
    const after = await h.req('GET', '/api/v2/recordings', { token });
    assert.equal(after.status, 401);
    assert.match(after.json.error.message, /revoked/);

    assert.equal((await h.req('GET', '/api/v2/recordings', { token: h.session })).status, 200);
    assert.equal((await h.req('DELETE', '/api/session', { token: h.session })).status, 204);
    assert.equal((await h.req('GET', '/api/v2/recordings', { token: h.session })).status, 401);
  });

  it('a cached key expires on time (fake clock)', async () => {
    const h = harness();
    const { secret } = h.services.auth.createKey(h.accountId, { name: 'short', permissions: ['recordings:read'], expiry: 1 });
    assert.equal((await h.req('GET', '/api/v2/recordings', { token: secret })).status, 200);
    h.clock.advance(86_400_000 - 1);
    assert.equal((await h.req('GET', '/api/v2/recordings', { token: secret })).status, 200);
    h.clock.advance(1);
    const expired = await h.req('GET', '/api/v2/recordings', { token: secret });
    assert.equal(expired.status, 401);
    assert.match(expired.json.error.message, /expired/);
  });

  it('lastUsedAt is still written at most once a minute', async () => {
    const h = harness();
    const token = h.key(['recordings:read']);
    const lastUsed = () => h.services.auth.listKeys(h.accountId)[0]!.lastUsedAt;
    const start = h.clock.now();
    await h.req('GET', '/api/v2/recordings', { token });
    assert.equal(lastUsed(), start);
    h.clock.advance(59_999);
    await h.req('GET', '/api/v2/recordings', { token });
    assert.equal(lastUsed(), start);
    h.clock.advance(1);
    await h.req('GET', '/api/v2/recordings', { token });
    assert.equal(lastUsed(), start + 60_000);
  });

  it('a known credential is not looked up again while nothing changed', async () => {
    const h = harness();
    const token = h.key(['recordings:read']);
    const store = h.services.auth.store;
    let lookups = 0;
    const keyByHash = store.keyByHash.bind(store);
    store.keyByHash = (hash) => {
      lookups++;
      return keyByHash(hash);
    };
    for (let i = 0; i < 5; i++) assert.equal((await h.req('GET', '/api/v2/recordings', { token })).status, 200);
    assert.equal(lookups, 1);
    // A wrong token is never cached: each attempt is looked up (and refused) again.
    for (let i = 0; i < 2; i++) assert.equal((await h.req('GET', '/api/v2/recordings', { token: `rlk_${'x'.repeat(43)}` })).status, 401);
    assert.equal(lookups, 3);
  });
});

describe('headers read from the Node request mean what Headers.get() means', () => {
  it('on the node server: Authorization and X-Request-Id work, a repeated Authorization is refused', async () => {
    const h = harness();
    const token = h.key(['recordings:read']);
    const server = createNodeServer(h.app.fetch, '127.0.0.1', h.config);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
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
      await new Promise((resolve) => server.close(resolve));
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
    const server = createNodeServer(h.app.fetch, '127.0.0.1', h.config);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
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
      server.close();
    }
  });
});

describe('/healthz answers with plain headers (plainJsonRoute) and the same headers as before', () => {
  it('on the node server: exactly Content-Type application/json, X-Request-Id (generated or echoed) and a matching Content-Length; {"status":"ok"}', async () => {
    const h = harness();
    const server = createNodeServer(h.app.fetch, '127.0.0.1', h.config);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
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
      server.close();
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
    const server = createNodeServer(h.app.fetch, '127.0.0.1', h.config);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
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
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('ids', () => {
  it('ids from the pooled random bytes are distinct and match the id pattern', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 10_000; i++) seen.add(randomBase62(20));
    assert.equal(seen.size, 10_000);
    for (const id of seen) assert.match(id, /^[0-9A-Za-z]{20}$/);
  });

  it('recording ids are time-ordered: same shape as other ids, later ones sort after earlier ones, unique within a millisecond', () => {
    const ids = [0, 1, 61, 62, 1_700_000_000_000, 1_700_000_000_001, 1_767_225_600_000, 62 ** 8 - 1].map((t) => newTimeOrderedId('rec', t));
    for (const id of ids) assert.match(id, /^rec_[0-9A-Za-z]{20}$/);
    assert.deepEqual([...ids].sort(), ids, 'string order is time order');
    const sameMs = new Set(Array.from({ length: 10_000 }, () => newTimeOrderedId('rec', 1_767_225_600_000)));
    assert.equal(sameMs.size, 10_000);
    assert.ok([...sameMs].every((id) => id.startsWith(ids[6]!.slice(0, 12))), 'the first 8 characters after rec_ are the time');
  });

  it('a created recording gets a time-ordered id', async () => {
    const h = harness();
    const token = h.key();
    h.clock.set(1_767_225_600_000);
    const first = await h.req('POST', '/api/v2/recordings', { token, body: { type: 'clip' }, headers: { 'idempotency-key': 'a' } });
    h.clock.advance(1);
    const second = await h.req('POST', '/api/v2/recordings', { token, body: { type: 'clip' }, headers: { 'idempotency-key': 'b' } });
    assert.equal((first.json.recording.id as string).slice(0, 12), newTimeOrderedId('rec', 1_767_225_600_000).slice(0, 12));
    assert.ok((second.json.recording.id as string) > (first.json.recording.id as string));
  });
});
