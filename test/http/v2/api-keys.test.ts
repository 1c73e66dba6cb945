// docs/decisions.md §3: key management over v2 /api-keys and v1 /tokens (one table), the 50 active key
// limit, expiry 1-365 days (default 90), lastUsedAt.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { harness as baseHarness } from '../../helpers/harness';
import { mountProbe } from '../../helpers/probe-routes';

const DAY = 86_400_000;
const harness = () => {
  const h = baseHarness();
  mountProbe(h);
  return h;
};
const METADATA_FIELDS = ['createdAt', 'expiresAt', 'id', 'integrationId', 'lastUsedAt', 'name', 'permissions', 'revokedAt'];

describe('v2 /api-keys', () => {
  it('POST /api-keys answers 201 { key, secret } with rlk_ secret, key_ id and its own int_ identity', async () => {
    const h = harness();
    const res = await h.req('POST', '/api/v2/api-keys', { token: h.session, body: { name: 'sync', permissions: ['recordings:read', 'events:read'] } });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(Object.keys(res.json).sort(), ['key', 'secret']);
    const { key, secret } = res.json;
    assert.match(secret, /^rlk_[A-Za-z0-9]{43,}$/);
    assert.match(key.id, /^key_/);
    assert.match(key.integrationId, /^int_/);
    assert.deepEqual(Object.keys(key).sort(), METADATA_FIELDS);
    assert.deepEqual(key.permissions, ['recordings:read', 'events:read']);
    assert.equal(key.createdAt, h.clock.now());
    assert.equal(key.lastUsedAt, null);
    assert.equal(key.revokedAt, null);
    const other = await h.req('POST', '/api/v2/api-keys', { token: h.session, body: { name: 'sync', permissions: ['events:read'] } });
    assert.notEqual(other.json.key.integrationId, key.integrationId);
  });

  it('expiry defaults to 90 days and accepts 1-365', async () => {
    const h = harness();
    const def = await h.req('POST', '/api/v2/api-keys', { token: h.session, body: { name: 'a', permissions: ['events:read'] } });
    assert.equal(def.json.key.expiresAt - def.json.key.createdAt, 90 * DAY);
    for (const expiry of [1, 365]) {
      const res = await h.req('POST', '/api/v2/api-keys', { token: h.session, body: { name: 'a', permissions: ['events:read'], expiry } });
      assert.equal(res.status, 201);
      assert.equal(res.json.key.expiresAt - res.json.key.createdAt, expiry * DAY);
    }
  });

  it('expiry outside 1-365 or not a whole number is 400 invalid_request naming the field', async () => {
    const h = harness();
    for (const expiry of [0, 366, -1, 1.5, '30', null]) {
      const res = await h.req('POST', '/api/v2/api-keys', { token: h.session, body: { name: 'a', permissions: ['events:read'], expiry } });
      assert.equal(res.status, 400, `expiry ${JSON.stringify(expiry)}: ${res.text}`);
      assert.equal(res.json.error.code, 'invalid_request');
      assert.match(res.json.error.message, /expiry/);
    }
  });

  it('unknown permissions, empty names and unknown fields are 400', async () => {
    const h = harness();
    const bodies = [
      { name: 'a', permissions: ['recordings:admin'] },
      { name: 'a', permissions: [] },
      { name: '', permissions: ['events:read'] },
      { name: '   ', permissions: ['events:read'] },
      { name: 'a', permissions: ['events:read'], extra: 1 },
      { permissions: ['events:read'] },
      [],
    ];
    for (const body of bodies) {
      const res = await h.req('POST', '/api/v2/api-keys', { token: h.session, body });
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
      assert.equal(res.json.error.code, 'invalid_request');
    }
  });

  it('GET /api-keys lists active and revoked keys without secrets', async () => {
    const h = harness();
    const a = (await h.req('POST', '/api/v2/api-keys', { token: h.session, body: { name: 'a', permissions: ['events:read'] } })).json;
    const b = (await h.req('POST', '/api/v2/api-keys', { token: h.session, body: { name: 'b', permissions: ['events:read'] } })).json;
    assert.equal((await h.req('DELETE', `/api/v2/api-keys/${a.key.id}`, { token: h.session })).status, 204);
    const res = await h.req('GET', '/api/v2/api-keys', { token: h.session });
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.json), ['keys']);
    const byId = new Map(res.json.keys.map((k: { id: string }) => [k.id, k]));
    assert.equal((byId.get(a.key.id) as { revokedAt: number }).revokedAt, h.clock.now());
    assert.equal((byId.get(b.key.id) as { revokedAt: null }).revokedAt, null);
    for (const k of res.json.keys) assert.deepEqual(Object.keys(k).sort(), METADATA_FIELDS);
    assert.ok(!res.text.includes(a.secret) && !res.text.includes(b.secret));
    assert.ok(!/rlk_|secret/i.test(res.text));
  });

  it('DELETE /api-keys/{id} answers 204, is repeatable, and 404 for an unknown or foreign key', async () => {
    const h = harness();
    const a = (await h.req('POST', '/api/v2/api-keys', { token: h.session, body: { name: 'a', permissions: ['events:read'] } })).json;
    const del = await h.req('DELETE', `/api/v2/api-keys/${a.key.id}`, { token: h.session });
    assert.equal(del.status, 204);
    assert.equal(del.text, '');
    assert.equal((await h.req('DELETE', `/api/v2/api-keys/${a.key.id}`, { token: h.session })).status, 204);
    assert.equal((await h.req('DELETE', '/api/v2/api-keys/key_unknown', { token: h.session })).json.error.code, 'not_found');
    const other = h.services.auth.createAccount('other');
    const otherSession = h.services.auth.createSession(other.id).token;
    const foreign = await h.req('DELETE', `/api/v2/api-keys/${a.key.id}`, { token: otherSession });
    assert.equal(foreign.status, 404);
    const bad = await h.req('DELETE', `/api/v2/api-keys/${'x'.repeat(257)}`, { token: h.session });
    assert.equal(bad.status, 400);
  });

  it('the 51st active key is 409 limit_reached; revoked and expired keys do not count', async () => {
    const h = harness();
    const ids: string[] = [];
    for (let i = 0; i < 50; i++) {
      const res = await h.req('POST', '/api/v2/api-keys', { token: h.session, body: { name: `k${i}`, permissions: ['events:read'], expiry: i === 0 ? 1 : 90 } });
      assert.equal(res.status, 201);
      ids.push(res.json.key.id);
    }
    const over = await h.req('POST', '/api/v2/api-keys', { token: h.session, body: { name: 'k50', permissions: ['events:read'] } });
    assert.equal(over.status, 409);
    assert.equal(over.json.error.code, 'limit_reached');
    const v1 = await h.req('POST', '/api/v1/tokens', { token: h.session, body: { name: 'k50', scopes: ['events:read'] } });
    assert.equal(v1.json.error.code, 'limit_reached');
    await h.req('DELETE', `/api/v2/api-keys/${ids[1]}`, { token: h.session });
    assert.equal((await h.req('POST', '/api/v2/api-keys', { token: h.session, body: { name: 'n', permissions: ['events:read'] } })).status, 201);
    assert.equal((await h.req('POST', '/api/v2/api-keys', { token: h.session, body: { name: 'n', permissions: ['events:read'] } })).status, 409);
    h.clock.advance(DAY); // key 0 (1 day) expires
    assert.equal((await h.req('POST', '/api/v2/api-keys', { token: h.session, body: { name: 'n', permissions: ['events:read'] } })).status, 201);
  });

  it('lastUsedAt is set when the key is used', async () => {
    const h = harness();
    const { key, secret } = (await h.req('POST', '/api/v2/api-keys', { token: h.session, body: { name: 'a', permissions: ['events:read'] } })).json;
    h.clock.advance(5_000);
    assert.equal((await h.req('GET', '/probe/read', { token: secret })).status, 200);
    const listed = (await h.req('GET', '/api/v2/api-keys', { token: h.session })).json.keys.find((k: { id: string }) => k.id === key.id);
    assert.equal(listed.lastUsedAt, key.createdAt + 5_000);
    h.clock.advance(3_600_000);
    await h.req('GET', '/probe/read', { token: secret });
    const later = (await h.req('GET', '/api/v2/api-keys', { token: h.session })).json.keys.find((k: { id: string }) => k.id === key.id);
    assert.equal(later.lastUsedAt, key.createdAt + 5_000 + 3_600_000);
  });

  it('a key grants exactly its permissions', async () => {
    const h = harness();
    const { secret } = (await h.req('POST', '/api/v2/api-keys', { token: h.session, body: { name: 'a', permissions: ['recordings:create'] } })).json;
    assert.equal((await h.req('POST', '/probe/echo', { token: secret, body: { text: 'x' } })).status, 200);
    assert.equal((await h.req('GET', '/probe/read', { token: secret })).status, 403);
  });
});

describe('v1 /tokens are the same objects as v2 keys', () => {
  it('POST /tokens answers 200 { token, secret } with scopes; GET /tokens lists them without secrets', async () => {
    const h = harness();
    const res = await h.req('POST', '/api/v1/tokens', { token: h.session, body: { name: 'legacy', scopes: ['recordings:read'], expiry: 30 } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(res.json).sort(), ['secret', 'token']);
    const { token, secret } = res.json;
    assert.match(secret, /^rlk_/);
    assert.deepEqual(token.scopes, ['recordings:read']);
    assert.equal(token.permissions, undefined);
    assert.equal(token.expiresAt - token.createdAt, 30 * DAY);
    const list = await h.req('GET', '/api/v1/tokens', { token: h.session });
    assert.equal(list.status, 200);
    assert.deepEqual(list.json.tokens.map((t: { id: string }) => t.id), [token.id]);
    assert.ok(!list.text.includes(secret));
    const v2 = await h.req('GET', '/api/v2/api-keys', { token: h.session });
    assert.deepEqual(v2.json.keys[0].permissions, ['recordings:read']);
    assert.equal(v2.json.keys[0].id, token.id);
  });

  it('a v1 token works as a v2 key', async () => {
    const h = harness();
    const { secret } = (await h.req('POST', '/api/v1/tokens', { token: h.session, body: { name: 'legacy', scopes: ['events:read'] } })).json;
    assert.equal((await h.req('GET', '/probe/read', { token: secret })).status, 200);
  });

  it('v1 token validation: expiry 1-365, known scopes', async () => {
    const h = harness();
    for (const body of [{ name: 'a', scopes: ['events:read'], expiry: 0 }, { name: 'a', scopes: ['nope'] }, { name: 'a', permissions: ['events:read'] }]) {
      const res = await h.req('POST', '/api/v1/tokens', { token: h.session, body });
      assert.equal(res.status, 400, res.text);
    }
  });
});
