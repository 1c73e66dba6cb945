// WalSync's descriptors (src/db/wal-sync.ts): the thread pool's fsync and flushNow() each flush
// through a descriptor of their own, and one that an fsync on the pool still uses is not closed
// under it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, test } from 'node:test';
import { openSqlite } from '../../src/db/sqlite';
import { WalSync } from '../../src/db/wal-sync';

const realFdatasync = fs.fdatasync;
const realFdatasyncSync = fs.fdatasyncSync;
afterEach(() => {
  fs.fdatasync = realFdatasync;
  fs.fdatasyncSync = realFdatasyncSync;
});

function walDb() {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-walsync-')), 'w.db');
  const db = openSqlite(file);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE t (x)');
  return { db, file };
}

const isOpen = (fd: number): boolean => {
  try {
    fs.fstatSync(fd);
    return true;
  } catch {
    return false;
  }
};

test('the pool and flushNow() flush the WAL through descriptors of their own (a failed writeback is reported once per open file)', async () => {
  const { db, file } = walDb();
  const sync = new WalSync(db.name);
  const seen: Array<{ way: string; fd: number }> = [];
  fs.fdatasync = ((fd: number, cb: (e: NodeJS.ErrnoException | null) => void) => {
    seen.push({ way: 'pool', fd });
    realFdatasync(fd, cb);
  }) as typeof fs.fdatasync;
  fs.fdatasyncSync = (fd: number) => {
    seen.push({ way: 'now', fd });
    realFdatasyncSync(fd);
  };
  await new Promise<void>((resolve, reject) => sync.flush((e) => (e ? reject(e) : resolve())));
  sync.flushNow();
  assert.deepEqual(seen.map((s) => s.way), ['pool', 'now']);
  assert.notEqual(seen[0]!.fd, seen[1]!.fd);
  const wal = fs.statSync(`${file}-wal`).ino;
  assert.equal(fs.fstatSync(seen[0]!.fd).ino, wal);
  assert.equal(fs.fstatSync(seen[1]!.fd).ino, wal);
  sync.close();
  assert.equal(isOpen(seen[0]!.fd) || isOpen(seen[1]!.fd), false);
  db.close();
});

test('close() while an fsync on the pool is on its way leaves its descriptor open until it returns', async () => {
  const { db } = walDb();
  const sync = new WalSync(db.name);
  let finish: (() => void) | undefined;
  let used = -1;
  fs.fdatasync = ((fd: number, cb: (e: NodeJS.ErrnoException | null) => void) => {
    used = fd;
    finish = () => realFdatasync(fd, cb);
  }) as typeof fs.fdatasync;
  const done = new Promise<unknown>((resolve) => sync.flush(resolve));
  sync.close();
  assert.ok(isOpen(used), 'not closed under the fsync (its number could name another file by then)');
  finish!();
  assert.equal(await done, undefined);
  assert.equal(isOpen(used), false, 'closed once the fsync returned');
  db.close();
});

test("an fsync error reaches the caller as SQLite's own for it", async () => {
  const { db } = walDb();
  const sync = new WalSync(db.name);
  fs.fdatasync = ((_fd: number, cb: (e: NodeJS.ErrnoException | null) => void) =>
    queueMicrotask(() => cb(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' })))) as typeof fs.fdatasync;
  fs.fdatasyncSync = () => {
    throw Object.assign(new Error('ENOSPC: no space left on device, fdatasync'), { code: 'ENOSPC' });
  };
  const error = (await new Promise<unknown>((resolve) => sync.flush(resolve))) as { code?: string; message: string };
  assert.equal(error.code, 'SQLITE_IOERR_FSYNC');
  assert.match(error.message, /fsync of the WAL failed: EIO/);
  assert.throws(() => sync.flushNow(), { code: 'SQLITE_FULL' });
  sync.close();
  db.close();
});
