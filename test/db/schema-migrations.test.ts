// Schema 4: the search index keeps no positions (detail = none) and the recordings table is keyed by
// pos = -seq. Schema 5: the search index has no prefix index. Schema 6: its leaves are ~2,000
// bytes (only set: nothing is rewritten). A database written under schema 3 or
// 4 (kept as fixtures) is rebuilt on open, in the same transaction as the version bump: every row
// and idempotency key kept, the index written once, and every kind of search answers as before:
// words, prefixes, phrases (word order tested on the text), deleted text not found, and later
// edits and deletes keep the index exact.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import type Database from 'better-sqlite3';
import { openSqlite } from '../../src/db/sqlite';
import { PAGE_SIZE, SCHEMA_VERSION, schemaText } from '../../src/db/migrate';
import { harness } from '../helpers/harness';

const seqOf = (recordedAt: number) => (2 ** 43 - 1 - recordedAt) * 1024 + 1023;

/** A new file in WAL mode with `ddl` applied, marked as schema `version`, holding account acc_a. */
function oldDatabase(version: number, ddl: string): { file: string; raw: Database.Database } {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), `reclib-v${version}-`)), 'reclib.db');
  const raw = openSqlite(file);
  raw.pragma('journal_mode = WAL');
  raw.exec(ddl);
  raw.pragma(`user_version = ${version}`);
  raw.prepare("INSERT INTO accounts (id, name, app_integration, created_at) VALUES ('acc_a', 'alice', 'int_a', 1)").run();
  return { file, raw };
}

const fixture = (name: string): string => fs.readFileSync(path.join(import.meta.dirname, '..', 'fixtures', name), 'utf8');

function schema3Database(): string {
  const { file, raw } = oldDatabase(3, fixture('schema-v3.sql'));
  const insert = raw.prepare(
    `INSERT INTO recordings (seq, id, account_id, integration_id, type, title, transcript, recorded_at, created_at, updated_at, revision, status, body_hash, deleted_at)
     VALUES (?, ?, 'acc_a', 'int_a', 'memo', ?, ?, ?, 1, 1, 1, 'ready', ?, ?)`,
  );
  const rows: Array<[string, string, string, number, number | null]> = [
    ['rec_1', 'Budget meeting', 'we review the budget with the team', 1000, null],
    ['rec_2', 'Team lunch', 'the budget review is next week', 2000, null],
    ['rec_3', 'Secret plans', 'the secret word is zanzibar', 3000, null],
    ['rec_4', 'Interval notes', 'intermediate internal integration', 4000, null],
  ];
  for (const [id, title, transcript, at, deleted] of rows) insert.run(seqOf(at), id, title, transcript, at, 'a'.repeat(64), deleted);
  raw.prepare("INSERT INTO recording_keys (integration_id, key, recording_seq, created_at) VALUES ('int_a', 'k-old', ?, 1)").run(seqOf(2000));
  // As schema 3's writer did at commit: index the noted rows, then empty the note table.
  raw.exec(`INSERT INTO recordings_fts (rowid, title, transcript)
              SELECT r.seq, r.title, r.transcript FROM recordings_fts_pending p JOIN recordings r ON r.seq = p.seq;
            DELETE FROM recordings_fts_pending;`);
  const terms = raw.prepare('INSERT OR IGNORE INTO recording_terms (term) VALUES (?)');
  for (const [, title, transcript] of rows) for (const w of `${title} ${transcript}`.toLowerCase().split(/\W+/)) if (w) terms.run(w);
  // A recording deleted under schema 3: a tombstone, its text erased (and so taken out of the index).
  raw.prepare("UPDATE recordings SET title = '', transcript = '', deleted_at = 5 WHERE id = 'rec_3'").run();
  raw.prepare("DELETE FROM recording_terms WHERE term IN ('secret', 'plans', 'word', 'zanzibar')").run();
  raw.close();
  return file;
}

describe('migration from schema 3', () => {
  it('keeps every row and key under the new table key, re-indexes without positions, and every kind of search still answers', () => {
    const file = schema3Database();
    const h = harness({ db: file });
    const { db } = h.services.core;
    const account = { accountId: 'acc_a' };
    const ids = (q: string) => h.services.recordings.list(account, { limit: 10, q }).rows.map((r) => r.id);
    try {
      assert.equal(SCHEMA_VERSION, 7);
      assert.equal(db.pragma('user_version', { simple: true }), SCHEMA_VERSION);
      const ddl = db.prepare("SELECT sql FROM sqlite_master WHERE name = 'recordings_fts'").pluck().get() as string;
      assert.match(ddl, /detail = none/);
      assert.doesNotMatch(ddl, /prefix/);
      db.exec("INSERT INTO recordings_fts (recordings_fts, rank) VALUES ('integrity-check', 1)");
      assert.equal(db.prepare('SELECT count(*) FROM recordings_fts_pending').pluck().get(), 0);
      const config = Object.fromEntries((db.prepare('SELECT k, v FROM recordings_fts_config').all() as Array<{ k: string; v: number }>).map((r) => [r.k, r.v]));
      assert.equal(config['secure-delete'], 1, 'deleted text is still erased from the index');

      assert.equal(db.prepare('SELECT count(*) FROM recordings WHERE pos <> -seq').pluck().get(), 0, 'every row keyed by pos = -seq');
      assert.equal(db.prepare('SELECT count(*) FROM recordings').pluck().get(), 4, 'tombstones kept');
      const keyed = db.prepare("SELECT r.id FROM recording_keys k JOIN recordings r ON r.pos = k.recording_pos WHERE k.key = 'k-old'").pluck().get();
      assert.equal(keyed, 'rec_2', 'an idempotency key still names its recording');
      assert.deepEqual(db.pragma('foreign_key_check'), []);
      assert.deepEqual(db.prepare("SELECT name FROM sqlite_master WHERE name LIKE '%_v3'").pluck().all(), [], 'the old tables are gone');
      assert.deepEqual(ids('budget'), ['rec_2', 'rec_1'], 'a word, newest first');
      assert.deepEqual(ids('bud'), ['rec_2', 'rec_1'], 'a 3-letter prefix');
      assert.deepEqual(ids('inte'), ['rec_4'], 'a prefix expanded through the stored forms');
      assert.deepEqual(ids('"budget review"'), ['rec_2'], 'a phrase: its word order is tested on the text');
      assert.deepEqual(ids('"review budget"'), [], 'the same words in another order are no phrase match');
      assert.deepEqual(ids('team budget'), ['rec_2', 'rec_1'], 'two words');
      assert.deepEqual(ids('zanzibar'), [], 'text deleted before the migration is not found');

      // Writes after the migration keep the index exact.
      const principal = h.services.auth.authenticate(h.key());
      const { row } = h.services.recordings.create(principal, { type: 'clip', title: 'Zebra budget', transcript: 'a new budget' }, 'k1');
      assert.equal(h.services.recordings.list({ accountId: h.accountId }, { limit: 10, q: '"new budget"' }).rows.length, 1);
      h.services.recordings.remove(principal, row.id, 1);
      assert.equal(h.services.recordings.list({ accountId: h.accountId }, { limit: 10, q: 'zebra' }).rows.length, 0);
      db.exec("INSERT INTO recordings_fts (recordings_fts, rank) VALUES ('integrity-check', 1)");
    } finally {
      db.close();
    }
  });
});

/** A database as schema 4 wrote it (its schema.sql kept as a fixture): the prefix index, live text indexed. */
function schema4Database(): string {
  const { file, raw } = oldDatabase(4, fixture('schema-v4.sql'));
  const insert = raw.prepare(
    `INSERT INTO recordings (pos, seq, id, account_id, integration_id, type, title, transcript, recorded_at, created_at, updated_at, revision, status, body_hash, deleted_at)
     VALUES (-?, ?, ?, 'acc_a', 'int_a', 'memo', ?, ?, ?, 1, 1, 1, 'ready', ?, NULL)`,
  );
  const rows: Array<[string, string, string, number]> = [
    ['rec_1', 'Budget meeting', 'we review the budget with the team', 1000],
    ['rec_2', 'Team lunch', 'the budget review is next week', 2000],
    ['rec_3', 'Café', 'internal integration intermediate', 3000],
  ];
  for (const [id, title, transcript, at] of rows) insert.run(seqOf(at), seqOf(at), id, title, transcript, at, 'a'.repeat(64));
  raw.exec(`INSERT INTO recordings_fts (rowid, title, transcript)
              SELECT r.seq, r.title, r.transcript FROM recordings_fts_pending p CROSS JOIN recordings r ON r.pos = -p.seq;
            DELETE FROM recordings_fts_pending;`);
  const terms = raw.prepare('INSERT OR IGNORE INTO recording_terms (term) VALUES (?)');
  for (const w of ['budget', 'meeting', 'we', 'review', 'the', 'with', 'team', 'lunch', 'is', 'next', 'week', 'café', 'cafe', 'internal', 'integration', 'intermediate'])
    terms.run(w);
  raw.close();
  return file;
}

describe('migration from schema 4', () => {
  it('rebuilds the index without the prefix index, once, and prefixes of any length still find every match', () => {
    const file = schema4Database();
    const h = harness({ db: file });
    const { db } = h.services.core;
    const ids = (q: string) => h.services.recordings.list({ accountId: 'acc_a' }, { limit: 10, q }).rows.map((r) => r.id);
    try {
      assert.equal(db.pragma('user_version', { simple: true }), SCHEMA_VERSION);
      const ddl = db.prepare("SELECT sql FROM sqlite_master WHERE name = 'recordings_fts'").pluck().get() as string;
      assert.doesNotMatch(ddl, /prefix/);
      assert.equal(db.pragma('page_size', { simple: true }), PAGE_SIZE, 'rewritten with 16 KB pages');
      assert.equal(db.pragma('journal_mode', { simple: true }), 'wal', 'and back in WAL mode');
      assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
      // Indexed once: a row indexed twice fails the check (its postings counted twice).
      db.exec("INSERT INTO recordings_fts (recordings_fts, rank) VALUES ('integrity-check', 1)");
      assert.equal(db.prepare('SELECT count(*) FROM recordings_fts').pluck().get(), 3);
      const config = Object.fromEntries((db.prepare('SELECT k, v FROM recordings_fts_config').all() as Array<{ k: string; v: number }>).map((r) => [r.k, r.v]));
      assert.equal(config['secure-delete'], 1, 'deleted text is still erased from the index');
      assert.equal(config.pgsz, 2000, 'the leaves of schema 6');
      assert.equal(config.usermerge, 4, 'the idle merging of schema 7');
      assert.deepEqual(ids('budget'), ['rec_2', 'rec_1']);
      assert.deepEqual(ids('bud'), ['rec_2', 'rec_1'], 'a 3-letter prefix, now through the stored forms');
      assert.deepEqual(ids('we'), ['rec_2', 'rec_1'], 'a 2-letter prefix');
      assert.deepEqual(ids('int'), ['rec_3']);
      assert.deepEqual(ids('caf'), ['rec_3'], 'accents folded');
      assert.deepEqual(ids('"budget review"'), ['rec_2']);
    } finally {
      db.close();
    }
  });
});

describe('migration from schema 5', () => {
  it('sets the index leaf size and rewrites nothing: the segments are the ones it had', () => {
    // As schema 5 left it: today's tables with FTS5's default leaf size, and version 5.
    const { file, raw } = oldDatabase(5, `${schemaText()}; INSERT INTO recordings_fts (recordings_fts, rank) VALUES ('pgsz', 4050);`);
    raw
      .prepare(
        `INSERT INTO recordings (pos, seq, id, account_id, integration_id, type, title, transcript, recorded_at, created_at, updated_at, revision, status, body_hash)
         VALUES (-?, ?, 'rec_1', 'acc_a', 'int_a', 'memo', 'Budget meeting', 'we review the budget', 1000, 1, 1, 1, 'ready', ?)`,
      )
      .run(seqOf(1000), seqOf(1000), 'a'.repeat(64));
    raw.exec(`INSERT INTO recordings_fts (rowid, title, transcript) SELECT seq, title, transcript FROM recordings;
              DELETE FROM recordings_fts_pending;`);
    const terms = raw.prepare('INSERT OR IGNORE INTO recording_terms (term) VALUES (?)');
    for (const w of ['budget', 'meeting', 'we', 'review', 'the']) terms.run(w);
    // The segments' pages (1 and 10 are FTS5's averages and structure record, whose cookie a config change bumps).
    const pages = "SELECT id, block FROM recordings_fts_data WHERE id > 10 ORDER BY id";
    const data = raw.prepare(pages).all();
    assert.ok(data.length > 0);
    raw.close();
    const h = harness({ db: file });
    const { db } = h.services.core;
    try {
      assert.equal(db.pragma('user_version', { simple: true }), SCHEMA_VERSION);
      assert.equal(db.prepare("SELECT v FROM recordings_fts_config WHERE k = 'pgsz'").pluck().get(), 2000);
      assert.equal(db.prepare("SELECT v FROM recordings_fts_config WHERE k = 'usermerge'").pluck().get(), 4, 'and schema 7 merges more when idle');
      assert.deepEqual(db.prepare(pages).all(), data, 'the segments as they were');
      assert.deepEqual(h.services.recordings.list({ accountId: 'acc_a' }, { limit: 10, q: 'budg' }).rows.map((r) => r.id), ['rec_1']);
    } finally {
      db.close();
    }
  });
});

describe('the 16 KB page rewrite of migration 5', () => {
  it('leaves a file another connection holds with its pages, migrated and in WAL mode, and says so', () => {
    const file = schema4Database();
    const other = openSqlite(file);
    other.prepare('SELECT count(*) FROM recordings').get(); // holds a shared-memory connection to the file
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on('warning', onWarning);
    const h = harness({ db: file });
    const { db } = h.services.core;
    try {
      assert.equal(db.pragma('user_version', { simple: true }), SCHEMA_VERSION);
      assert.equal(db.pragma('page_size', { simple: true }), 4096, 'kept its pages');
      assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
      assert.equal(h.services.recordings.list({ accountId: 'acc_a' }, { limit: 10, q: 'bud' }).rows.length, 2);
    } finally {
      db.close();
      other.close();
    }
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        process.off('warning', onWarning);
        assert.ok(warnings.some((m) => /keeps its 4096-byte pages/.test(m)), warnings.join('; '));
        resolve();
      }),
    );
  });
});
