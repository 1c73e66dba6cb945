// CommitWatch (src/db/commit-watch.ts) reads the wal-index header at the start of SQLite's -shm
// file to skip PRAGMA data_version between commits. That header is SQLite's shared-memory format
// (https://sqlite.org/walformat.html), not an API: these tests pin the layout the watch relies on,
// so that a better-sqlite3 upgrade that brings a SQLite with another layout fails here, by name,
// instead of silently keeping a revoked key valid (test/services/principal-cache.test.ts checks that
// behaviour itself).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { CommitWatch } from '../../src/db/commit-watch';
import { openDatabase, type Db } from '../../src/db/open';

const tmpDb = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-commit-watch-')), 'reclib.db');

/** The first copy of the wal-index header, as walformat.html lays it out (native byte order). */
function header(file: string) {
  const b = Buffer.alloc(96);
  const fd = fs.openSync(`${file}-shm`, 'r');
  try {
    fs.readSync(fd, b, 0, 96, 0);
  } finally {
    fs.closeSync(fd);
  }
  const le = os.endianness() === 'LE';
  const u32 = (at: number) => (le ? b.readUInt32LE(at) : b.readUInt32BE(at));
  return {
    iVersion: u32(0),
    iChange: u32(8),
    isInit: b[12],
    szPage: le ? b.readUInt16LE(14) : b.readUInt16BE(14),
    mxFrame: u32(16),
    firstCopy: b.subarray(0, 48),
    secondCopy: b.subarray(48, 96),
  };
}

/** Frames in a WAL that has not been restarted since it was created. */
const walFrames = (file: string, pageSize: number) => (fs.statSync(`${file}-wal`).size - 32) / (pageSize + 24);

describe('the wal-index header CommitWatch reads has the layout it relies on', () => {
  const version = (db: Db) => db.prepare('SELECT sqlite_version()').pluck().get() as string;

  it('the -shm file starts with the header: version 3007000, initialised, page size, last frame; both copies equal', () => {
    const file = tmpDb();
    const db = openDatabase(file);
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    const h = header(file);
    const sqlite = `SQLite ${version(db)}`;
    assert.equal(h.iVersion, 3_007_000, `${sqlite}: wal-index format version`);
    assert.equal(h.isInit, 1, `${sqlite}: isInit at byte 12`);
    assert.equal(h.szPage, pageSize, `${sqlite}: page size at byte 14`);
    assert.equal(h.mxFrame, walFrames(file, pageSize), `${sqlite}: mxFrame at byte 16 counts the WAL's frames`);
    assert.ok(h.firstCopy.equals(h.secondCopy), `${sqlite}: the header is stored twice, 48 bytes each`);
    db.close();
  });

  it("another connection's commit rewrites the first 48 bytes (iChange and mxFrame move on), and the watch sees it", () => {
    const file = tmpDb();
    const db = openDatabase(file);
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    let asked = 0;
    const dataVersion = db.prepare('PRAGMA data_version').pluck();
    const watch = CommitWatch.of(db, () => {
      asked++;
      return dataVersion.get() as number;
    });
    const seen = watch.current();
    assert.equal(watch.current(), seen);
    assert.equal(asked, 1, 'at rest the header alone answers');

    const before = header(file);
    const other = openDatabase(file);
    other.prepare("INSERT INTO accounts (id, name, app_integration, created_at) VALUES ('acc_w', 'w', 'int_w', 1)").run();
    const after = header(file);
    assert.notEqual(after.iChange, before.iChange, `SQLite ${version(db)}: iChange at byte 8 moves on each commit`);
    assert.ok(after.mxFrame > before.mxFrame, 'mxFrame moves on');
    assert.equal(after.mxFrame, walFrames(file, pageSize));
    assert.ok(!after.firstCopy.equals(before.firstCopy));

    assert.notEqual(watch.current(), seen, "the watch reports the other connection's commit");
    assert.equal(asked, 2, 'by asking data_version once, because the header moved');
    other.close();
    db.close();
  });
});
