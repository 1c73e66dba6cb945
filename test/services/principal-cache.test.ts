// The principal cache (src/services/principal-cache.ts): validated credentials are reused without
// asking the database again, and without weakening revocation (also by another connection, such as
// the admin CLI), expiry or lastUsedAt.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { FakeClock } from '../../src/clock';
import { testConfig } from '../../src/config';
import type { Core } from '../../src/context';
import { CommitWatch } from '../../src/db/commit-watch';
import { openDatabase } from '../../src/db/open';
import { Writer } from '../../src/db/writer';
import { createServices } from '../../src/services';
import { harness } from '../helpers/harness';
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

  it('a credential taken from the cache unchecked (the direct get by id) finds nothing once revoked or ended by another connection', () => {
    const file = tempDb();
    const server = services(file);
    const cli = services(file);
    const account = cli.auth.createAccount('owner');
    const { key, secret } = cli.auth.createKey(account.id, { name: 'k', permissions: ['recordings:read', 'recordings:create'] });
    const session = cli.auth.createSession(account.id);
    const principal = cli.auth.authenticate(secret);
    const { row } = cli.recordings.create(principal, { type: 'clip', transcript: 'words' }, 'c-1');
    assert.equal(server.auth.cached(secret), undefined, 'nothing cached before a first authenticate');
    server.auth.authenticate(secret);
    server.auth.authenticate(session.token);
    for (const token of [secret, session.token]) {
      const cached = server.auth.cached(token)!;
      assert.match(server.recordings.answerWhileLive(cached.principal, row.id)!.body, /"transcript":"words"/);
      assert.equal(server.recordings.answerWhileLive(cached.principal, 'rec_doesnotexist'), undefined);
    }
    cli.auth.revokeKey(account.id, key.id);
    cli.auth.endSession(session.token);
    for (const token of [secret, session.token]) {
      // The cache cannot know (nobody asked it whether another connection committed) ...
      const cached = server.auth.cached(token);
      assert.ok(cached, 'still cached');
      // ... but the read that would answer sees the revocation in its own snapshot.
      assert.equal(server.recordings.answerWhileLive(cached.principal, row.id), undefined);
    }
    // The checked way, which the direct route then takes, refuses both (its first look drops the cache).
    assert.throws(() => server.auth.authenticate(secret), /revoked/);
    assert.throws(() => server.auth.authenticate(session.token), /not valid/);
    // A deleted recording is not answered either (the app answers 410).
    const other = cli.auth.createKey(account.id, { name: 'k2', permissions: ['recordings:read', 'recordings:delete'] });
    const p2 = server.auth.authenticate(other.secret);
    cli.recordings.remove(cli.auth.authenticate(other.secret), row.id, 1);
    assert.equal(server.recordings.answerWhileLive(p2, row.id), undefined);
  });

  it('a create with a credential taken unchecked is refused in its transaction once revoked or ended by another connection', async () => {
    const file = tempDb();
    const server = services(file);
    const cli = services(file);
    const account = cli.auth.createAccount('owner');
    const { key, secret } = cli.auth.createKey(account.id, { name: 'k', permissions: ['recordings:create'] });
    const session = cli.auth.createSession(account.id);
    const count = () => server.core.db.prepare('SELECT count(*) FROM recordings').pluck().get();
    const byKey = server.auth.authenticate(secret);
    const bySession = server.auth.authenticate(session.token);
    await server.recordings.createGrouped(byKey, { type: 'clip', transcript: 'one' }, 'k-1', true);
    await server.recordings.createGrouped(bySession, { type: 'clip', transcript: 'two' }, 's-1', true);
    assert.equal(count(), 2);
    cli.auth.revokeKey(account.id, key.id);
    cli.auth.endSession(session.token);
    await assert.rejects(server.recordings.createGrouped(byKey, { type: 'clip', transcript: 'three' }, 'k-2', true), { code: 'unauthenticated', message: /revoked/ });
    await assert.rejects(server.recordings.createGrouped(bySession, { type: 'clip', transcript: 'four' }, 's-2', true), { code: 'unauthenticated', message: /not valid/ });
    // A replay too: the check comes first.
    await assert.rejects(server.recordings.createGrouped(byKey, { type: 'clip', transcript: 'one' }, 'k-1', true), { code: 'unauthenticated' });
    assert.equal(count(), 2, 'nothing written');
    // Checked by its caller (authenticate(), or a principal of the CLI's own): no second check.
    await server.recordings.createGrouped(byKey, { type: 'clip', transcript: 'five' }, 'k-3');
    assert.equal(count(), 3);
  });

  it('in a group commit, a create refused as unchecked-and-revoked fails alone: the other members commit (both runs of the group)', async () => {
    const file = tempDb();
    const server = services(file);
    const cli = services(file);
    const account = cli.auth.createAccount('owner');
    const revoked = cli.auth.createKey(account.id, { name: 'revoked', permissions: ['recordings:create'] });
    const live = cli.auth.createKey(account.id, { name: 'live', permissions: ['recordings:create'] });
    const session = cli.auth.createSession(account.id);
    const byRevoked = server.auth.authenticate(revoked.secret);
    const byLive = server.auth.authenticate(live.secret);
    const bySession = server.auth.authenticate(session.token);
    cli.auth.revokeKey(account.id, revoked.key.id);
    const count = () => server.core.db.prepare('SELECT count(*) FROM recordings').pluck().get();
    assert.equal(server.auth.keyUses.flush(), true, 'the uses authenticate() noted are written now, not inside the groups');
    let commits = 0;
    server.core.writer.afterEachCommit(() => commits++);
    const clip = (transcript: string) => ({ type: 'clip' as const, transcript });

    // One group (queued in the same turn), run without savepoints: the refusal reads only, so it
    // is rejected alone and the group commits once.
    const first = await Promise.allSettled([
      server.recordings.createGrouped(byLive, clip('one'), 'g1-live', true),
      server.recordings.createGrouped(byRevoked, clip('two'), 'g1-revoked', true),
      server.recordings.createGrouped(bySession, clip('three'), 'g1-session', true),
    ]);
    assert.deepEqual(first.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
    assert.equal((first[1] as PromiseRejectedResult).reason.code, 'unauthenticated');
    assert.match((first[1] as PromiseRejectedResult).reason.message, /revoked/);
    assert.equal(count(), 2);
    assert.equal(commits, 1, 'one transaction for the group');

    // Another member fails after writing a row: the group runs again, each member in a savepoint.
    // The unchecked member is refused in that run too; the others still commit.
    const failing = server.core.writer.writeGrouped(() => {
      server.core.db.prepare("INSERT INTO devices (account_id, id, name, model, created_at) VALUES (?, 'd1', 'd', 'ring', 0)").run(account.id);
      throw new Error('fails after a write');
    });
    const second = await Promise.allSettled([
      server.recordings.createGrouped(byLive, clip('four'), 'g2-live', true),
      server.recordings.createGrouped(byRevoked, clip('five'), 'g2-revoked', true),
      failing,
      server.recordings.createGrouped(bySession, clip('six'), 'g2-session', true),
    ]);
    assert.deepEqual(second.map((r) => r.status), ['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    assert.equal((second[1] as PromiseRejectedResult).reason.code, 'unauthenticated');
    assert.equal(count(), 4);
    assert.equal(server.core.db.prepare('SELECT count(*) FROM devices').pluck().get(), 0, "the failing member's row was rolled back");
    assert.equal(commits, 2);
  });

  it('cached() gives no expired credential, and notes no use: used() does (fake clock)', () => {
    const file = tempDb();
    const clock = new FakeClock();
    const server = services(file, clock);
    const account = server.auth.createAccount('owner');
    const { key, secret } = server.auth.createKey(account.id, { name: 'short', permissions: ['recordings:read'], expiry: 1 });
    server.auth.authenticate(secret);
    const noted = () => server.auth.listKeys(account.id).find((k) => k.id === key.id)!.lastUsedAt;
    const first = noted();
    clock.advance(120_000);
    const cached = server.auth.cached(secret)!;
    assert.equal(noted(), first, 'cached() noted nothing');
    server.auth.used(cached);
    assert.equal(noted(), clock.now());
    clock.advance(86_400_000);
    assert.equal(server.auth.cached(secret), undefined, 'expired');
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
