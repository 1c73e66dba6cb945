// The node server's direct answers (src/http/direct-routes.ts) must be exactly the app's: two node
// servers over the same services, one with the direct routes and one without (each with its own
// app, so each has its own rate limiter and sees the same sequence of requests), are sent the same
// raw requests, and their answers must be the same bytes but for the Date header.
import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, it, type TestContext } from 'node:test';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { testConfig } from '../../src/config';
import { openDatabase } from '../../src/db/open';
import { Writer } from '../../src/db/writer';
import { createServices } from '../../src/services';
import { sha256Hex } from '../../src/ids';
import { createApp } from '../../src/http/app';
import { directRoutes } from '../../src/http/direct-routes';
import { createNodeServer } from '../../src/http/node-server';
import { harness } from '../helpers/harness';

type Direct = (req: IncomingMessage, res: ServerResponse, toApp: () => void) => boolean;

async function serve(t: TestContext, fetch: (r: Request) => Response | Promise<Response>, direct?: Direct): Promise<number> {
  const server = createNodeServer(fetch, '127.0.0.1', testConfig(), undefined, direct);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  return (server.address() as AddressInfo).port;
}

/** Sends `head` (request line and headers, without the final blank line) and reads the whole answer. */
function raw(port: number, head: string, body = ''): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.on('error', reject);
    socket.write(`${head}\r\nConnection: close\r\n\r\n${body}`);
  });
}

const withoutDate = (answer: string) => answer.replace(/\r\nDate: [^\r]*/, '');

async function world(t: TestContext, rateLimit = 3) {
  const h = harness({ rateLimit });
  const answered: boolean[] = [];
  const direct = directRoutes(h.http.deps, '127.0.0.1');
  const spy: Direct = (req, res, toApp) => {
    const i = answered.length;
    // Taken and then handed to the app (a create that is not a success) is not answered here.
    const r = direct(req, res, () => {
      answered[i] = false;
      toApp();
    });
    answered.push(r);
    return r;
  };
  const withDirect = await serve(t, h.app.fetch, spy);
  const general = createApp(h.services, { logError: () => {} });
  const without = await serve(t, general.app.fetch);
  const writer = h.key(undefined, 'writer');
  const create = async (token: string, key: string) => {
    const r = await h.req('POST', '/api/v2/recordings', { token, headers: { 'idempotency-key': key }, body: { type: 'clip', title: 'T', transcript: 'some words' } });
    assert.equal(r.status, 201, r.text);
    return (r.json as { recording: { id: string } }).recording.id;
  };
  /** Both servers' answers to `head`; asserts they are the same and says whether the direct route answered. */
  const same = async (head: string, mask = false) => {
    const before = answered.length;
    const a = withoutDate(await raw(withDirect, head));
    const b = withoutDate(await raw(without, head));
    const m = (s: string) => (mask ? s.replace(/x-request-id: req_\w+/i, 'x-request-id: req_*') : s);
    assert.equal(m(a), m(b), head);
    return { answer: a, direct: answered.slice(before).includes(true) };
  };
  /**
   * The same for a write: `send(server)` gives each server its own request (its own Idempotency-Key:
   * both servers write to one library); the answers must be the same but for the ids and keys in
   * `masks` and the server's time.
   */
  const sameWrite = async (send: (server: 'direct' | 'app') => [string, string], masks: RegExp[] = []) => {
    const before = answered.length;
    const a = withoutDate(await raw(withDirect, ...send('direct')));
    const b = withoutDate(await raw(without, ...send('app')));
    const m = (s: string) => [/rec_\w{20}/g, /"updatedAt":\d+/g, ...masks].reduce((t, re) => t.replace(re, '*'), s);
    assert.equal(m(a), m(b));
    return { answer: a, direct: answered.slice(before).includes(true) };
  };
  return { h, writer, create, same, sameWrite };
}

const get = (path: string, headers: string[] = []) => ['GET ' + path + ' HTTP/1.1', 'Host: localhost', ...headers].join('\r\n');

describe('direct answers of the node server (GET /healthz, GET /api/v2/recordings/{id})', () => {
  it('GET /healthz: the same bytes as the app, with a given request id and with a new one', async (t) => {
    const w = await world(t);
    const given = await w.same(get('/healthz', ['X-Request-Id: probe-1']));
    assert.ok(given.direct, 'the direct route answered');
    assert.match(given.answer, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(given.answer, /\r\n\r\n\{"status":"ok"\}$/);
    assert.ok((await w.same(get('/healthz'), true)).direct);
    // Not direct: the app answers these as it always did.
    assert.equal((await w.same(get('/healthz?x=1', ['X-Request-Id: p2']))).direct, false);
    assert.equal((await w.same(['HEAD /healthz HTTP/1.1', 'Host: localhost', 'X-Request-Id: p3'].join('\r\n'))).direct, false);
  });

  it('GET a recording: found, not found, deleted (410), another account\'s, bad or missing key, no permission, rate limited: the same bytes', async (t) => {
    const w = await world(t, 4);
    const reader = w.h.key(['recordings:read'], 'reader');
    const id = await w.create(w.writer, 'k1');
    const gone = await w.create(w.writer, 'k2');
    assert.equal((await w.h.req('DELETE', `/api/v2/recordings/${gone}`, { token: w.writer, headers: { 'if-match': '"1"' } })).status, 204);
    const other = w.h.services.auth.createAccount('other', 'correct horse');
    const otherKey = w.h.services.auth.createKey(other.id, { name: 'o', permissions: ['recordings:read', 'recordings:create'] }).secret;
    const theirs = await w.create(otherKey, 'k3');
    const auth = (token: string) => [`Authorization: Bearer ${token}`, 'X-Request-Id: r-1'];

    const found = await w.same(get(`/api/v2/recordings/${id}`, auth(reader)));
    assert.ok(found.direct);
    assert.match(found.answer, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(found.answer, /\r\nRateLimit-Remaining: 3\r\n/);
    assert.match(found.answer, /\r\netag: "1"\r\n/);
    const cases: Array<[string, string, number]> = [
      ['not found', get('/api/v2/recordings/rec_doesnotexist', auth(reader)), 404],
      ['deleted', get(`/api/v2/recordings/${gone}`, auth(reader)), 410],
      ['another account\'s', get(`/api/v2/recordings/${theirs}`, auth(reader)), 404],
    ];
    for (const [what, head, status] of cases) {
      const r = await w.same(head);
      assert.equal(r.direct, false, what);
      assert.match(r.answer, new RegExp(`^HTTP/1\\.1 ${status} `), what);
    }
    // The rate limit (4 a minute) is spent now: one success and three refusals counted.
    const limited = await w.same(get(`/api/v2/recordings/${id}`, auth(reader)));
    assert.equal(limited.direct, false);
    assert.match(limited.answer, /^HTTP\/1\.1 429 /);
    w.h.clock.advance(61_000);

    const refused: Array<[string, string, number]> = [
      ['unknown key', get(`/api/v2/recordings/${id}`, auth('rlk_notakey')), 401],
      ['not a bearer', get(`/api/v2/recordings/${id}`, ['Authorization: Basic abc', 'X-Request-Id: r-1']), 401],
      ['no credential', get(`/api/v2/recordings/${id}`, ['X-Request-Id: r-1']), 401],
      ['no permission', get(`/api/v2/recordings/${id}`, auth(w.h.key(['recordings:create'], 'creator'))), 403],
      ['a Host the adapter refuses', ['GET /api/v2/recordings/' + id + ' HTTP/1.1', 'Host: 0x7f.1', ...auth(reader)].join('\r\n'), 400],
      // Node keeps the first Host (req.headers, which the adapter reads): the second is not looked at.
      ['two Hosts, the first one the adapter refuses', ['GET /api/v2/recordings/' + id + ' HTTP/1.1', 'Host: 0x7f.1', 'Host: localhost', ...auth(reader)].join('\r\n'), 400],
      ['an id the route refuses', get('/api/v2/recordings/_abc', auth(reader)), 400],
      ['an escaped id', get(`/api/v2/recordings/${id.slice(0, 3)}%5F${id.slice(4)}`, auth(reader)), 200],
      ['a query', get(`/api/v2/recordings/${id}?x=1`, auth(reader)), 200],
    ];
    for (const [what, head, status] of refused) {
      // The adapter's own refusal (a bad Host) always has a new request id.
      const r = await w.same(head, status === 400 && head.includes('0x7f'));
      assert.equal(r.direct, false, what);
      assert.match(r.answer, new RegExp(`^HTTP/1\\.1 ${status} `), what);
    }
    // With a new request id.
    w.h.clock.advance(61_000);
    assert.ok((await w.same(get(`/api/v2/recordings/${id}`, [`Authorization: Bearer ${reader}`]), true)).direct);
    // Two Hosts, the first one taken: answered here, as the adapter would.
    assert.ok((await w.same(get(`/api/v2/recordings/${id}`, ['Host: 0x7f.1', `Authorization: Bearer ${reader}`]), true)).direct);
  });

  it('with the rate limit off, the answer has no RateLimit headers, as the app\'s', async (t) => {
    const w = await world(t, 0);
    const id = await w.create(w.writer, 'k1');
    const r = await w.same(get(`/api/v2/recordings/${id}`, [`Authorization: Bearer ${w.writer}`, 'X-Request-Id: r-2']));
    assert.ok(r.direct);
    assert.doesNotMatch(r.answer, /RateLimit/);
  });

  it('POST /api/v2/recordings: created, replayed, refused, invalid, unauthorised, rate limited: the same bytes as the app', async (t) => {
    const w = await world(t, 10);
    const reader = w.h.key(['recordings:read'], 'reader');
    const creator = w.h.key(['recordings:create'], 'creator');
    /** A create request: each server gets its own Idempotency-Key (`${key}-direct` or `${key}-app`) unless `shared`. */
    const post = (key: string | undefined, body: unknown, headers: string[] = [], token = w.writer, shared = false) => (server: 'direct' | 'app'): [string, string] => {
      const text = typeof body === 'string' ? body : JSON.stringify(body);
      const head = [
        'POST /api/v2/recordings HTTP/1.1',
        'Host: localhost',
        `Authorization: Bearer ${token}`,
        'X-Request-Id: c-1',
        ...(key === undefined ? [] : [`Idempotency-Key: ${shared ? key : `${key}-${server === 'direct' ? 'd' : 'a'}`}`]),
        ...(headers.some((h) => /^content-type:/i.test(h)) ? [] : ['Content-Type: application/json']),
        ...headers,
        `Content-Length: ${Buffer.byteLength(text)}`,
      ].join('\r\n');
      return [head, text];
    };
    const keyMask = /k\d+-[da]\b/g;
    // Creates run (both servers share the services): a refused one must not run twice.
    let runs = 0;
    const createGrouped = w.h.services.recordings.createGrouped.bind(w.h.services.recordings);
    w.h.services.recordings.createGrouped = (...args) => {
      runs++;
      return createGrouped(...args);
    };
    const clip = { type: 'clip', title: 'Buy milk', transcript: 'todo buy milk', recordedAt: 1_790_000_000_000 };

    const created = await w.sameWrite(post('k1', clip));
    assert.ok(created.direct, 'a create is answered directly');
    assert.match(created.answer, /^HTTP\/1\.1 201 Created\r\n/);
    assert.match(created.answer, /\r\nRateLimit-Remaining: 9\r\netag: "1"\r\nlocation: \/api\/v2\/recordings\/rec_\w{20}\r\n/);
    const replayed = await w.sameWrite(post('k1', clip));
    assert.ok(replayed.direct);
    assert.match(replayed.answer, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(replayed.answer, /\r\nidempotent-replayed: true\r\n/);
    // Refused by the writer: handed to the app, which answers the writer's error without running
    // the create again, and counted once (RateLimit-Remaining as the app's).
    const before = runs;
    const conflict = await w.sameWrite(post('k1', { ...clip, title: 'Buy oat milk' }), [keyMask]);
    assert.equal(runs - before, 2, 'once on each server');
    assert.equal(conflict.direct, false);
    assert.match(conflict.answer, /^HTTP\/1\.1 409 /);
    assert.match(conflict.answer, /\r\nratelimit-remaining: 7\r\n/i);
    // A write-only key gets the reference only.
    const ref = await w.sameWrite(post('k2', clip, [], creator));
    assert.ok(ref.direct);
    assert.match(ref.answer, /\r\n\r\n\{"recording":\{"id":"rec_\w{20}","revision":1\}\}$/);

    const refused: Array<[string, (server: 'direct' | 'app') => [string, string], number]> = [
      ['not JSON', post('k3', '{"type": "clip",'), 400],
      ['a field the schema refuses', post('k4', { ...clip, type: 'song' }), 400],
      ['an unknown field', post('k5', { ...clip, colour: 'red' }), 400],
      ['a lone surrogate', post('k6', '{"type":"clip","title":"\\ud800"}'), 400],
      ['no Idempotency-Key', post(undefined, clip), 400],
      ['a Content-Type that is not JSON', post('k7', clip, ['Content-Type: text/plain']), 400],
      ['no permission', post('k8', clip, [], reader), 403],
      ['an unknown key', post('k9', clip, [], 'rlk_notakey'), 401],
    ];
    for (const [what, send, status] of refused) {
      const r = await w.sameWrite(send, [keyMask]);
      assert.equal(r.direct, false, what);
      assert.match(r.answer, new RegExp(`^HTTP/1\\.1 ${status} `), what);
    }
    // The writer key's 10 a minute: 9 counted above (the refusals after the take too, as the app
    // counts them); the 10th is created, the 11th refused by both.
    const last = await w.sameWrite(post('k10', clip));
    assert.ok(last.direct);
    assert.match(last.answer, /\r\nRateLimit-Remaining: 0\r\n/);
    const limited = await w.sameWrite(post('k11', clip));
    assert.equal(limited.direct, false);
    assert.match(limited.answer, /^HTTP\/1\.1 429 /);
    w.h.clock.advance(61_000);

    // A recording deleted since: replaying its key is refused by the writer (410), answered by the app.
    // (Set up through the services: a request to either server would count against one limit only.)
    const principal = w.h.services.auth.authenticate(w.writer);
    for (const server of ['d', 'a']) {
      const { row } = w.h.services.recordings.create(principal, { type: 'clip', title: 'T', transcript: 'some words' }, `gone-${server}`);
      w.h.services.recordings.remove(principal, row.id, 1);
    }
    const gone = await w.sameWrite(post('gone', { type: 'clip', title: 'T', transcript: 'some words' }), [/gone-[da]/g]);
    assert.equal(gone.direct, false);
    assert.match(gone.answer, /^HTTP\/1\.1 410 /);
  });

  it('GET a recording with a cached key that another connection (the CLI) revoked: refused on the very next request, by the app', async (t) => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-direct-')), 'a.db');
    const h = harness({ db: file, rateLimit: 0 });
    let direct = 0;
    const routes = directRoutes(h.http.deps, '127.0.0.1');
    const port = await serve(t, h.app.fetch, (req, res, toApp) => routes(req, res, toApp) && ++direct > 0);
    const reader = h.key(['recordings:read'], 'reader');
    const created = await h.req('POST', '/api/v2/recordings', { token: h.key(undefined, 'writer'), headers: { 'idempotency-key': 'k1' }, body: { type: 'clip', transcript: 'words' } });
    const id = (created.json as { recording: { id: string } }).recording.id;
    const read = () => raw(port, get(`/api/v2/recordings/${id}`, [`Authorization: Bearer ${reader}`]));
    // The first read caches the key; the second takes it from the cache unchecked.
    for (let i = 1; i <= 2; i++) {
      assert.match(await read(), /^HTTP\/1\.1 200 OK\r\n/);
      assert.equal(direct, i);
    }
    // The admin CLI: another connection to the file, which this process hears nothing from.
    const db = openDatabase(file);
    t.after(() => db.close());
    const cli = createServices({ db, writer: new Writer(db, undefined, h.clock), clock: h.clock, config: testConfig({ db: file }), masterSecret: randomBytes(32) });
    cli.auth.revokeKey(h.accountId, cli.auth.listKeys(h.accountId).find((k) => k.name === 'reader')!.id);
    const refused = await read();
    assert.match(refused, /^HTTP\/1\.1 401 /);
    assert.match(refused, /revoked/);
    assert.equal(direct, 2, 'the app answered the refusal');
  });

  it('POST /api/v2/recordings with a cached key that another connection (the CLI) revoked: refused (401), nothing created', async (t) => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-direct-')), 'a.db');
    const h = harness({ db: file, rateLimit: 0 });
    let handedOver = 0;
    const routes = directRoutes(h.http.deps, '127.0.0.1');
    const port = await serve(t, h.app.fetch, (req, res, toApp) => routes(req, res, () => (handedOver++, toApp())));
    const creator = h.key(['recordings:create'], 'creator');
    const count = () => h.services.core.db.prepare('SELECT count(*) FROM recordings').pluck().get();
    const create = (key: string) => {
      const body = JSON.stringify({ type: 'clip', transcript: 'words' });
      const head = ['POST /api/v2/recordings HTTP/1.1', 'Host: localhost', `Authorization: Bearer ${creator}`, `Idempotency-Key: ${key}`, 'Content-Type: application/json', `Content-Length: ${body.length}`].join('\r\n');
      return raw(port, head, body);
    };
    // The first create caches the key; the second takes it from the cache unchecked.
    for (const key of ['c1', 'c2']) assert.match(await create(key), /^HTTP\/1\.1 201 /);
    assert.equal(handedOver, 0);
    assert.equal(count(), 2);
    const db = openDatabase(file);
    t.after(() => db.close());
    const cli = createServices({ db, writer: new Writer(db, undefined, h.clock), clock: h.clock, config: testConfig({ db: file }), masterSecret: randomBytes(32) });
    cli.auth.revokeKey(h.accountId, cli.auth.listKeys(h.accountId).find((k) => k.name === 'creator')!.id);
    const refused = await create('c3');
    assert.match(refused, /^HTTP\/1\.1 401 /);
    assert.match(refused, /revoked/);
    assert.equal(handedOver, 1, 'the app answered the refusal');
    assert.equal(count(), 2, 'nothing created');
  });

  it('a cached key or session revoked or ended by another connection, rate limit on: GET and POST answered with the app\'s bytes (401), the take given back, nothing created', async (t) => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-direct-')), 'a.db');
    const h = harness({ db: file, rateLimit: 5 });
    let direct = 0;
    let handedOver = 0;
    const routes = directRoutes(h.http.deps, '127.0.0.1');
    const withDirect = await serve(t, h.app.fetch, (req, res, toApp) => {
      const r = routes(req, res, () => (handedOver++, toApp()));
      if (r) direct++;
      return r;
    });
    // The same services without the direct routes: its own app, so its own rate limiter.
    const general = createApp(h.services, { logError: () => {} });
    const without = await serve(t, general.app.fetch);
    const key = h.key(['recordings:create', 'recordings:read'], 'both');
    const session = h.services.auth.createSession(h.accountId).token;
    const sessionId = h.services.auth.store.sessionByHash(sha256Hex(session))!.id;
    const count = () => h.services.core.db.prepare('SELECT count(*) FROM recordings').pluck().get();
    const body = JSON.stringify({ type: 'clip', transcript: 'words' });
    const post = (token: string, idempotencyKey: string) =>
      [['POST /api/v2/recordings HTTP/1.1', 'Host: localhost', `Authorization: Bearer ${token}`, 'X-Request-Id: r-1', `Idempotency-Key: ${idempotencyKey}`, 'Content-Type: application/json', `Content-Length: ${body.length}`].join('\r\n'), body] as const;
    const read = (token: string, id: string) => get(`/api/v2/recordings/${id}`, [`Authorization: Bearer ${token}`, 'X-Request-Id: r-2']);
    // Each credential creates one recording through the direct route: now cached, one take each.
    const ids: Record<string, string> = {};
    for (const [name, token] of [['key', key], ['session', session]] as const) {
      const created = await raw(withDirect, ...post(token, `${name}-1`));
      assert.match(created, /^HTTP\/1\.1 201 /);
      ids[name] = /"id":"(rec_\w+)"/.exec(created)![1]!;
    }
    assert.equal(direct, 2);
    assert.equal(handedOver, 0);
    const db = openDatabase(file);
    t.after(() => db.close());
    const cli = createServices({ db, writer: new Writer(db, undefined, h.clock), clock: h.clock, config: testConfig({ db: file }), masterSecret: randomBytes(32) });
    const keyId = h.services.auth.listKeys(h.accountId).find((k) => k.name === 'both')!.id;
    const cases = [
      { name: 'key', token: key, message: /API key has been revoked/, revoke: () => cli.auth.revokeKey(h.accountId, keyId) },
      { name: 'session', token: session, message: /session is not valid/, revoke: () => cli.auth.revokeSession(h.accountId, sessionId) },
    ];
    for (const { name, token, message, revoke } of cases) {
      // Cached (again: the refusals of the case before dropped the cache), without a take.
      h.services.auth.authenticate(token);
      assert.ok(h.services.auth.cached(token));
      revoke();
      const handedBefore: number = handedOver;
      // Direct first: the create is taken with the cached credential unchecked and refused in the
      // writer's transaction; then the app's server; then each once more (uncached by then).
      for (const first of ['direct', 'app', 'direct'] as const) {
        const order = first === 'direct' ? [withDirect, without] : [without, withDirect];
        const answers: Record<number, string> = {};
        for (const port of order) answers[port] = withoutDate(await raw(port, ...post(token, `${name}-2`)));
        assert.equal(answers[withDirect], answers[without], `${name}: POST`);
        assert.match(answers[withDirect]!, /^HTTP\/1\.1 401 /);
        assert.match(answers[withDirect]!, message);
        const [c, d] = [await raw(withDirect, read(token, ids[name]!)), await raw(without, read(token, ids[name]!))];
        assert.equal(withoutDate(c), withoutDate(d), `${name}: GET`);
        assert.match(c, /^HTTP\/1\.1 401 /);
      }
      assert.equal(handedOver - handedBefore, 1, `${name}: the first create was taken unchecked, refused by the writer and handed to the app`);
    }
    assert.equal(direct - handedOver, 2, 'every refusal answered by the app');
    assert.equal(count(), 2, 'nothing created');
    // The direct server's limiter counted the first create of each and nothing since (the take of
    // a create the writer refused was given back); the app's counted nothing.
    for (const credential of [keyId, sessionId]) {
      assert.equal(h.http.deps.rateLimiter.take(credential)?.['RateLimit-Remaining'], '3');
      assert.equal(general.deps.rateLimiter.take(credential)?.['RateLimit-Remaining'], '4');
    }
  });

  it("POST /api/v2/recordings counts against the key's rate limit before its body is read: one key's bodies in flight are bounded by its budget", async (t) => {
    const w = await world(t, 2);
    const port = await serve(t, w.h.app.fetch, directRoutes(w.h.http.deps, '127.0.0.1'));
    const body = JSON.stringify({ type: 'clip', title: 'T', transcript: 'held back' });
    const open = (key: string) => {
      const socket = net.connect(port, '127.0.0.1');
      const chunks: Buffer[] = [];
      socket.on('data', (c) => chunks.push(c));
      socket.on('error', () => {});
      t.after(() => socket.destroy());
      socket.write(['POST /api/v2/recordings HTTP/1.1', 'Host: localhost', `Authorization: Bearer ${w.writer}`, `Idempotency-Key: ${key}`, 'Content-Type: application/json', `Content-Length: ${body.length}`, 'Connection: close', '', body.slice(0, 10)].join('\r\n'));
      return { socket, answer: () => Buffer.concat(chunks).toString('latin1'), rest: () => socket.write(body.slice(10)) };
    };
    const settle = () => new Promise((resolve) => setTimeout(resolve, 150));
    const a = open('held-a');
    await settle();
    const b = open('held-b');
    await settle();
    const c = open('held-c');
    await settle();
    assert.match(c.answer(), /^HTTP\/1\.1 429 /, 'the third is refused while the first two still send their bodies');
    assert.equal(a.answer(), '');
    assert.equal(b.answer(), '');
    a.rest();
    b.rest();
    await settle();
    assert.match(a.answer(), /^HTTP\/1\.1 201 /);
    assert.match(b.answer(), /^HTTP\/1\.1 201 /);
  });

  it('POST /api/v2/recordings from a client that goes away before its body is complete: nothing is created, the server goes on', async (t) => {
    const w = await world(t, 0);
    const port = await serve(t, w.h.app.fetch, directRoutes(w.h.http.deps, '127.0.0.1'));
    const count = () => w.h.services.core.db.prepare('SELECT count(*) FROM recordings').pluck().get();
    const before = count();
    await new Promise<void>((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.write(
          ['POST /api/v2/recordings HTTP/1.1', 'Host: localhost', `Authorization: Bearer ${w.writer}`, 'Idempotency-Key: half', 'Content-Type: application/json', 'Content-Length: 200', '', '{"type":"clip",'].join('\r\n'),
          () => setTimeout(() => socket.destroy(), 50),
        );
      });
      socket.on('close', () => resolve());
      socket.on('error', reject);
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(count(), before);
    const r = await raw(port, ['GET /healthz HTTP/1.1', 'Host: localhost'].join('\r\n'));
    assert.match(r, /^HTTP\/1\.1 200 OK\r\n/);
  });
});
