// One SQLite file, two kinds of writer: the running server (HTTP) and admin CLI processes. Every
// write is BEGIN IMMEDIATE with a busy timeout, so neither side ever sees "database is locked";
// `reclib backup` taken while the server writes is a consistent copy (integrity_check ok).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { openSqlite } from '../../src/db/sqlite';
import { cliJson, runCli, startServe, type ServeProcess } from '../helpers/bundle';

const tmpDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-e2e-'));

/** Creates and revokes keys over HTTP until stopped (stays under the 50 active key limit). */
function httpWriteLoop(server: ServeProcess, session: string) {
  let running = true;
  const statuses: number[] = [];
  const bodies: string[] = [];
  const auth = { authorization: `Bearer ${session}` };
  const done = (async () => {
    while (running) {
      const res = await fetch(`${server.url}/api/v2/api-keys`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `loop ${statuses.length}`, permissions: ['events:read'] }),
      });
      const text = await res.text();
      statuses.push(res.status);
      if (res.status !== 201) {
        bodies.push(text);
        continue;
      }
      const { key } = JSON.parse(text) as { key: { id: string } };
      const del = await fetch(`${server.url}/api/v2/api-keys/${key.id}`, { method: 'DELETE', headers: auth });
      statuses.push(del.status);
      if (del.status !== 204) bodies.push(await del.text());
    }
  })();
  return {
    statuses,
    bodies,
    stop: async () => {
      running = false;
      await done;
    },
  };
}

async function setup(dir: string) {
  const db = path.join(dir, 'reclib.db');
  const server = await startServe(['--db', db, '--rate-limit', '0']);
  const { account } = await cliJson(['accounts', 'create', '--db', db, '--name', 'owner']);
  const { session } = await cliJson(['sessions', 'create', '--db', db, '--account', account.id]);
  return { db, server, accountId: account.id as string, session: session.token as string };
}

describe('the CLI and the server write the same file concurrently', () => {
  it('CLI writes during a stream of HTTP writes never surface "database is locked"', async () => {
    const { db, server } = await setup(tmpDir());
    try {
      const { account: other } = await cliJson(['accounts', 'create', '--db', db, '--name', 'other']);
      const { session: s } = await cliJson(['sessions', 'create', '--db', db, '--account', other.id]);
      const loop = httpWriteLoop(server, s.token);
      const cli = [];
      for (let round = 0; round < 3; round++) {
        cli.push(
          ...(await Promise.all([
            runCli(['keys', 'create', '--db', db, '--account', other.id, '--name', `cli ${round}`, '--permissions', 'events:read', '--json']),
            runCli(['sessions', 'create', '--db', db, '--account', other.id, '--json']),
            runCli(['accounts', 'create', '--db', db, '--name', `acct ${round}`, '--json']),
          ])),
        );
      }
      await loop.stop();
      for (const r of cli) {
        assert.equal(r.code, 0, r.stderr);
        assert.doesNotMatch(r.stderr, /locked|busy/i);
        JSON.parse(r.stdout);
      }
      assert.ok(loop.statuses.length >= 10, `only ${loop.statuses.length} HTTP writes happened`);
      assert.deepEqual(loop.bodies, [], 'every HTTP write succeeded');
      assert.ok(loop.statuses.every((st) => st === 201 || st === 204));
      assert.doesNotMatch(server.stderr(), /locked|internal error/i);
    } finally {
      assert.equal(await server.stop('SIGTERM'), 0);
    }
  });

  it('reclib backup taken while the server writes is a consistent copy (integrity_check ok)', async () => {
    const dir = tmpDir();
    const { db, server, accountId, session } = await setup(dir);
    try {
      const loop = httpWriteLoop(server, session);
      while (loop.statuses.length < 20) await new Promise((r) => setTimeout(r, 10));
      const copy = path.join(dir, 'backups', 'copy.db');
      const before = loop.statuses.length;
      const result = await cliJson(['backup', '--db', db, '--to', copy]);
      const during = loop.statuses.length - before;
      await loop.stop();
      assert.ok(during > 0, 'the server kept writing while the backup ran');
      assert.equal(result.backup.file, copy);
      assert.ok(result.backup.bytes > 0);
      assert.deepEqual(loop.bodies, []);

      const restored = openSqlite(copy, { readonly: true });
      assert.equal(restored.pragma('integrity_check', { simple: true }), 'ok');
      assert.deepEqual(restored.pragma('foreign_key_check'), []);
      assert.equal(restored.prepare('SELECT count(*) FROM accounts WHERE id = ?').pluck().get(accountId), 1);
      assert.ok((restored.prepare('SELECT count(*) FROM api_keys').pluck().get() as number) >= 5, 'the copy holds the writes made before it');
      assert.ok(restored.pragma('user_version', { simple: true }) as number >= 1);
      restored.close();

      const again = await runCli(['backup', '--db', db, '--to', copy]);
      assert.notEqual(again.code, 0, 'an existing file is never overwritten');
      assert.match(again.stderr, /already exists/);
    } finally {
      assert.equal(await server.stop('SIGTERM'), 0);
    }
  });
});
