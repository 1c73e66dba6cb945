// Group commit (src/db/writer.ts writeGrouped): concurrent request writes share one transaction
// and behave as if each had run alone (without savepoints first; a group with a failing member
// runs again with one per member).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { openSqlite } from '../../src/db/sqlite';
import { walSyncError } from '../../src/db/wal-sync';
import { WriteHealth } from '../../src/db/write-health';
import { GROUP_DELAY_AFTER, MAX_GROUP, Writer } from '../../src/db/writer';
import type { AppError } from '../../src/errors';
import { harness, type Harness } from '../helpers/harness';

const tmpFile = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-group-')), 'g.db');

/** A plain database with one table, in a file so a second connection can look at it. */
function scratch(file = tmpFile()) {
  const db = openSqlite(file);
  db.pragma('journal_mode = WAL');
  db.pragma('foreign_keys = ON');
  db.exec(`CREATE TABLE items (name TEXT NOT NULL UNIQUE);
    CREATE TABLE parents (id INTEGER PRIMARY KEY);
    CREATE TABLE children (parent INTEGER REFERENCES parents(id) DEFERRABLE INITIALLY DEFERRED);`);
  const insert = db.prepare<[string]>('INSERT INTO items (name) VALUES (?)');
  const names = () => db.prepare<[], { name: string }>('SELECT name FROM items ORDER BY rowid').all().map((r) => r.name);
  return { db, file, writer: new Writer(db), add: (name: string) => insert.run(name), names };
}

describe('Writer.writeGrouped', () => {
  test('under concurrent writes the next group waits GROUP_DELAY_MS and takes in writes that arrive meanwhile; a lone writer, or the first after a quiet spell, never waits', async () => {
    const s = scratch();
    // A 50 ms wait instead of GROUP_DELAY_MS, so a loaded test machine cannot fire the timer
    // before the 'late' writes are queued one event-loop turn later.
    const writer = new Writer(s.db, 50);
    s.writer = writer;
    let transactions = 0;
    s.writer.beforeCommit(() => transactions++);
    // A lone write: committed on the next macrotask, before any timer could fire.
    let alone = false;
    const lone = s.writer.writeGrouped(() => s.add('lone')).then(() => (alone = true));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(alone, true, 'a write after a group of 1 is not delayed');
    await lone;
    // A busy group makes the next one wait.
    await Promise.all(Array.from({ length: GROUP_DELAY_AFTER }, (_, i) => s.writer.writeGrouped(() => s.add(`busy${i}`))));
    const before = transactions;
    const early = [s.writer.writeGrouped(() => s.add('early1')), s.writer.writeGrouped(() => s.add('early2'))];
    await new Promise((resolve) => setImmediate(resolve)); // a later turn of the event loop, < GROUP_DELAY_MS
    const late = [s.writer.writeGrouped(() => s.add('late1')), s.writer.writeGrouped(() => s.add('late2'))];
    await Promise.all([...early, ...late]);
    assert.equal(transactions - before, 1, 'the four writes shared one transaction');
    assert.deepEqual(s.names().slice(-4), ['early1', 'early2', 'late1', 'late2']);
    // After a quiet spell, the first write is not delayed by the busy group before it.
    await Promise.all(Array.from({ length: GROUP_DELAY_AFTER }, (_, i) => s.writer.writeGrouped(() => s.add(`burst${i}`))));
    await new Promise((resolve) => setTimeout(resolve, 150));
    let quick = false;
    const after = s.writer.writeGrouped(() => s.add('after-quiet')).then(() => (quick = true));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(quick, true, 'committed on the next macrotask');
    await after;
  });

  test('with a gate (the writer thread), a busy group waits for the gate instead of GROUP_DELAY_MS, and the writes that arrive meanwhile join it', { timeout: 5_000 }, async () => {
    // 10 s instead of GROUP_DELAY_MS: were the delay still used, the test would time out.
    const s = scratch();
    const writer = new Writer(s.db, 10_000);
    let transactions = 0;
    writer.beforeCommit(() => transactions++);
    const holds: Array<[number, number]> = [];
    let arriving: Array<Promise<unknown>> = [];
    writer.holdGroupsWith({
      hold: (queued, lastGroup) => {
        holds.push([queued, lastGroup]);
        // What the writer thread's messages bring while the gate holds: they join this group.
        arriving = [writer.writeGrouped(() => s.add('during1')), writer.writeGrouped(() => s.add('during2'))];
      },
      holdAsync: () => assert.fail('only a writer with a CommitSync holds without blocking'),
    });
    // A lone write does not ask the gate.
    await writer.writeGrouped(() => s.add('lone'));
    assert.deepEqual(holds, []);
    // A busy group: the next one, queued while it commits, asks the gate with what waits and the group's size.
    const first = Array.from({ length: GROUP_DELAY_AFTER }, (_, i) => writer.writeGrouped(() => s.add(`busy${i}`)));
    await new Promise((resolve) => setImmediate(resolve));
    const before = transactions;
    const next = writer.writeGrouped(() => s.add('next'));
    await Promise.all([...first, next]);
    await Promise.all(arriving);
    assert.deepEqual(holds, [[1, GROUP_DELAY_AFTER]]);
    assert.equal(transactions - before, 1, 'the write queued before the hold and the two during it shared one transaction');
    assert.deepEqual(s.names().slice(-3), ['next', 'during1', 'during2']);
  });

  test('writes queued in the same turn commit in one transaction and resolve in order with their own results', async () => {
    const s = scratch();
    const other = openSqlite(s.file);
    const seenByOther: number[] = [];
    const order: string[] = [];
    const grouped = ['a', 'b', 'c'].map((name) =>
      s.writer.writeGrouped(() => {
        s.add(name);
        // Another connection sees nothing until the whole group commits.
        seenByOther.push(other.prepare('SELECT count(*) FROM items').pluck().get() as number);
        return name.toUpperCase();
      }).then((value) => {
        order.push(value);
        return value;
      }),
    );
    assert.deepEqual(s.names(), [], 'nothing runs before the next macrotask');
    assert.deepEqual(await Promise.all(grouped), ['A', 'B', 'C']);
    assert.deepEqual(order, ['A', 'B', 'C']);
    assert.deepEqual(seenByOther, [0, 0, 0]);
    assert.deepEqual(s.names(), ['a', 'b', 'c']);
  });

  test('an error in one grouped write rolls back only its own writes and rejects only its promise', async () => {
    const s = scratch();
    const hooks: string[] = [];
    const results = await Promise.allSettled(
      ['a', 'b', 'c'].map((name) =>
        s.writer.writeGrouped(() => {
          s.add(name);
          s.writer.onCommit(() => hooks.push(name));
          // Nested write() joins this member's savepoint, so its row goes with it.
          s.writer.write(() => s.add(`${name}2`));
          if (name === 'b') throw new Error('b failed');
          return name;
        }),
      ),
    );
    assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
    assert.equal((results[1] as PromiseRejectedResult).reason.message, 'b failed');
    assert.deepEqual(s.names(), ['a', 'a2', 'c', 'c2']);
    assert.deepEqual(hooks, ['a', 'c'], 'the failed member’s onCommit hooks never run');
  });

  test('a group runs once without savepoints; only when a member fails do all run again, each in its own savepoint', async () => {
    const s = scratch();
    const runs = { a: 0, b: 0, c: 0 };
    await Promise.all([
      s.writer.writeGrouped(() => (runs.a++, s.add('a'))),
      s.writer.writeGrouped(() => (runs.b++, s.add('b'))),
    ]);
    assert.deepEqual(runs, { a: 1, b: 1, c: 0 });
    const results = await Promise.allSettled([
      s.writer.writeGrouped(() => (runs.a++, s.add('a2'))),
      s.writer.writeGrouped(() => {
        runs.b++;
        s.add('b2');
        // Fails only on its first run: the second run, with savepoints, commits it too; what it
        // wrote on the first run was rolled back with everything else.
        if (runs.b === 2) throw new Error('b2 failed once');
      }),
      s.writer.writeGrouped(() => (runs.c++, s.add('c2'))),
    ]);
    assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'fulfilled', 'fulfilled']);
    assert.deepEqual(runs, { a: 3, b: 3, c: 1 }, 'the run stopped at the failure, and all ran again');
    assert.deepEqual(s.names(), ['a', 'b', 'a2', 'b2', 'c2'], 'nothing of the first run was kept');
  });

  test('a member refused before it changed a row is rejected without a second run; a member returning a promise is refused', async () => {
    const s = scratch();
    const runs = { a: 0, c: 0 };
    const results = await Promise.allSettled([
      s.writer.writeGrouped(() => (runs.a++, s.add('a'))),
      s.writer.writeGrouped(() => {
        throw new Error('stale revision');
      }),
      s.writer.writeGrouped(() => (runs.c++, s.add('c'))),
      s.writer.writeGrouped(async () => {
        s.add('async-before');
        await Promise.resolve();
      }),
    ]);
    assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled', 'rejected']);
    assert.equal((results[1] as PromiseRejectedResult).reason.message, 'stale revision');
    assert.match(String((results[3] as PromiseRejectedResult).reason), /promise/);
    assert.deepEqual(runs, { a: 2, c: 2 }, 'the promise, not the refusal, made the group run again');
    assert.deepEqual(s.names(), ['a', 'c']);
    const again = { a: 0 };
    const second = await Promise.allSettled([
      s.writer.writeGrouped(() => (again.a++, s.add('a2'))),
      s.writer.writeGrouped(() => {
        throw new Error('not found');
      }),
    ]);
    assert.deepEqual(second.map((r) => r.status), ['fulfilled', 'rejected']);
    assert.equal(again.a, 1, 'a refusal alone costs no second run');
  });

  test('a failing COMMIT rejects every member and saves nothing; the next group works', async () => {
    const s = scratch();
    const hooks: string[] = [];
    const results = await Promise.allSettled([
      s.writer.writeGrouped(() => {
        s.add('a');
        s.writer.onCommit(() => hooks.push('a'));
      }),
      // A deferred foreign key is checked only at COMMIT (a savepoint release does not check it).
      s.writer.writeGrouped(() => s.db.prepare('INSERT INTO children (parent) VALUES (42)').run()),
      s.writer.writeGrouped(() => s.add('c')),
    ]);
    assert.deepEqual(results.map((r) => r.status), ['rejected', 'rejected', 'rejected']);
    for (const r of results) assert.equal((r as PromiseRejectedResult).reason.code, 'SQLITE_CONSTRAINT_FOREIGNKEY');
    assert.deepEqual(s.names(), []);
    assert.deepEqual(hooks, []);
    assert.equal(s.db.inTransaction, false);
    assert.equal(await s.writer.writeGrouped(() => s.add('d').changes), 1);
    assert.deepEqual(s.names(), ['d']);
  });

  test('a BEGIN that cannot get the write lock rejects every member with SQLITE_BUSY', async () => {
    const s = scratch();
    s.db.pragma('busy_timeout = 0');
    const other = openSqlite(s.file);
    other.exec('BEGIN IMMEDIATE');
    const results = await Promise.allSettled([s.writer.writeGrouped(() => s.add('a')), s.writer.writeGrouped(() => s.add('b'))]);
    assert.deepEqual(results.map((r) => r.status === 'rejected' && r.reason.code), ['SQLITE_BUSY', 'SQLITE_BUSY']);
    other.exec('ROLLBACK');
    await s.writer.writeGrouped(() => s.add('c'));
    assert.deepEqual(s.names(), ['c']);
  });

  test('when SQLite ends the transaction inside a member, the members that ran are rejected and the rest run in the next group', async () => {
    const s = scratch();
    const results = await Promise.allSettled([
      s.writer.writeGrouped(() => s.add('a')),
      // Stands in for an error after which SQLite has rolled the whole transaction back (e.g. SQLITE_FULL).
      s.writer.writeGrouped(() => {
        s.add('b');
        s.db.exec('ROLLBACK');
      }),
      s.writer.writeGrouped(() => s.add('c')),
    ]);
    assert.deepEqual(results.map((r) => r.status), ['rejected', 'rejected', 'fulfilled']);
    assert.deepEqual(s.names(), ['c']);
  });

  test(`a group holds at most ${MAX_GROUP} writes; the rest commit in the next one`, async () => {
    const s = scratch();
    const other = openSqlite(s.file);
    const visible: number[] = [];
    await Promise.all(
      Array.from({ length: MAX_GROUP + 2 }, (_, i) =>
        s.writer.writeGrouped(() => {
          s.add(`n${i}`);
          visible.push(other.prepare('SELECT count(*) FROM items').pluck().get() as number);
        }),
      ),
    );
    assert.deepEqual([...new Set(visible)], [0, MAX_GROUP]);
    assert.equal(s.names().length, MAX_GROUP + 2);
  });

  test('writeGrouped inside a transaction is refused (write() joins instead)', () => {
    const s = scratch();
    assert.throws(() => s.writer.write(() => s.writer.writeGrouped(() => 1)), /inside a transaction/);
  });
});

const HOOK = 'https://hooks.example.com/reclib';
const body = (title: string) => ({ type: 'memo', title, transcript: `${title} transcript zqwertyish` });

function create(h: Harness, token: string, key: string, title: string) {
  return h.req('POST', '/api/v2/recordings', { token, headers: { 'idempotency-key': key }, body: body(title) });
}

const count = (h: Harness, sql: string, ...args: unknown[]) => h.services.core.db.prepare(sql).pluck().get(...args) as number;

/**
 * A CommitSync played by the test: flush() waits until the test calls done(), flushNow() counts.
 * What it sees of the WAL (the rows another connection reads) is recorded when each flush starts.
 */
function fakeSync(s: ReturnType<typeof scratch>) {
  const reader = openSqlite(s.file);
  const seen = () => reader.prepare<[], { name: string }>('SELECT name FROM items ORDER BY rowid').all().map((r) => r.name);
  const flushes: Array<{ rows: string[]; done: (error?: unknown) => void }> = [];
  let now = 0;
  const sync = {
    flush: (done: (error?: unknown) => void) => void flushes.push({ rows: seen(), done }),
    flushNow: () => void now++,
  };
  return { sync, flushes, flushedNow: () => now, seen };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('Writer.syncCommitsWith (the WAL flushed off the thread, src/db/wal-sync.ts)', () => {
  test('a group is answered, and its hooks run, only once the fsync that began after its commit returned; the next group commits meanwhile and waits for the next fsync', async () => {
    const s = scratch();
    const f = fakeSync(s);
    s.writer.syncCommitsWith(f.sync);
    const events: string[] = [];
    s.writer.afterEachCommit(() => events.push('announced'));
    const member = (name: string) =>
      s.writer
        .writeGrouped(() => {
          s.add(name);
          s.writer.onCommit(() => events.push(`hook ${name}`));
          return name;
        })
        .then((v) => events.push(`answered ${v}`));
    const a = [member('a1'), member('a2')];
    await turn();
    assert.equal(f.flushes.length, 1, 'one fsync, begun after the first group committed');
    assert.deepEqual(f.flushes[0]!.rows, ['a1', 'a2'], 'it covers the group');
    const b = member('b1');
    await turn();
    await turn();
    assert.deepEqual(s.names(), ['a1', 'a2', 'b1'], 'the second group committed while the first fsync was on its way');
    assert.equal(f.flushes.length, 1, 'one fsync at a time');
    assert.deepEqual(events, [], 'nobody answered, no hook run, no commit announced before an fsync returned');
    f.flushes[0]!.done();
    await Promise.all(a);
    assert.deepEqual(events, ['announced', 'hook a1', 'hook a2', 'answered a1', 'answered a2']);
    assert.equal(f.flushes.length, 2, 'the second group, committed after the first fsync began, gets one of its own');
    assert.deepEqual(f.flushes[1]!.rows, ['a1', 'a2', 'b1']);
    f.flushes[1]!.done();
    await b;
    assert.deepEqual(events.slice(5), ['announced', 'hook b1', 'answered b1']);
    assert.equal(f.flushedNow(), 0, 'no fsync on the thread');
  });

  test('an fsync that fails refuses the members it was to cover (503: their rows are written, an Idempotency-Key finds a create again); later fsyncs prove nothing until a TRUNCATE checkpoint has made every commit durable', async () => {
    const s = scratch();
    const f = fakeSync(s);
    s.writer.syncCommitsWith(f.sync);
    const walBytes = () => fs.statSync(`${s.file}-wal`).size;
    const failed = s.writer.writeGrouped(() => s.add('x'));
    await turn();
    // Committed while the failing fsync was on its way: its own fsync will succeed, which Linux
    // does after it reported a failed writeback once (the pages marked clean, not written).
    const behind = s.writer.writeGrouped(() => s.add('y'));
    await turn();
    await turn();
    f.flushes[0]!.done(walSyncError(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' })));
    await assert.rejects(failed, (e: AppError) => e.code === 'unavailable' && /I\/O error.*not known to be on the disk/.test(e.message));
    assert.ok(walBytes() > 0);
    f.flushes[1]!.done();
    await behind;
    assert.equal(walBytes(), 0, 'answered only after a TRUNCATE checkpoint put every commit in the database file');
    assert.deepEqual(s.names(), ['x', 'y']);
    // The next fsync that works is enough again.
    const next = s.writer.writeGrouped(() => s.add('z'));
    await turn();
    f.flushes[2]!.done();
    await next;
    assert.ok(walBytes() > 0, 'no checkpoint once writes are durable again');
  });

  test('after a failed fsync, while the checkpoint cannot finish (a reader of an older snapshot), writes are refused before they are made, grouped or not', async () => {
    const s = scratch();
    s.db.pragma('busy_timeout = 0');
    const f = fakeSync(s);
    s.writer.syncCommitsWith(f.sync);
    const failed = s.writer.writeGrouped(() => s.add('x'));
    await turn();
    const reader = openSqlite(s.file);
    reader.exec('BEGIN');
    reader.prepare('SELECT count(*) FROM items').get();
    f.flushes[0]!.done(walSyncError(Object.assign(new Error('EIO'), { code: 'EIO' })));
    await assert.rejects(failed, /not known to be on the disk/);
    await assert.rejects(
      s.writer.writeGrouped(() => s.add('refused')),
      (e: AppError) => e.code === 'unavailable' && /Nothing was saved/.test(e.message),
    );
    assert.throws(() => s.writer.write(() => s.add('refused too')), /Nothing was saved/);
    assert.deepEqual(s.names(), ['x']);
    assert.equal(f.flushes.length, 1, 'nothing committed, nothing to flush');
    reader.exec('COMMIT');
    s.writer.write(() => s.add('after'));
    assert.deepEqual(s.names(), ['x', 'after']);
    assert.equal(f.flushedNow(), 1);
    reader.close();
  });

  test('write() whose own fsync fails is refused as not known to be on the disk, and the next write recovers first', () => {
    const s = scratch();
    let fail = true;
    let checkpointed = 0;
    s.writer.syncCommitsWith({
      flush: () => assert.fail('no grouped write here'),
      flushNow: () => {
        if (fail) {
          fail = false;
          throw walSyncError(Object.assign(new Error('EIO'), { code: 'EIO' }));
        }
        checkpointed = fs.statSync(`${s.file}-wal`).size;
      },
    });
    assert.throws(() => s.writer.write(() => s.add('a')), (e: AppError) => e.code === 'unavailable' && /not known to be on the disk/.test(e.message));
    s.writer.write(() => s.add('b'));
    assert.deepEqual(s.names(), ['a', 'b']);
    // The WAL was started over before b: b's frames are all it holds.
    assert.ok(checkpointed > 0 && checkpointed < 3 * 4096 + 32, `WAL ${checkpointed} bytes at b's fsync`);
  });

  test('a group that commits nothing (every member refused by what it read) is answered only with the fsync of the commits before it', async () => {
    const s = scratch();
    const f = fakeSync(s);
    s.writer.syncCommitsWith(f.sync);
    const log: string[] = [];
    const del = s.writer.writeGrouped(() => s.add('deleted')).then(() => log.push('first answered'));
    await turn();
    const refused = s.writer
      .writeGrouped(() => {
        throw new Error('410: decided by reading the group before');
      })
      .catch((e: Error) => log.push(e.message));
    for (let i = 0; i < 3; i++) await turn();
    assert.deepEqual(log, [], 'not before the fsync of what it read');
    assert.equal(f.flushes.length, 1, 'and no fsync of its own');
    f.flushes[0]!.done();
    await Promise.all([del, refused]);
    assert.deepEqual(log, ['first answered', '410: decided by reading the group before']);
    // With nothing on its way, such a group is answered at once.
    let answered = false;
    const alone = s.writer
      .writeGrouped(() => {
        throw new Error('404');
      })
      .catch(() => (answered = true));
    await turn();
    await turn();
    assert.equal(answered, true);
    await alone;
    assert.equal(f.flushes.length, 1);
  });

  test('walSyncError: an fsync error is the error SQLite gives under FULL, a 503 with Retry-After', () => {
    const io = walSyncError(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
    assert.equal((io as { code?: string }).code, 'SQLITE_IOERR_FSYNC');
    assert.equal((walSyncError(Object.assign(new Error('no space'), { code: 'ENOSPC' })) as { code?: string }).code, 'SQLITE_FULL');
    const refused = new WriteHealth(() => {}).refused(io, { committed: true }) as AppError;
    assert.equal(refused.code, 'unavailable');
    assert.equal(refused.headers['Retry-After'], '30');
  });

  test('write() flushes before it returns; settleNow() flushes and answers every group still waiting (a closing writer)', async () => {
    const s = scratch();
    const f = fakeSync(s);
    s.writer.syncCommitsWith(f.sync);
    s.writer.write(() => s.add('sync'));
    assert.equal(f.flushedNow(), 1);
    let answered = false;
    const waiting = s.writer.writeGrouped(() => s.add('grouped')).then(() => (answered = true));
    await turn();
    assert.equal(f.flushes.length, 1);
    const later = s.writer.writeGrouped(() => s.add('later'));
    await turn();
    await turn();
    assert.equal(answered, false);
    // Both the group whose fsync is on its way and the one behind it: flushed now, answered once.
    s.writer.settleNow();
    assert.equal(f.flushedNow(), 2);
    await Promise.all([waiting, later]);
    assert.equal(answered, true);
    f.flushes[0]!.done(new Error('late: must not settle anyone again'));
    await turn();
    assert.equal(f.flushes.length, 1, 'nothing left to flush');
    s.writer.settleNow();
    assert.equal(f.flushedNow(), 2, 'nothing to settle: no fsync');
  });

  test('stopGroups(): a group queued before it never starts (a closing writer thread answers only what committed)', async () => {
    const s = scratch();
    const f = fakeSync(s);
    s.writer.syncCommitsWith(f.sync);
    let settled = false;
    void s.writer.writeGrouped(() => s.add('queued')).finally(() => (settled = true));
    s.writer.stopGroups();
    await turn();
    await turn();
    assert.deepEqual(s.names(), [], 'not committed');
    assert.equal(settled, false, 'and not answered: the thread ends with it');
    assert.equal(f.flushes.length, 0);
  });

  test('with a gate, a busy group waits in the event loop (holdAsync), never blocking it', async () => {
    const s = scratch();
    const f = fakeSync(s);
    s.writer.syncCommitsWith(f.sync);
    const holds: Array<[number, number]> = [];
    s.writer.holdGroupsWith({
      hold: () => assert.fail('a writer with a CommitSync must not block its loop, where its fsyncs end'),
      holdAsync: async (queued, lastGroup) => void holds.push([queued(), lastGroup]),
    });
    const first = Array.from({ length: GROUP_DELAY_AFTER }, (_, i) => s.writer.writeGrouped(() => s.add(`busy${i}`)));
    await turn();
    f.flushes[0]!.done();
    await Promise.all(first);
    // Answered just now: the next group expects them back.
    const next = s.writer.writeGrouped(() => s.add('next'));
    for (let i = 0; i < 4 && f.flushes.length < 2; i++) await turn();
    assert.deepEqual(holds, [[1, GROUP_DELAY_AFTER]]);
    f.flushes[1]!.done();
    await next;
  });
});

describe('grouped HTTP writes', () => {
  test('concurrent creates share one commit; one failing create leaves no row, event, delivery, FTS entry, term or idempotency key', async () => {
    const h = harness();
    const token = h.key();
    await h.services.webhooks.create(h.accountId, { url: HOOK, events: ['recording.created'] });
    // Fails after the row, its key, its events, its outbox rows, its FTS entry and its terms were written.
    let armed = true;
    h.services.recordings.onChange((_before, after) => {
      if (armed && after.title === 'boom') throw new Error('listener failed');
    });
    const [a, boom, c] = await Promise.all([create(h, token, 'k-a', 'alpha'), create(h, token, 'k-b', 'boom'), create(h, token, 'k-c', 'gamma')]);
    assert.deepEqual([a.status, boom.status, c.status], [201, 500, 201]);
    assert.equal(count(h, 'SELECT count(*) FROM recordings'), 2);
    assert.equal(count(h, "SELECT count(*) FROM recordings WHERE title = 'boom'"), 0);
    // created + transcript_ready for each committed create, with their deliveries; none for boom.
    assert.equal(count(h, 'SELECT count(*) FROM events'), 4);
    assert.equal(count(h, "SELECT count(*) FROM events WHERE type = 'recording.created'"), 2);
    assert.equal(count(h, 'SELECT count(*) FROM deliveries'), 2);
    assert.equal(count(h, "SELECT count(*) FROM recording_keys WHERE key = 'k-b'"), 0);
    assert.equal(count(h, "SELECT count(*) FROM recordings_fts WHERE recordings_fts MATCH 'boom'"), 0);
    assert.equal(count(h, "SELECT count(*) FROM recordings_fts WHERE recordings_fts MATCH 'zqwertyish'"), 2);
    assert.deepEqual(h.services.recordings.terms.expansions('boo', 5), []);
    armed = false;

    // The key was not kept: the same request later creates (201), it is not a replay.
    const retry = await create(h, token, 'k-b', 'boom2');
    assert.equal(retry.status, 201);
    // The failed create's words were not remembered as stored: a later text with them stores them.
    const later = await h.req('POST', '/api/v2/recordings', { token, headers: { 'idempotency-key': 'k-d' }, body: { type: 'clip', title: 'boom' } });
    assert.equal(later.status, 201);
    assert.deepEqual(h.services.recordings.terms.expansions('boo', 5), ['boom', 'boom2']);
    const search = await h.req('GET', '/api/v2/recordings?q=boo', { token });
    assert.deepEqual(search.json.recordings.map((r: { title: string }) => r.title).sort(), ['boom', 'boom2']);
  });

  test('the same Idempotency-Key twice in one group: the second is a replay of the first', async () => {
    const h = harness();
    const token = h.key();
    const [first, second] = await Promise.all([create(h, token, 'same', 'one'), create(h, token, 'same', 'one')]);
    assert.equal(first.status, 201);
    assert.equal(second.status, 200);
    assert.equal(second.headers.get('idempotent-replayed'), 'true');
    assert.equal(second.json.recording.id, first.json.recording.id);
    assert.equal(count(h, 'SELECT count(*) FROM recordings'), 1);
  });

  test('grouped PATCH and DELETE of different recordings commit together with their events; a stale one is 412 alone', async () => {
    const h = harness();
    const token = h.key();
    const ids: string[] = [];
    for (const k of ['1', '2', '3']) ids.push((await create(h, token, k, `t${k}`)).json.recording.id);
    const eventsBefore = count(h, 'SELECT count(*) FROM events');
    const [patched, stale, deleted] = await Promise.all([
      h.req('PATCH', `/api/v2/recordings/${ids[0]}`, { token, headers: { 'if-match': '"1"' }, body: { title: 'edited' } }),
      h.req('PATCH', `/api/v2/recordings/${ids[1]}`, { token, headers: { 'if-match': '"7"' }, body: { title: 'never' } }),
      h.req('DELETE', `/api/v2/recordings/${ids[2]}`, { token, headers: { 'if-match': '"1"' } }),
    ]);
    assert.deepEqual([patched.status, stale.status, deleted.status], [200, 412, 204]);
    assert.equal(patched.json.recording.revision, 2);
    assert.equal(count(h, 'SELECT count(*) FROM events') - eventsBefore, 2);
    assert.equal(count(h, "SELECT count(*) FROM recordings WHERE title = 'never'"), 0);
  });
});
