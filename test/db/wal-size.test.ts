// The WAL file does not keep the size of its largest burst: after a checkpoint the next write cuts
// it back to WAL_SIZE_LIMIT (journal_size_limit), so a small disk holds more library.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { it } from 'node:test';
import { openDatabase, WAL_SIZE_LIMIT } from '../../src/db/open';

it('after a burst and a checkpoint, the next write cuts the WAL file back to WAL_SIZE_LIMIT', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-wal-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'reclib.db');
  const db = openDatabase(file);
  t.after(() => db.close());
  db.exec('CREATE TABLE burst (x TEXT)');
  const insert = db.prepare('INSERT INTO burst VALUES (?)');
  db.transaction(() => {
    for (let i = 0; i < 2_000; i++) insert.run('x'.repeat(10_000));
  })();
  assert.ok(fs.statSync(`${file}-wal`).size > 2 * WAL_SIZE_LIMIT, 'the burst grew the WAL');
  db.pragma('wal_checkpoint(PASSIVE)');
  insert.run('one more');
  assert.ok(fs.statSync(`${file}-wal`).size <= WAL_SIZE_LIMIT, `WAL of ${fs.statSync(`${file}-wal`).size} bytes`);
});
