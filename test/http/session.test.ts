// docs/decisions.md §3 and §8: password login (scrypt), the reclib_session cookie (HttpOnly,
// SameSite=Strict), the Origin check on cookie-authenticated writes, sign-out, GET /api/session,
// sign-in by account id or name, and account names unique regardless of case.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NO_ACCOUNT_HASH } from '../../src/services/auth';
import { harness, type Harness } from '../helpers/harness';
import { serveInProcess } from '../helpers/in-process-server';

const ORIGIN = 'http://127.0.0.1:8080';

async function login(h: ReturnType<typeof harness>) {
  const res = await h.req('POST', '/api/session', { body: { account: h.accountId, password: 'correct horse' } });
  assert.equal(res.status, 200, res.text);
  const setCookie = res.headers.get('set-cookie') ?? '';
  const cookie = /^reclib_session=([^;]+)/.exec(setCookie)?.[1];
  assert.ok(cookie, setCookie);
  return { res, setCookie, cookie: `reclib_session=${cookie}` };
}

describe('POST /api/session signs in with the account password', () => {
  it('answers 200 { session: { token, expiresAt } } and sets an HttpOnly SameSite=Strict cookie', async () => {
    const h = harness();
    const { res, setCookie, cookie } = await login(h);
    assert.deepEqual(Object.keys(res.json), ['session']);
    assert.match(res.json.session.token, /^rls_[A-Za-z0-9]{43,}$/);
    assert.equal(res.json.session.expiresAt, h.clock.now() + 30 * 86_400_000);
    assert.equal(cookie, `reclib_session=${res.json.session.token}`);
    assert.match(setCookie, /;\s*HttpOnly/i);
    assert.match(setCookie, /;\s*SameSite=Strict/i);
    assert.match(setCookie, /;\s*Path=\//i);
    assert.doesNotMatch(setCookie, /Secure/i, 'plain http origin: a Secure cookie would never be sent back');
  });

  it('the cookie is Secure when the public URL is https', async () => {
    const h = harness({ publicUrl: 'https://rec.example.org' });
    const res = await h.req('POST', '/api/session', { body: { account: h.accountId, password: 'correct horse' } });
    assert.match(res.headers.get('set-cookie') ?? '', /;\s*Secure/i);
  });

  it('the returned token works as a bearer session and as the cookie', async () => {
    const h = harness();
    const { res, cookie } = await login(h);
    assert.equal((await h.req('GET', '/api/v2/api-keys', { token: res.json.session.token })).status, 200);
    assert.equal((await h.req('GET', '/api/v2/api-keys', { headers: { cookie } })).status, 200);
  });

  it('a wrong password, an unknown account and an account without a password all get 401', async () => {
    const h = harness();
    const noPassword = h.services.auth.createAccount('nopw');
    for (const body of [
      { account: h.accountId, password: 'wrong horse' },
      { account: 'acc_unknown', password: 'correct horse' },
      { account: noPassword.id, password: 'correct horse' },
    ]) {
      const res = await h.req('POST', '/api/session', { body });
      assert.equal(res.status, 401, res.text);
      assert.equal(res.json.error.code, 'unauthenticated');
      assert.equal(res.headers.get('set-cookie'), null);
    }
  });

  it('a malformed login body is 400', async () => {
    const h = harness();
    for (const body of [{}, { account: h.accountId }, { account: h.accountId, password: '' }, { account: h.accountId, password: 'x', more: 1 }, '{']) {
      const res = await h.req('POST', '/api/session', { body });
      assert.equal(res.status, 400, res.text);
    }
  });

  it('the stored password is a scrypt hash, not the password', () => {
    const h = harness();
    const row = h.services.auth.store.account(h.accountId);
    assert.match(row?.password_hash ?? '', /^scrypt\$/);
    assert.ok(!row?.password_hash?.includes('correct horse'));
  });
});

describe('cookie-authenticated writes need the server Origin', () => {
  const body = { name: 'from browser', permissions: ['events:read'] };

  it('without an Origin header a cookie write is 403 forbidden', async () => {
    const h = harness();
    const { cookie } = await login(h);
    const res = await h.req('POST', '/api/v2/api-keys', { body, headers: { cookie } });
    assert.equal(res.status, 403, res.text);
    assert.equal(res.json.error.code, 'forbidden');
    assert.match(res.json.error.message, /Origin/);
  });

  it('with a foreign Origin a cookie write is 403 forbidden', async () => {
    const h = harness();
    const { cookie } = await login(h);
    for (const origin of ['https://evil.example', 'http://127.0.0.1:8081', 'null', 'http://127.0.0.1:8080.evil.example']) {
      const res = await h.req('POST', '/api/v2/api-keys', { body, headers: { cookie, origin } });
      assert.equal(res.status, 403, origin);
      assert.equal(res.json.error.code, 'forbidden');
    }
    assert.equal((await h.req('GET', '/api/v2/api-keys', { token: h.session })).json.keys.length, 0);
  });

  it('with the server Origin a cookie write passes', async () => {
    const h = harness();
    const { cookie } = await login(h);
    const res = await h.req('POST', '/api/v2/api-keys', { body, headers: { cookie, origin: ORIGIN } });
    assert.equal(res.status, 201, res.text);
  });

  it('the origin the request reached (Host) is accepted too, e.g. localhost for 127.0.0.1', async () => {
    const h = harness();
    const { cookie } = await login(h);
    const res = await h.app.request('http://localhost:8080/api/v2/api-keys', {
      method: 'POST',
      headers: { cookie, origin: 'http://localhost:8080', 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    assert.equal(res.status, 201, await res.text());
  });

  it('safe cookie requests (GET) need no Origin, and bearer writes need none', async () => {
    const h = harness();
    const { cookie } = await login(h);
    assert.equal((await h.req('GET', '/api/v2/api-keys', { headers: { cookie } })).status, 200);
    assert.equal((await h.req('POST', '/api/v2/api-keys', { token: h.session, body })).status, 201);
  });
});

describe('DELETE /api/session signs out', () => {
  it('answers 204, clears the cookie, and the session then gets 401', async () => {
    const h = harness();
    const { cookie, res: loginRes } = await login(h);
    const del = await h.req('DELETE', '/api/session', { headers: { cookie, origin: ORIGIN } });
    assert.equal(del.status, 204, del.text);
    assert.match(del.headers.get('set-cookie') ?? '', /reclib_session=;.*Max-Age=0/i);
    assert.equal((await h.req('GET', '/api/v2/api-keys', { headers: { cookie } })).status, 401);
    assert.equal((await h.req('GET', '/api/v2/api-keys', { token: loginRes.json.session.token })).status, 401);
  });

  it('a bearer session signs out too; a key cannot (session_required)', async () => {
    const h = harness();
    const key = h.key();
    const asKey = await h.req('DELETE', '/api/session', { token: key });
    assert.equal(asKey.json.error.code, 'session_required');
    assert.equal((await h.req('DELETE', '/api/session', { token: h.session })).status, 204);
    assert.equal((await h.req('GET', '/api/v2/api-keys', { token: h.session })).status, 401);
  });

  it('a session that spent its rate limit can still sign out (signing out is not counted)', async () => {
    const h = harness({ rateLimit: 2 });
    for (let i = 0; i < 2; i++) assert.equal((await h.req('GET', '/api/session', { token: h.session })).status, 200);
    assert.equal((await h.req('GET', '/api/session', { token: h.session })).status, 429);
    const out = await h.req('DELETE', '/api/session', { token: h.session });
    assert.equal(out.status, 204);
    assert.equal(out.headers.get('ratelimit-remaining'), null);
    assert.equal((await h.req('GET', '/api/v2/api-keys', { token: h.session })).status, 401);
  });

  it('a cookie sign-out from a foreign Origin is refused and the session stays valid', async () => {
    const h = harness();
    const { cookie } = await login(h);
    assert.equal((await h.req('DELETE', '/api/session', { headers: { cookie, origin: 'https://evil.example' } })).status, 403);
    assert.equal((await h.req('GET', '/api/v2/api-keys', { headers: { cookie } })).status, 200);
  });
});

describe('password guessing is rate limited per account', () => {
  it('login attempts beyond the per-minute limit get 429 rate_limited', async () => {
    const h = harness({ rateLimit: 5 });
    for (let i = 0; i < 5; i++) {
      assert.equal((await h.req('POST', '/api/session', { body: { account: h.accountId, password: 'wrong horse' } })).status, 401);
    }
    const res = await h.req('POST', '/api/session', { body: { account: h.accountId, password: 'correct horse' } });
    assert.equal(res.status, 429);
    assert.equal(res.json.error.code, 'rate_limited');
    h.clock.advance(60_000);
    assert.equal((await h.req('POST', '/api/session', { body: { account: h.accountId, password: 'correct horse' } })).status, 200);
  });
});

// docs/decisions.md §8: GET /api/session, sign-in by account id or name, and account
// names unique regardless of case, with the duplicates an older database may hold kept.
const PASSWORD = 'correct horse';

const signIn = (h: Harness, account: string, password = PASSWORD) => h.req('POST', '/api/session', { body: { account, password } });

/** An account as a database from before the uniqueness rule may hold it: written straight to the table. */
function insertOldAccount(h: Harness, id: string, name: string): void {
  const hash = h.services.auth.store.account(h.accountId)!.password_hash;
  h.services.core.db
    .prepare('INSERT INTO accounts (id, name, password_hash, app_integration, created_at) VALUES (?, ?, ?, ?, ?)')
    .run(id, name, hash, `int_${id}`, h.clock.now());
}

describe('GET /api/session', () => {
  it('with a bearer session: 200 { account: { id, name }, session: { expiresAt } }', async () => {
    const h = harness();
    const res = await h.req('GET', '/api/session', { token: h.session });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json, { account: { id: h.accountId, name: 'test' }, session: { expiresAt: h.clock.now() + 30 * 86_400_000 } });
  });

  it('with the cookie set by sign-in: the same answer, with that session expiry', async () => {
    const h = harness();
    const login = await signIn(h, h.accountId);
    const cookie = /^reclib_session=[^;]+/.exec(login.headers.get('set-cookie') ?? '')?.[0];
    assert.ok(cookie);
    const res = await h.req('GET', '/api/session', { headers: { cookie } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json, { account: { id: h.accountId, name: 'test' }, session: { expiresAt: login.json.session.expiresAt } });
  });

  it('without credentials 401 in the error envelope; an API key 403 session_required', async () => {
    const h = harness();
    const none = await h.req('GET', '/api/session');
    assert.equal(none.status, 401);
    assert.equal(none.json.error.code, 'unauthenticated');
    // It asks for what the route takes: a session, not an API key.
    assert.match(none.json.error.message, /^a signed-in session is required: .*API keys are refused here$/);
    const other = await h.req('GET', '/api/v2/recordings');
    assert.equal(other.json.error.message, 'credentials required: send Authorization: Bearer <API key or session token>');
    const key = await h.req('GET', '/api/session', { token: h.key() });
    assert.equal(key.status, 403);
    assert.equal(key.json.error.code, 'session_required');
  });

  it('after sign-out, and after the session expired, it is 401', async () => {
    const h = harness();
    const token = (await signIn(h, 'test')).json.session.token as string;
    const ORIGIN = { origin: 'http://127.0.0.1:8080' };
    assert.equal((await h.req('DELETE', '/api/session', { token, headers: ORIGIN })).status, 204);
    assert.equal((await h.req('GET', '/api/session', { token })).status, 401);
    h.clock.advance(30 * 86_400_000);
    const expired = await h.req('GET', '/api/session', { token: h.session });
    assert.equal(expired.status, 401);
    assert.match(expired.json.error.message, /expired/);
  });
});

describe('POST /api/session takes the account id or the account name', () => {
  it('the name signs in in any case, and with the spaces a phone keyboard adds', async () => {
    const h = harness();
    for (const account of ['test', 'TEST', 'Test', ' test ']) {
      const res = await signIn(h, account);
      assert.equal(res.status, 200, `${account}: ${res.text}`);
      const me = await h.req('GET', '/api/session', { token: res.json.session.token });
      assert.equal(me.json.account.id, h.accountId);
    }
  });

  it('a name with spaces and non-ASCII letters signs in, its case folded', async () => {
    const h = harness();
    const zoe = h.services.auth.createAccount('Zoë Ångström', PASSWORD);
    const res = await signIn(h, 'ZOË ÅNGSTRÖM');
    assert.equal(res.status, 200, res.text);
    assert.equal((await h.req('GET', '/api/session', { token: res.json.session.token })).json.account.id, zoe.id);
  });

  it('a wrong password by name, an unknown name and an unknown id are one indistinguishable 401', async () => {
    const h = harness();
    const answers = [await signIn(h, 'TEST', 'wrong horse'), await signIn(h, 'nobody'), await signIn(h, 'acc_nobody'), await signIn(h, h.accountId, 'wrong horse')];
    for (const res of answers) {
      assert.equal(res.status, 401);
      assert.deepEqual(res.json, { error: { code: 'unauthenticated', message: 'account or password is wrong' } });
      assert.equal(res.headers.get('set-cookie'), null);
    }
  });

  it('the login rate limit applies, and the id and the name of one account share its budget', async () => {
    const h = harness({ rateLimit: 3 });
    assert.equal((await signIn(h, h.accountId, 'wrong')).status, 401);
    assert.equal((await signIn(h, 'test', 'wrong')).status, 401);
    assert.equal((await signIn(h, 'TEST', 'wrong')).status, 401);
    const limited = await signIn(h, h.accountId);
    assert.equal(limited.status, 429);
    assert.equal(limited.json.error.code, 'rate_limited');
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    assert.equal((await signIn(h, 'Test')).status, 429, 'by name too');
    const other = h.services.auth.createAccount('other', PASSWORD);
    assert.equal((await signIn(h, 'other')).status, 200, 'another account has its own budget');
    assert.ok(other.id);
    h.clock.advance(60_000);
    assert.equal((await signIn(h, 'test')).status, 200, 'the window moved on');
  });

  it('guesses at unknown names are limited per name', async () => {
    const h = harness({ rateLimit: 2 });
    assert.equal((await signIn(h, 'ghost')).status, 401);
    assert.equal((await signIn(h, 'GHOST')).status, 401);
    assert.equal((await signIn(h, 'ghost')).status, 429);
  });

  it('a flood of fresh names tells nothing of which names exist: each has its own budget, and an account answers as before (no shared budget for them to spend)', async () => {
    const h = harness({ rateLimit: 3 });
    for (let i = 0; i < 10; i++) assert.equal((await signIn(h, `ghost${i}`)).status, 401);
    assert.equal((await signIn(h, 'test', 'wrong horse')).status, 401);
    assert.equal((await signIn(h, 'ghost-next')).status, 401, 'an unknown name answers like an account');
  });

  it('names no account has are checked against a fixed verifier with the same scrypt parameters as a real password', () => {
    const h = harness();
    const real = h.services.auth.store.account(h.accountId)!.password_hash!;
    assert.equal(NO_ACCOUNT_HASH.split('$').slice(0, 4).join('$'), real.split('$').slice(0, 4).join('$'));
  });

  it('a sign-in verifies its password off the thread (scrypt on the pool): other work runs meanwhile', async () => {
    const h = harness();
    let ran = false;
    setImmediate(() => (ran = true));
    const session = await h.services.auth.login('test', PASSWORD);
    assert.ok(session.token);
    assert.equal(ran, true, 'the event loop turned while the password was checked');
  });

  it('a password changed while a sign-in with the old one was being checked does not sign it in', async () => {
    const h = harness();
    const pending = h.services.auth.login('test', PASSWORD);
    h.services.auth.setPassword(h.accountId, 'a new passphrase');
    await assert.rejects(pending, /account or password is wrong/);
    assert.ok((await h.services.auth.login('test', 'a new passphrase')).token);
  });
});

describe('account names are unique regardless of case', () => {
  it('creating an account with a taken name in any case is refused, naming the account that has it', () => {
    const h = harness();
    for (const name of ['test', 'TEST', ' Test']) {
      assert.throws(
        () => h.services.auth.createAccount(name, PASSWORD),
        (e: Error & { code?: string }) => e.code === 'invalid_request' && /already exists/.test(e.message) && e.message.includes(h.accountId),
        name,
      );
    }
    assert.equal(h.services.auth.store.accounts().length, 1);
    assert.ok(h.services.auth.createAccount('test 2', PASSWORD).id);
  });

  it('duplicates from an older database are kept; their shared name is refused at sign-in with a pointer to the id', async () => {
    const h = harness();
    insertOldAccount(h, 'acc_oldtwin', 'Test');
    const res = await signIn(h, 'test');
    assert.equal(res.status, 401);
    assert.equal(res.json.error.code, 'unauthenticated');
    assert.match(res.json.error.message, /2 accounts share this name.*account id/);
    assert.equal(res.headers.get('set-cookie'), null);
    for (const id of [h.accountId, 'acc_oldtwin']) {
      const byId = await signIn(h, id);
      assert.equal(byId.status, 200, byId.text);
      assert.equal((await h.req('GET', '/api/session', { token: byId.json.session.token })).json.account.id, id);
    }
    assert.throws(() => h.services.auth.createAccount('TEST', PASSWORD), /already exists/);
    assert.deepEqual(h.services.auth.store.accounts().map((a) => a.name).sort(), ['Test', 'test']);
  });
});

// On `reclib serve` a sign-in runs on the writer thread, whose app has no rate limit (the main
// thread counts requests before handing them over); its attempts must still be counted, once.
describe('password guessing is rate limited on the server, where the writer thread signs in', () => {
  it('attempts beyond the limit get 429, by id and by name, however right the password; each counts once', async (t) => {
    const served = await serveInProcess(t, { rateLimit: 3 });
    assert.ok(served.server.writerThread, 'the server runs a writer thread');
    const { id } = served.account('a long enough password');
    const signIn = (account: string, password: string) =>
      fetch(`${served.url}/api/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ account, password }) });
    const first = await signIn(id, 'wrong');
    assert.equal(first.status, 401);
    assert.equal(first.headers.get('ratelimit-remaining'), '2', 'counted once, and said so');
    assert.equal((await signIn('observer', 'wrong')).status, 401);
    assert.equal((await signIn('OBSERVER', 'wrong')).status, 401);
    const limited = await signIn(id, 'a long enough password');
    assert.equal(limited.status, 429);
    assert.equal(((await limited.json()) as { error: { code: string } }).error.code, 'rate_limited');
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    assert.equal((await signIn('Observer', 'a long enough password')).status, 429, 'by name too');
    // A body the route refuses is refused before it counts, as in process.
    const bad = await fetch(`${served.url}/api/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"account":""}' });
    assert.equal(bad.status, 400);
  });
});
