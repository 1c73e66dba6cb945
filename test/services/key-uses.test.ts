// A key's lastUsedAt is written after the request that used the key (src/services/key-uses.ts):
// a read never waits for the write lock, which another process (the admin CLI) may hold.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { openSqlite } from '../../src/db/sqlite';
import { BUSY_TIMEOUT_MS } from '../../src/db/open';
import { KeyUses } from '../../src/services/key-uses';
import { harness } from '../helpers/harness';

const tmpDb = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-key-uses-')), 'reclib.db');
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Another process's connection to the same file, holding the write lock until released. */
function lockHolder(file: string) {
  const other = openSqlite(file);
  other.exec('BEGIN IMMEDIATE');
  return {
    lastUsedAt: (keyId: string) => (other.prepare('SELECT last_used_at FROM api_keys WHERE id = ?').get(keyId) as { last_used_at: number | null }).last_used_at,
    release() {
      other.exec('ROLLBACK');
      other.close();
    },
  };
}

describe('key use (lastUsedAt) is written after the request, never waiting for the write lock', () => {
  it('a GET whose key use is due answers at once while another process holds the write lock', async () => {
    const h = harness({ db: tmpDb() });
    const token = h.key(['recordings:read']);
    const keyId = h.services.auth.listKeys(h.accountId)[0]!.id;
    const lock = lockHolder(h.config.db);
    try {
      const started = performance.now();
      const res = await h.req('GET', '/api/v2/recordings', { token });
      const ms = performance.now() - started;
      assert.equal(res.status, 200, res.text);
      assert.ok(ms < BUSY_TIMEOUT_MS / 2, `answered in ${Math.round(ms)} ms, not after busy_timeout`);
      await nextTurn(); // the write is tried on the next turn and finds the lock taken
      assert.equal(lock.lastUsedAt(keyId), null, 'not written while the lock is held');
      assert.equal(h.services.auth.listKeys(h.accountId)[0]!.lastUsedAt, h.clock.now(), 'listings show the use at once');
    } finally {
      lock.release();
    }
    assert.equal(h.services.auth.keyUses.flush(), true);
    const row = h.services.auth.store.keys(h.accountId)[0]!;
    assert.equal(row.last_used_at, h.clock.now(), 'written once the lock is free');
    h.services.core.db.close();
  });

  it('a noted use is written on the next turn of the event loop', async () => {
    const h = harness();
    const token = h.key(['recordings:read']);
    assert.equal((await h.req('GET', '/api/v2/recordings', { token })).status, 200);
    await nextTurn();
    assert.equal(h.services.auth.store.keys(h.accountId)[0]!.last_used_at, h.clock.now());
  });

  it('a write that found the lock taken is tried again later by itself', async () => {
    const h = harness({ db: tmpDb() });
    h.key(['recordings:read']);
    const keyId = h.services.auth.listKeys(h.accountId)[0]!.id;
    const uses = new KeyUses(h.services.core.writer, h.services.auth.store, 10);
    const lock = lockHolder(h.config.db);
    uses.note(keyId, 1234);
    await nextTurn();
    assert.equal(uses.unwritten(keyId), 1234, 'still pending while the lock is held');
    lock.release();
    for (let i = 0; i < 100 && uses.unwritten(keyId) !== undefined; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(uses.unwritten(keyId), undefined);
    assert.equal(h.services.auth.store.keys(h.accountId)[0]!.last_used_at, 1234);
    h.services.core.db.close();
  });
});
