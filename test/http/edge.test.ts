// The HTTP edge (docs/decisions.md §4, §5): the rate limit, X-Request-Id on every response, the 404
// envelope for unknown routes, and unexpected failures as 500 internal without internals.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_JSON_BYTES } from '../../src/http/body';
import { harness as baseHarness } from '../helpers/harness';
import { mountProbe, PROBE_FAILURE } from '../helpers/probe-routes';

const harness = (over: Parameters<typeof baseHarness>[0] = {}) => {
  const h = baseHarness(over);
  mountProbe(h);
  return h;
};
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

describe('429 rate_limited after 120 requests within a minute per key', () => {
  it('the 121st request within a minute gets 429 with integer Retry-After and RateLimit headers', async () => {
    const h = harness();
    const token = h.key();
    for (let i = 1; i <= 120; i++) {
      const res = await h.req('GET', '/probe/read', { token });
      assert.equal(res.status, 200, `request ${i}`);
      assert.equal(res.headers.get('ratelimit-limit'), '120');
      assert.equal(res.headers.get('ratelimit-remaining'), String(120 - i));
      if (i % 40 === 0) h.clock.advance(10_000);
    }
    const res = await h.req('GET', '/probe/read', { token });
    assert.equal(res.status, 429);
    assert.equal(res.json.error.code, 'rate_limited');
    assert.match(res.headers.get('retry-after') ?? '', /^\d+$/);
    assert.equal(res.headers.get('retry-after'), '30'); // 30 s have passed; the first request leaves the window at +60 s
    assert.equal(res.headers.get('ratelimit-limit'), '120');
    assert.equal(res.headers.get('ratelimit-remaining'), '0');
    assert.ok(REQUEST_ID.test(res.headers.get('x-request-id') ?? ''));
  });

  it('an error answer carries the RateLimit headers too: a create refused on its body or its key, a read of a missing recording', async () => {
    const h = harness({ rateLimit: 10 });
    const token = h.key();
    const headers = { 'idempotency-key': 'k1' };
    const created = await h.req('POST', '/api/v2/recordings', { token, headers, body: { type: 'clip', transcript: 'one' } });
    const answers = [
      created,
      await h.req('POST', '/api/v2/recordings', { token, headers, body: { type: 'clip', transcript: 'another body' } }), // 409
      await h.req('POST', '/api/v2/recordings', { token, body: { type: 'clip' } }), // 400: no Idempotency-Key
      await h.req('POST', '/api/v2/recordings', { token, headers: { 'idempotency-key': 'k2' }, body: { type: 'tape' } }), // 400
      await h.req('GET', '/api/v2/recordings/rec_missing', { token }), // 404
    ];
    assert.deepEqual(answers.map((r) => r.status), [201, 409, 400, 400, 404]);
    answers.forEach((r, i) => {
      assert.equal(r.headers.get('ratelimit-limit'), '10', `answer ${i}`);
      assert.equal(r.headers.get('ratelimit-remaining'), String(9 - i), `answer ${i}`);
    });
  });

  it('requests are allowed again once the window has passed (fake clock)', async () => {
    const h = harness();
    const token = h.key();
    for (let i = 0; i < 120; i++) await h.req('GET', '/probe/read', { token });
    h.clock.advance(59_000);
    const still = await h.req('GET', '/probe/read', { token });
    assert.equal(still.status, 429);
    assert.equal(still.headers.get('retry-after'), '1');
    h.clock.advance(1_000);
    const again = await h.req('GET', '/probe/read', { token });
    assert.equal(again.status, 200);
    assert.equal(again.headers.get('ratelimit-remaining'), '119');
  });

  it('the window slides: requests count for 60 s after they were made', async () => {
    const h = harness();
    const token = h.key();
    for (let i = 0; i < 60; i++) await h.req('GET', '/probe/read', { token });
    h.clock.advance(30_000);
    for (let i = 0; i < 60; i++) assert.equal((await h.req('GET', '/probe/read', { token })).status, 200);
    assert.equal((await h.req('GET', '/probe/read', { token })).status, 429);
    h.clock.advance(30_000); // the first 60 leave the window
    for (let i = 0; i < 60; i++) assert.equal((await h.req('GET', '/probe/read', { token })).status, 200);
    const res = await h.req('GET', '/probe/read', { token });
    assert.equal(res.status, 429);
    assert.equal(res.headers.get('retry-after'), '30');
  });

  it('the limit is per key: another key of the same account is unaffected', async () => {
    const h = harness();
    const a = h.key();
    const b = h.key();
    for (let i = 0; i < 120; i++) await h.req('GET', '/probe/read', { token: a });
    assert.equal((await h.req('GET', '/probe/read', { token: a })).status, 429);
    assert.equal((await h.req('GET', '/probe/read', { token: b })).status, 200);
  });

  it('--rate-limit N sets the limit and 0 turns it off', async () => {
    const small = harness({ rateLimit: 3 });
    const t = small.key();
    for (let i = 0; i < 3; i++) assert.equal((await small.req('GET', '/probe/read', { token: t })).status, 200);
    assert.equal((await small.req('GET', '/probe/read', { token: t })).status, 429);
    const off = harness({ rateLimit: 0 });
    const token = off.key();
    for (let i = 0; i < 300; i++) assert.equal((await off.req('GET', '/probe/read', { token })).status, 200);
  });
});

describe('X-Request-Id on every response', () => {
  it('200, 401, 404, 413, 429 and 500 responses all carry X-Request-Id', async () => {
    const h = harness({ rateLimit: 1 });
    const token = h.key();
    const seen: Array<[number, string | null]> = [];
    const record = async (p: Promise<{ status: number; headers: Headers }>) => {
      const res = await p;
      seen.push([res.status, res.headers.get('x-request-id')]);
    };
    await record(h.req('GET', '/healthz'));
    await record(h.req('GET', '/probe/read'));
    await record(h.req('GET', '/no/such/route'));
    await record(h.req('POST', '/probe/echo', { token: h.key(), body: `{"text":"${'a'.repeat(MAX_JSON_BYTES)}"}` }));
    await record(h.req('GET', '/probe/read', { token }));
    await record(h.req('GET', '/probe/read', { token }));
    await record(h.req('GET', '/probe/boom'));
    await record(h.req('GET', '/api/v2/openapi.json'));
    await record(h.req('GET', '/docs'));
    assert.deepEqual(seen.map(([s]) => s), [200, 401, 404, 413, 200, 429, 500, 200, 200]);
    for (const [status, id] of seen) assert.ok(id && REQUEST_ID.test(id), `status ${status}: ${id}`);
    assert.equal(new Set(seen.map(([, id]) => id)).size, seen.length, 'ids are unique');
  });

  it('a valid incoming X-Request-Id is echoed, on errors too', async () => {
    const h = harness();
    for (const path of ['/healthz', '/nope', '/probe/read', '/probe/boom']) {
      const res = await h.req('GET', path, { headers: { 'x-request-id': 'trace-42.a:b_c' } });
      assert.equal(res.headers.get('x-request-id'), 'trace-42.a:b_c', path);
    }
    const long = 'a'.repeat(128);
    assert.equal((await h.req('GET', '/healthz', { headers: { 'x-request-id': long } })).headers.get('x-request-id'), long);
  });

  it('an invalid incoming X-Request-Id is replaced by a generated one', async () => {
    const h = harness();
    for (const bad of ['has space', 'a'.repeat(129), '<script>', 'semi;colon', 'ünï']) {
      const res = await h.req('GET', '/healthz', { headers: { 'x-request-id': bad } });
      const id = res.headers.get('x-request-id') ?? '';
      assert.notEqual(id, bad);
      assert.ok(REQUEST_ID.test(id), id);
    }
  });
});

describe('unknown routes and unexpected failures', () => {
  it('an unknown route is 404 not_found in the error envelope', async () => {
    const h = harness();
    for (const [method, path] of [['GET', '/nope'], ['GET', '/api/v2/nope'], ['POST', '/api/v1/nope'], ['PUT', '/api/v2/api-keys'], ['GET', '/api/v2']]) {
      const res = await h.req(method as string, path as string, { token: h.session });
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.deepEqual(Object.keys(res.json), ['error']);
      assert.equal(res.json.error.code, 'not_found');
      assert.equal(typeof res.json.error.message, 'string');
    }
  });

  it('an unexpected exception is 500 internal with no stack, SQL or secret in the body or the log', async () => {
    const h = harness();
    const res = await h.req('GET', '/probe/boom', { headers: { 'x-request-id': 'boom-1' } });
    assert.equal(res.status, 500);
    assert.deepEqual(Object.keys(res.json), ['error']);
    assert.equal(res.json.error.code, 'internal');
    assert.match(res.json.error.message, /boom-1/, 'the message quotes the request id');
    for (const leak of ['SELECT', 'api_keys', 'rlk_', 'PROBESECRET', 'probe-routes', '    at ', '.ts:']) {
      assert.ok(!res.text.includes(leak), `body leaks ${leak}`);
    }
    assert.equal(h.errors.length, 1);
    const line = h.errors[0] ?? '';
    assert.ok(!line.includes('\n'), 'one line');
    assert.match(line, /boom-1/);
    for (const leak of ['SELECT', 'api_keys', 'rlk_', 'PROBESECRET', PROBE_FAILURE]) assert.ok(!line.includes(leak), `log leaks ${leak}: ${line}`);
  });

  it('a failing service behind a real route is 500 internal too', async () => {
    const h = harness();
    h.services.auth.listKeys = () => {
      throw new Error(PROBE_FAILURE);
    };
    const res = await h.req('GET', '/api/v2/api-keys', { token: h.session });
    assert.equal(res.status, 500);
    assert.equal(res.json.error.code, 'internal');
    assert.ok(!res.text.includes('SELECT') && !h.errors.join('').includes('SELECT'));
  });

  it('a thrown non-Error value is still a 500 envelope', async () => {
    const h = harness();
    const res = await h.req('GET', '/probe/throw-null');
    assert.equal(res.status, 500);
    assert.equal(res.json.error.code, 'internal');
  });

  it('a database that stays locked is 503 unavailable with Retry-After', async () => {
    const h = harness();
    const res = await h.req('GET', '/probe/busy');
    assert.equal(res.status, 503);
    assert.equal(res.json.error.code, 'unavailable');
    assert.equal(res.headers.get('retry-after'), '1');
    assert.ok(!res.text.includes('locked'));
  });

  it('GET /healthz answers 200 {"status":"ok"} without credentials', async () => {
    const h = harness();
    const res = await h.req('GET', '/healthz');
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { status: 'ok' });
  });

  it('malformed percent-escapes in paths and queries are never 500', async () => {
    const h = harness();
    for (const path of ['/api/v2/api-keys/%E0%A4%A', '/api/v2/api-keys/%', '/api/v2/api-keys?x=%E0%A4%A', '/%ZZ']) {
      const res = await h.req(path.startsWith('/api/v2/api-keys/') ? 'DELETE' : 'GET', path, { token: h.session });
      assert.ok(res.status < 500, `${path}: ${res.status} ${res.text}`);
      assert.ok(res.json?.error || res.status < 300, path);
    }
  });
});
