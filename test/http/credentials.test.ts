// docs/decisions.md §3 and §16: which credentials are accepted, and that every bad one is a
// 401 envelope (never a 500), a missing permission 403 forbidden, a key on a session-only route
// 403 session_required.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { harness as baseHarness, type TestResponse } from '../helpers/harness';
import { mountProbe } from '../helpers/probe-routes';

const harness = () => {
  const h = baseHarness();
  mountProbe(h);
  return h;
};

const DAY = 86_400_000;

function assertError(res: TestResponse, status: number, code: string): void {
  assert.equal(res.status, status, res.text);
  assert.equal(res.json?.error?.code, code, res.text);
  assert.equal(typeof res.json.error.message, 'string');
  assert.ok(res.headers.get('x-request-id'));
}

describe('401 unauthenticated for bad credentials, never 500', () => {
  it('a request without credentials gets 401', async () => {
    const h = harness();
    assertError(await h.req('GET', '/api/v2/api-keys'), 401, 'unauthenticated');
  });

  it('garbage, wrong-length and malformed tokens get 401', async () => {
    const h = harness();
    const real = h.key();
    const bad = [
      'garbage',
      'rlk_',
      'rlk_short',
      real.slice(0, -1),
      real + 'x',
      'rlk_' + 'A'.repeat(500),
      'rls_' + 'z'.repeat(43),
      'rls_',
      '%%%%',
      'rlk_\u00e9\u00e9',
      'Bearer',
    ];
    for (const token of bad) {
      assertError(await h.req('GET', '/api/v2/api-keys', { token }), 401, 'unauthenticated');
    }
    for (const authorization of ['', 'Basic dXNlcjpwYXNz', 'Bearer', 'Bearer ', 'bearer a b', 'Bearer ' + 'x'.repeat(600), 'Token rlk_x']) {
      assertError(await h.req('GET', '/api/v2/api-keys', { headers: { authorization } }), 401, 'unauthenticated');
    }
    assert.deepEqual(h.errors, []);
  });

  it('a malformed session cookie gets 401', async () => {
    const h = harness();
    for (const cookie of ['reclib_session=nope', 'reclib_session=rls_nope', 'reclib_session=%E0%A4%A', 'reclib_session=']) {
      const res = await h.req('GET', '/api/v2/api-keys', { headers: { cookie } });
      assertError(res, 401, 'unauthenticated');
    }
  });

  it('the 401 message never echoes the token', async () => {
    const h = harness();
    const token = 'rlk_' + 'S'.repeat(43);
    const res = await h.req('GET', '/api/v2/api-keys', { token });
    assert.equal(res.status, 401);
    assert.ok(!res.text.includes('SSSSSSSS'));
  });

  it('a revoked key gets 401 on the next request', async () => {
    const h = harness();
    const created = await h.req('POST', '/api/v2/api-keys', { token: h.session, body: { name: 'k', permissions: ['events:read'] } });
    const { key, secret } = created.json;
    assert.equal((await h.req('GET', '/probe/read', { token: secret })).status === 401, false);
    assert.equal((await h.req('DELETE', `/api/v2/api-keys/${key.id}`, { token: h.session })).status, 204);
    const res = await h.req('GET', '/probe/read', { token: secret });
    assertError(res, 401, 'unauthenticated');
    assert.match(res.json.error.message, /revoked/);
  });

  it('an expired key gets 401 (fake clock)', async () => {
    const h = harness();
    const { secret } = h.services.auth.createKey(h.accountId, { name: 'short', permissions: ['events:read'], expiry: 1 });
    h.clock.advance(DAY - 1);
    assert.notEqual((await h.req('GET', '/probe/read', { token: secret })).status, 401);
    h.clock.advance(1);
    const res = await h.req('GET', '/probe/read', { token: secret });
    assertError(res, 401, 'unauthenticated');
    assert.match(res.json.error.message, /expired/);
  });

  it('an ended session gets 401', async () => {
    const h = harness();
    assert.equal((await h.req('GET', '/api/v2/api-keys', { token: h.session })).status, 200);
    assert.equal((await h.req('DELETE', '/api/session', { token: h.session })).status, 204);
    assertError(await h.req('GET', '/api/v2/api-keys', { token: h.session }), 401, 'unauthenticated');
  });

  it('an expired session gets 401 (fake clock)', async () => {
    const h = harness();
    const { token } = h.services.auth.createSession(h.accountId, 2);
    assert.equal((await h.req('GET', '/api/v2/api-keys', { token })).status, 200);
    h.clock.advance(2 * 3_600_000);
    assertError(await h.req('GET', '/api/v2/api-keys', { token }), 401, 'unauthenticated');
  });
});

describe('403 for a missing permission or a key on a session-only route', () => {
  it('a key without the route permission gets 403 forbidden', async () => {
    const h = harness();
    const token = h.key(['recordings:read']);
    const res = await h.req('GET', '/probe/read', { token });
    assertError(res, 403, 'forbidden');
    assert.match(res.json.error.message, /events:read/);
  });

  it('a key on a session-only route gets 403 session_required', async () => {
    const h = harness();
    const token = h.key();
    const calls: Array<[string, string, unknown?]> = [
      ['POST', '/api/v2/api-keys', { name: 'x', permissions: ['events:read'] }],
      ['GET', '/api/v2/api-keys'],
      ['DELETE', '/api/v2/api-keys/key_whatever'],
      ['POST', '/api/v1/tokens', { name: 'x', scopes: ['events:read'] }],
      ['GET', '/api/v1/tokens'],
    ];
    for (const [method, path, body] of calls) {
      assertError(await h.req(method, path, { token, body }), 403, 'session_required');
    }
  });

  it('a session acts with every permission', async () => {
    const h = harness();
    assert.equal((await h.req('GET', '/probe/read', { token: h.session })).status, 200);
  });
});
