// End to end against the built bundle (dist/reclib.cjs): `serve` on a fresh file, the first-run
// hint, the admin CLI on the same file while the server runs (a key revoked by the CLI is refused
// on the next request), the body limit over real HTTP, and a graceful SIGTERM.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cleanEnv, cliJson, hintCommands, ROOT, runCli, startServe, type ServeProcess } from '../helpers/bundle';

const tmpDb = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-e2e-')), 'reclib.db');

describe('reclib serve from the bundle, with the CLI on the same file', () => {
  const db = tmpDb();
  let server: ServeProcess;
  let accountId: string;
  let session: string;

  const call = async (method: string, p: string, token?: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(server.url + p, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, json: text ? (JSON.parse(text) as Record<string, any>) : {} }; // eslint-disable-line @typescript-eslint/no-explicit-any -- response shapes vary
  };

  before(async () => {
    server = await startServe(['--db', db]);
  });
  after(async () => {
    await server?.stop('SIGKILL');
  });

  it('prints its URL and, for an empty database, the commands to create the first account, key and session', async () => {
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    for (let i = 0; i < 50 && !server.stdout().includes('sessions create'); i++) await new Promise((r) => setTimeout(r, 20));
    const out = server.stdout();
    assert.match(out, /reclib listening on http:\/\/127\.0\.0\.1:\d+/);
    assert.match(out, /No account yet/);
    assert.match(out, new RegExp(`accounts create --name \\S+ --db ${db.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    assert.match(out, /keys create .*--permissions/);
    assert.match(out, /sessions create/);
    assert.ok(fs.existsSync(`${db}.secret`), 'the master secret file is created beside the db');
    assert.equal(fs.statSync(`${db}.secret`).mode & 0o777, 0o600);
    const health = await call('GET', '/healthz');
    assert.equal(health.status, 200);
    assert.deepEqual(health.json, { status: 'ok' });
  });

  it('the CLI creates an account (with a password), a key and a session that the running server accepts', async () => {
    const created = await cliJson(['accounts', 'create', '--db', db, '--name', 'owner', '--password-stdin'], { input: 'long enough password\n' });
    accountId = created.account.id;
    assert.match(accountId, /^acc_/);
    assert.deepEqual(created, { account: { id: accountId, name: 'owner' } });
    const listed = await cliJson(['accounts', 'list', '--db', db]);
    assert.deepEqual(listed.accounts.map((a: { id: string }) => a.id), [accountId]);

    const s = await cliJson(['sessions', 'create', '--db', db, '--account', accountId]);
    session = s.session.token;
    assert.match(session, /^rls_/);
    assert.equal(typeof s.session.expiresAt, 'number');
    assert.equal((await call('GET', '/api/v2/api-keys', session)).status, 200);

    const login = await call('POST', '/api/session', undefined, { account: accountId, password: 'long enough password' });
    assert.equal(login.status, 200);
    assert.match(login.headers.get('set-cookie') ?? '', /HttpOnly/);
  });

  it('a key revoked by the CLI while the server runs gets 401 on the next request', async () => {
    const k = await cliJson(['keys', 'create', '--db', db, '--account', accountId, '--name', 'cli key', '--permissions', 'recordings:read,events:read', '--expiry', '30']);
    assert.match(k.secret, /^rlk_/);
    assert.deepEqual(k.key.permissions, ['recordings:read', 'events:read']);
    assert.equal(k.key.expiresAt - k.key.createdAt, 30 * 86_400_000);
    // The key authenticates (a session-only route then refuses it as a key, not as unknown).
    const before = await call('GET', '/api/v2/api-keys', k.secret);
    assert.equal(before.status, 403);
    assert.equal(before.json.error.code, 'session_required');

    const revoked = await cliJson(['keys', 'revoke', '--db', db, '--account', accountId, k.key.id]);
    assert.equal(revoked.key.id, k.key.id);
    assert.equal(typeof revoked.key.revokedAt, 'number');

    const afterRevoke = await call('GET', '/api/v2/api-keys', k.secret);
    assert.equal(afterRevoke.status, 401);
    assert.equal(afterRevoke.json.error.code, 'unauthenticated');
    const list = await cliJson(['keys', 'list', '--db', db, '--account', accountId]);
    const listedKey = list.keys.find((x: { id: string }) => x.id === k.key.id);
    assert.equal(listedKey.revokedAt, revoked.key.revokedAt);
    assert.equal(typeof listedKey.lastUsedAt, 'number', 'the server recorded the use');
    assert.ok(!JSON.stringify(list).includes(k.secret));
  });

  it("a key revoked by the CLI is refused on the next get by id and create, which take a cached key unchecked and check it in their own read or the writer thread's transaction", async () => {
    const key = async (name: string) =>
      (await cliJson(['keys', 'create', '--db', db, '--account', accountId, '--name', name, '--permissions', 'recordings:read,recordings:create'])) as { key: { id: string }; secret: string };
    const create = (secret: string, idempotencyKey: string) => call('POST', '/api/v2/recordings', secret, { type: 'clip', transcript: 'cached' }, { 'idempotency-key': idempotencyKey });
    const count = async () => ((await call('GET', '/api/v2/recordings?limit=100', session)).json.recordings as unknown[]).length;
    // Each key creates and reads twice while live: from the second request on it comes from the
    // server's cache, unchecked.
    const keys = { getFirst: await key('get first'), createFirst: await key('create first') };
    const ids: Record<string, string> = {};
    for (const [name, k] of Object.entries(keys)) {
      for (const n of [1, 2]) {
        const created = await create(k.secret, `${name}-${n}`);
        assert.equal(created.status, 201, created.text);
        ids[name] = created.json.recording.id;
        assert.equal((await call('GET', `/api/v2/recordings/${ids[name]}`, k.secret)).status, 200);
      }
    }
    const before = await count();
    const revoke = (k: { key: { id: string } }) => cliJson(['keys', 'revoke', '--db', db, '--account', accountId, k.key.id]);
    // Any request the app authenticates after a commit of another connection drops the server's
    // whole cache: each key is read once more (cached again) right before the CLI revokes it.
    // The get by id first: its lookup finds nothing for the revoked key, and the app refuses.
    assert.equal((await call('GET', `/api/v2/recordings/${ids.getFirst}`, keys.getFirst.secret)).status, 200);
    await revoke(keys.getFirst);
    const got = await call('GET', `/api/v2/recordings/${ids.getFirst}`, keys.getFirst.secret);
    assert.equal(got.status, 401, got.text);
    assert.match(got.json.error.message, /revoked/);
    // A create first: the writer thread's transaction refuses it, the main thread's app answers;
    // then a replay of a create it made (refused too, by then on the checked way).
    assert.equal((await call('GET', `/api/v2/recordings/${ids.createFirst}`, keys.createFirst.secret)).status, 200);
    await revoke(keys.createFirst);
    for (const idempotencyKey of ['createFirst-3', 'createFirst-2']) {
      const refused = await create(keys.createFirst.secret, idempotencyKey);
      assert.equal(refused.status, 401, refused.text);
      assert.match(refused.json.error.message, /revoked/);
    }
    assert.equal((await call('GET', `/api/v2/recordings/${ids.createFirst}`, keys.createFirst.secret)).status, 401);
    assert.equal(await count(), before, 'nothing created');
  });

  it('CLI errors go to stderr with a non-zero exit code', async () => {
    const r = await runCli(['keys', 'revoke', '--db', db, '--account', accountId, 'key_missing', '--json']);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /key key_missing not found/);
    const bad = await runCli(['keys', 'create', '--db', db, '--account', accountId, '--name', 'x', '--permissions', 'recordings:admin']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /unknown permission/);
  });

  it('over real HTTP a chunked body over 1,500,000 bytes is 413 and one of exactly 1,500,000 bytes is accepted', async () => {
    const exact = `{"name":"big","permissions":["events:read"]}`;
    const padded = exact + ' '.repeat(1_500_000 - exact.length);
    const stream = (text: string, extra = 0) => {
      const bytes = new TextEncoder().encode(text + ' '.repeat(extra));
      let offset = 0;
      return new ReadableStream<Uint8Array>({
        pull(controller) {
          if (offset >= bytes.length) return controller.close();
          controller.enqueue(bytes.subarray(offset, (offset += 100_000)));
        },
      });
    };
    const post = async (body: ReadableStream<Uint8Array>) => {
      const res = await fetch(`${server.url}/api/v2/api-keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${session}`, 'content-type': 'application/json' },
        body,
        duplex: 'half',
      } as RequestInit);
      return { status: res.status, json: (await res.json()) as { error?: { code: string } }, id: res.headers.get('x-request-id') };
    };
    const ok = await post(stream(padded));
    assert.equal(ok.status, 201);
    const tooBig = await post(stream(padded, 1));
    assert.equal(tooBig.status, 413);
    assert.equal(tooBig.json.error?.code, 'payload_too_large');
    assert.ok(tooBig.id);
    const huge = await post(stream(padded, 20_000_000)).catch((e: Error) => ({ status: 0, json: { error: { code: e.message } }, id: null }));
    assert.equal(huge.status, 413, 'a 21 MB upload is answered 413, not read to the end');
    assert.equal((await call('GET', '/healthz')).status, 200, 'the server is still fine');
  });

  it('malformed JSON over real HTTP is 400 and an unknown route 404, both with X-Request-Id', async () => {
    const bad = await call('POST', '/api/v2/api-keys', session, '{"name":');
    assert.equal(bad.status, 400);
    assert.equal(bad.json.error.code, 'invalid_request');
    assert.ok(bad.headers.get('x-request-id'));
    const missing = await call('GET', '/api/v2/nothing-here', session, undefined, { 'x-request-id': 'e2e-404' });
    assert.equal(missing.status, 404);
    assert.equal(missing.headers.get('x-request-id'), 'e2e-404');
  });

  it('SIGTERM stops the server promptly with exit code 0', async () => {
    const started = Date.now();
    const code = await server.stop('SIGTERM');
    assert.equal(code, 0, server.stderr());
    assert.ok(Date.now() - started < 3_000, `stopped in ${Date.now() - started} ms`);
    assert.match(server.stdout(), /SIGTERM received/);
    // The file is closed cleanly: a new process opens it and sees the data.
    const listed = await cliJson(['accounts', 'list', '--db', db]);
    assert.equal(listed.accounts.length, 1);
  });
});

describe('the first-run hint, pasted as printed', () => {
  it('its commands, run by a shell in the folder the server was started from, create an account, a key and a session the server accepts, and a password the web app signs in with', async () => {
    const db = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'reclib e2e ')), 'my notes.db');
    // npm_command: a test run through npx must not make the hint say npx.
    const server = await startServe(['--db', db], { env: { npm_command: '' } });
    try {
      const lines = await hintCommands(server);
      assert.equal(lines.length, 4, server.stdout());
      assert.match(lines[0]!, /^node dist\/reclib\.cjs accounts create --name me --db '.+my notes\.db'$/);
      // Node first on the PATH: the one running these tests.
      const sh = (command: string) =>
        execFileSync('sh', ['-c', command], { cwd: ROOT, env: cleanEnv({ PATH: `${path.dirname(process.execPath)}:${process.env.PATH}` }), encoding: 'utf8' });
      const account = /acc_\w+/.exec(sh(lines[0]!))?.[0];
      assert.ok(account, 'the account command printed an account id');
      const key = /rlk_\w+/.exec(sh(lines[1]!.replace('<account id>', account)))?.[0];
      const session = /rls_\w+/.exec(sh(lines[2]!.replace('<account id>', account)))?.[0];
      assert.ok(key && session, 'a key and a session were printed');
      const listed = await fetch(`${server.url}/api/v2/recordings`, { headers: { authorization: `Bearer ${key}` } });
      assert.equal(listed.status, 200);
      assert.equal((await fetch(`${server.url}/api/v2/api-keys`, { headers: { authorization: `Bearer ${session}` } })).status, 200);
      // The web app's sign-in, with the password the fourth command sets.
      assert.match(server.stdout(), new RegExp(`To sign in to the web app at ${server.url}/ too`));
      sh(lines[3]!.replace('<account id>', account).replace('<a long passphrase>', 'a long enough passphrase'));
      const signIn = await fetch(`${server.url}/api/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ account: 'me', password: 'a long enough passphrase' }) });
      assert.equal(signIn.status, 200);
    } finally {
      assert.equal(await server.stop('SIGTERM'), 0, server.stderr());
    }
  });
});

describe('first start on a database that already has an account', () => {
  it('prints no first-run hint', async () => {
    const db = tmpDb();
    await cliJson(['accounts', 'create', '--db', db, '--name', 'someone']);
    const server = await startServe(['--db', db]);
    try {
      await new Promise((r) => setTimeout(r, 100));
      assert.doesNotMatch(server.stdout(), /No account yet/);
    } finally {
      assert.equal(await server.stop('SIGINT'), 0);
    }
  });
});

describe('graceful shutdown', () => {
  it('SIGTERM lets an in-flight request finish, refuses new connections, then exits 0', async () => {
    const db = tmpDb();
    const server = await startServe(['--db', db]);
    const { account } = await cliJson(['accounts', 'create', '--db', db, '--name', 'owner']);
    const { session } = await cliJson(['sessions', 'create', '--db', db, '--account', account.id]);
    let push: (text: string | null) => void = () => undefined;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        push = (text) => (text === null ? controller.close() : controller.enqueue(new TextEncoder().encode(text)));
      },
    });
    const inFlight = fetch(`${server.url}/api/v2/api-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${session.token}`, 'content-type': 'application/json', connection: 'close' },
      body,
      duplex: 'half',
    } as RequestInit);
    push('{"name":"slow upload",');
    await new Promise((r) => setTimeout(r, 150)); // the request is being read by the server
    const exit = server.stop('SIGTERM');
    for (let i = 0; i < 50 && !server.stdout().includes('SIGTERM received'); i++) await new Promise((r) => setTimeout(r, 10));
    await assert.rejects(fetch(`${server.url}/healthz`), 'no new connections once stopping');
    push('"permissions":["events:read"]}');
    push(null);
    const res = await inFlight;
    assert.equal(res.status, 201, 'the in-flight request completed');
    const started = Date.now();
    assert.equal(await exit, 0);
    assert.ok(Date.now() - started < 3_000, `exited ${Date.now() - started} ms after the last response`);
    const keys = await cliJson(['keys', 'list', '--db', db, '--account', account.id]);
    assert.equal(keys.keys.length, 1, 'its write was committed before the database closed');
  });
});

describe('the bundle checkpoints the WAL from a worker thread', () => {
  it('a commit reaches the database file without any connection closing or reaching the 10,000-page autocheckpoint', async () => {
    const db = tmpDb();
    const server = await startServe(['--db', db]);
    try {
      await new Promise((r) => setTimeout(r, 400)); // the worker's first passes fold in what startup wrote
      const before = fs.statSync(db, { bigint: true }).mtimeNs;
      // A small commit from another process (the CLI): only a checkpoint writes it into the .db file,
      // and neither connection checkpoints by itself (the server holds the file open; a few pages
      // are far below any autocheckpoint).
      await cliJson(['accounts', 'create', '--db', db, '--name', 'checkpointed']);
      let after = before;
      for (let i = 0; i < 150 && after === before; i++) {
        await new Promise((r) => setTimeout(r, 20));
        after = fs.statSync(db, { bigint: true }).mtimeNs;
      }
      assert.notEqual(after, before, 'the database file was written by a checkpoint within 3 s');
    } finally {
      await server.stop('SIGKILL');
    }
  });
});
