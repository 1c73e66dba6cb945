// Schema 3: a database written by the previous release (schema 2, kept as a fixture)
// opens with every row kept, account names included when two differ only in case, and gains the
// index of the per-subscription delivery log.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { openSqlite } from '../../src/db/sqlite';
import { testConfig } from '../../src/config';
import { SCHEMA_VERSION } from '../../src/db/migrate';
import { openRuntime } from '../../src/runtime';

describe('migration from schema 2', () => {
  it('keeps duplicate account names and every delivery, adds the delivery-log index, and the new rules apply', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-v2-')), 'reclib.db');
    const raw = openSqlite(file);
    raw.pragma('journal_mode = WAL');
    raw.exec(fs.readFileSync(path.join(import.meta.dirname, '..', 'fixtures', 'schema-v2.sql'), 'utf8'));
    raw.pragma('user_version = 2');
    const account = raw.prepare('INSERT INTO accounts (id, name, app_integration, created_at) VALUES (?, ?, ?, 1)');
    account.run('acc_a', 'alice', 'int_a');
    account.run('acc_b', 'Alice', 'int_b');
    raw.prepare("INSERT INTO webhooks (id, account_id, url, events, created_at) VALUES ('wh_old', 'acc_a', 'https://example.com/h', '[\"recording.created\"]', 1)").run();
    const delivery = raw.prepare(
      `INSERT INTO deliveries (id, account_id, webhook_id, event_id, recording_id, revision, kind, status, body, created_at, updated_at)
       VALUES (?, 'acc_a', 'wh_old', ?, 'rec_x', 1, 'event', 'delivered', '{}', ?, ?)`,
    );
    delivery.run('dlv_1', '1', 10, 10);
    delivery.run('dlv_2', '2', 20, 20);
    raw.close();

    const services = openRuntime(testConfig({ db: file }));
    const { db } = services.core;
    try {
      assert.equal(db.pragma('user_version', { simple: true }), SCHEMA_VERSION);
      assert.deepEqual(services.auth.store.accounts().map((a) => [a.id, a.name]), [['acc_a', 'alice'], ['acc_b', 'Alice']]);
      const indexes = db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'deliveries'").pluck().all();
      assert.ok(indexes.includes('deliveries_webhook_log'), String(indexes));
      const plan = db.prepare("EXPLAIN QUERY PLAN SELECT rowid FROM deliveries WHERE webhook_id = 'wh_old' AND (created_at, rowid) < (30, 9) ORDER BY created_at DESC, rowid DESC").all() as Array<{ detail: string }>;
      assert.match(plan.map((p) => p.detail).join(';'), /USING (COVERING )?INDEX deliveries_webhook_log/);
      assert.doesNotMatch(plan.map((p) => p.detail).join(';'), /TEMP B-TREE/, 'read in order, no sort');
      assert.deepEqual(services.webhookLog.page('acc_a', 'wh_old', { limit: 10 }).deliveries.map((d) => d.id), ['dlv_2', 'dlv_1']);
      assert.throws(() => services.auth.createAccount('ALICE'), /already exists/);
      await assert.rejects(services.auth.login('alice', 'whatever pw'), /share this name/);
    } finally {
      db.close();
    }
  });
});
