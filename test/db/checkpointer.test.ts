// The WAL checkpointer (src/db/checkpointer.ts): `serve` copies the WAL back into the database file
// from a worker thread, so checkpoints and their fsyncs stop blocking requests; the server
// connection's own autocheckpoint stays as the backstop.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { testConfig } from '../../src/config';
import { framesSince, passDue, TruncationPlan } from '../../src/db/checkpoint-policy';
import { BACKSTOP_BYTES, Checkpointer, type CheckpointReport } from '../../src/db/checkpointer';
import { openDatabase, WAL_AUTOCHECKPOINT_BYTES, WAL_SIZE_LIMIT, walPages } from '../../src/db/open';
import { PAGE_SIZE } from '../../src/db/migrate';
import { walOfOneFrame } from '../../src/db/page-scrub';
import { openRuntime } from '../../src/runtime';
import { startServer } from '../../src/server';
import { ROOT, startServe } from '../helpers/bundle';

const tmpDb = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-ckpt-')), 'reclib.db');

/** Resolves with the first report that satisfies `ok`, or rejects after `ms`. */
const report = (c: Checkpointer, ok: (r: CheckpointReport) => boolean, ms = 5_000) =>
  new Promise<CheckpointReport>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no checkpoint report in time')), ms);
    c.onCheckpoint((r) => {
      if (!ok(r)) return;
      clearTimeout(timer);
      resolve(r);
    });
  });

describe('WAL checkpoints run in a worker thread', () => {
  it('committed frames reach the database file without the writer checkpointing them', async () => {
    const file = tmpDb();
    const db = openDatabase(file);
    assert.equal(db.pragma('wal_autocheckpoint', { simple: true }), walPages(db, WAL_AUTOCHECKPOINT_BYTES), 'the backstop stays');
    const insert = db.prepare('INSERT INTO accounts (id, name, app_integration, created_at) VALUES (?, ?, ?, 1)');
    for (let i = 0; i < 50; i++) insert.run(`acc_${i}`, `n${i}`, `int_${i}`); // 50 commits: far below the backstop
    const sizeBefore = fs.statSync(file).size;
    const checkpointer = new Checkpointer(file, db, 10);
    const done = report(checkpointer, (r) => r.log > 0 && r.checkpointed === r.log);
    checkpointer.start();
    assert.equal(db.pragma('wal_autocheckpoint', { simple: true }), walPages(db, BACKSTOP_BYTES), 'raised while the worker runs');
    assert.equal(db.pragma('journal_size_limit', { simple: true }), -1, 'the worker, not the writer, cuts the WAL file back');
    const r = await done;
    assert.ok(r.log >= 50, `the WAL held every commit (${r.log} frames)`);
    assert.ok(fs.statSync(file).size > sizeBefore, 'the database file grew');
    // A new commit is picked up by a later pass.
    const more = report(checkpointer, (x) => x.checkpointed > r.checkpointed || x.log < r.log);
    insert.run('acc_late', 'late', 'int_late');
    await more;
    await checkpointer.stop();
    assert.equal(db.pragma('wal_autocheckpoint', { simple: true }), walPages(db, WAL_AUTOCHECKPOINT_BYTES), 'back to the usual threshold');
    assert.equal(db.pragma('journal_size_limit', { simple: true }), WAL_SIZE_LIMIT, 'and the usual size limit');
    db.close();
  });

  it('a pass is due everyMs after the last, or sooner once passFrames frames were written since', () => {
    assert.equal(passDue(1_099, 1_000, 100, 10, 512), false);
    assert.equal(passDue(1_100, 1_000, 100, 10, 512), true, 'the interval');
    assert.equal(passDue(1_010, 1_000, 100, 512, 512), true, 'enough frames');
    assert.equal(passDue(1_010, 1_000, 100, undefined, 512), false, 'no WAL index to read: the interval only');
    const at = (frames: number, salt1 = 7, salt2 = 99) => ({ frames, salt1, salt2 });
    assert.equal(framesSince(at(100), at(700)), 600);
    assert.equal(framesSince(at(900), at(40)), 40, 'the WAL started over');
    assert.equal(framesSince(at(300), at(812, 8, 12345)), 812, 'started over and grew past the old count: the salts tell');
  });

  it('under a burst of writes a pass comes as soon as passFrames frames were written, long before the interval', async () => {
    const file = tmpDb();
    const db = openDatabase(file);
    const checkpointer = new Checkpointer(file, db, 60_000, 60_000, 60_000, 64);
    const early = report(checkpointer, (r) => r.checkpointed > 0 && !r.truncated, 3_000);
    checkpointer.start();
    const insert = db.prepare('INSERT INTO accounts (id, name, app_integration, created_at) VALUES (?, ?, ?, 1)');
    for (let i = 0; i < 200; i++) insert.run(`acc_${i}`, `n${i}`, `int_${i}`);
    const r = await early; // rejects after 3 s: only the frame count can have started it
    assert.ok(r.checkpointed >= 64, `copied ${r.checkpointed} frames`);
    await checkpointer.stop();
    db.close();
  });

  it('an erasure truncates once due at a quiet pass, or at its deadline; a failed one backs off', () => {
    const plan = new TruncationPlan({ delayMs: 1_000, maxDelayMs: 10_000, maxBackoffMs: 8_000, sizeLimit: 100 }, 0);
    const small = () => 0;
    assert.equal(plan.next(999, true, small), null, 'the start-up erasure is not due yet');
    assert.equal(plan.next(1_000, true, small), 'erase', 'due, at a quiet pass');
    plan.done('erase', true, 1_000);
    assert.equal(plan.next(1_100, true, small), null, 'nothing left to erase');
    plan.eraseSoon(2_000);
    plan.eraseSoon(2_500); // a series of deletes shares one truncation
    assert.equal(plan.next(3_000, false, small), null, 'due, but a commit came since the last pass: wait');
    assert.equal(plan.next(11_999, false, small), null);
    assert.equal(plan.next(12_000, false, small), 'erase', 'the deadline, writes or not');
    plan.done('erase', false, 12_000); // a reader held the WAL
    assert.equal(plan.next(13_999, true, small), null, 'retried after the backoff (2 s)');
    assert.equal(plan.next(14_000, false, small), 'erase', 'and then whether or not the writers are quiet');
    plan.done('erase', false, 14_000);
    assert.equal(plan.next(17_999, false, small), null, 'the backoff doubles (4 s)');
    assert.equal(plan.next(18_000, false, small), 'erase');
  });

  it('a WAL file past the limit is shrunk at a quiet pass only, and a failed shrink backs off', () => {
    const plan = new TruncationPlan({ delayMs: 1_000, maxDelayMs: 10_000, maxBackoffMs: 4_000, sizeLimit: 100 }, 0);
    plan.done('erase', true, 0); // the start-up erasure out of the way
    let asked = 0;
    const large = () => {
      asked++;
      return 101;
    };
    assert.equal(plan.next(100, false, large), null, 'never while writes keep coming');
    assert.equal(asked, 0, 'the file size is not even read then');
    assert.equal(plan.next(200, true, () => 100), null, 'within the limit');
    assert.equal(plan.next(300, true, large), 'shrink');
    plan.done('shrink', false, 300); // a reader (Litestream) held the WAL: each try holds writers up
    assert.equal(plan.next(1_299, true, large), null, 'not at every quiet pass');
    assert.equal(plan.next(1_300, true, large), 'shrink');
    plan.done('shrink', false, 1_300);
    assert.equal(plan.next(3_299, true, large), null, 'the backoff doubles');
    assert.equal(plan.next(3_300, true, large), 'shrink');
    plan.done('shrink', true, 3_300);
    plan.eraseSoon(4_000);
    assert.equal(plan.next(5_000, true, large), 'erase', 'an erasure comes first');
  });

  it('the worker cuts a WAL file grown past the limit back to one frame once the writes pause', async () => {
    const file = tmpDb();
    const db = openDatabase(file);
    const checkpointer = new Checkpointer(file, db, 100, 60_000); // no start-up erasure within the test
    checkpointer.start();
    const wal = `${file}-wal`;
    // One transaction larger than the limit, then small ones: the writer starts the WAL over at its
    // beginning and no longer cuts the file back.
    db.exec('CREATE TABLE filler (b BLOB)');
    const insert = db.prepare('INSERT INTO filler (b) VALUES (randomblob(65536))');
    db.transaction(() => {
      for (let i = 0; i * 65536 < WAL_SIZE_LIMIT * 1.5; i++) insert.run();
    })();
    // The truncation waits for the first pass's copy of ~12 MB, its fsyncs and a quiet spell after
    // the delete: on a loaded CI machine (iowait) that took more than the 5 s the other waits allow.
    const truncated = report(checkpointer, (r) => r.truncated === true, 30_000);
    await report(checkpointer, (r) => r.log > 0 && r.checkpointed === r.log, 30_000);
    // A commit after the WAL was copied whole starts it over from its beginning, where a connection
    // with journal_size_limit would cut the file back.
    db.exec('DELETE FROM filler');
    assert.ok(fs.statSync(wal).size > WAL_SIZE_LIMIT, 'the writer left the WAL file as it was');
    await truncated;
    assert.ok(fs.statSync(wal).size <= walOfOneFrame(PAGE_SIZE), `the worker cut it back once quiet (${fs.statSync(wal).size} bytes)`);
    await checkpointer.stop();
    db.close();
  });

  it('stop() ends the worker: no report after it, and stopping twice is harmless', async () => {
    const file = tmpDb();
    const db = openDatabase(file);
    const checkpointer = new Checkpointer(file, db, 5);
    const seen: CheckpointReport[] = [];
    checkpointer.onCheckpoint((r) => seen.push(r));
    checkpointer.start();
    await checkpointer.stop();
    await checkpointer.stop();
    const count = seen.length;
    db.prepare("INSERT INTO accounts (id, name, app_integration, created_at) VALUES ('a', 'a', 'int_a', 1)").run();
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(seen.length, count);
    db.close();
  });

  it('a worker that fails gives the server its usual autocheckpoint back', async () => {
    const db = openDatabase(tmpDb());
    const checkpointer = new Checkpointer(path.join(os.tmpdir(), 'no-such-dir-reclib', 'x', 'missing.db'), db, 5);
    const logged: string[] = [];
    checkpointer.logTrouble = (line) => logged.push(line);
    checkpointer.start();
    assert.equal(db.pragma('wal_autocheckpoint', { simple: true }), walPages(db, BACKSTOP_BYTES));
    for (let i = 0; i < 200 && db.pragma('wal_autocheckpoint', { simple: true }) !== walPages(db, WAL_AUTOCHECKPOINT_BYTES); i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(db.pragma('wal_autocheckpoint', { simple: true }), walPages(db, WAL_AUTOCHECKPOINT_BYTES));
    // Said once, with the reason: nothing else would show that the server lost its checkpointer.
    assert.equal(logged.length, 1, logged.join('\n'));
    assert.match(logged[0]!, /^reclib: the checkpointer thread failed \(TypeError: Cannot open database because the directory does not exist\); checkpoints now run inside writes/);
    db.close();
  });

  it('a worker whose checkpoints keep failing ends, the usual autocheckpoint comes back, and stop() still returns', async () => {
    const db = openDatabase(tmpDb());
    const garbage = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-ckpt-')), 'not-a-db');
    fs.writeFileSync(garbage, Buffer.alloc(8192, 0x5a)); // opens, but every checkpoint fails (not a database)
    const checkpointer = new Checkpointer(garbage, db, 2);
    const logged: string[] = [];
    checkpointer.logTrouble = (line) => logged.push(line);
    checkpointer.start();
    assert.equal(db.pragma('wal_autocheckpoint', { simple: true }), walPages(db, BACKSTOP_BYTES));
    for (let i = 0; i < 300 && db.pragma('wal_autocheckpoint', { simple: true }) !== walPages(db, WAL_AUTOCHECKPOINT_BYTES); i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(db.pragma('wal_autocheckpoint', { simple: true }), walPages(db, WAL_AUTOCHECKPOINT_BYTES));
    const started = Date.now();
    await checkpointer.stop();
    assert.ok(Date.now() - started < 1_000, 'stop() does not wait for a worker that already ended');
    assert.deepEqual(logged.map((l) => /^reclib: the checkpointer thread (ended \(exit code \d+\)|failed)/.test(l)), [true]);
    db.close();
  });

  it('serve runs one for a file database (in the writer thread), none for :memory:; a delete through the API empties the WAL soon after', async () => {
    assert.equal(openRuntime(testConfig({ db: ':memory:' })).workers.some((w) => w instanceof Checkpointer), false);
    const file = tmpDb();
    const server = await startServer(testConfig({ db: file, port: 0 }), () => {});
    try {
      assert.ok(server.writerThread, 'a file database has a writer thread');
      assert.ok((await server.writerThread.ready).includes('Checkpointer'));
      const { auth } = server.services;
      const key = auth.createKey(auth.createAccount('someone').id, { name: 'k', permissions: ['recordings:create', 'recordings:delete'] }).secret;
      const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
      const created = await fetch(`${server.url}/api/v2/recordings`, { method: 'POST', headers: { ...headers, 'idempotency-key': 'k1' }, body: JSON.stringify({ type: 'clip', transcript: 'words to erase' }) });
      assert.equal(created.status, 201);
      const { recording } = (await created.json()) as { recording: { id: string } };
      const deleted = await fetch(`${server.url}/api/v2/recordings/${recording.id}`, { method: 'DELETE', headers: { authorization: headers.authorization, 'if-match': '"1"' } });
      assert.ok(deleted.ok, `delete answered ${deleted.status}`);
      const wal = `${file}-wal`;
      const walSize = () => (fs.existsSync(wal) ? fs.statSync(wal).size : -1);
      for (let i = 0; i < 200 && walSize() > walOfOneFrame(PAGE_SIZE); i++) await new Promise((r) => setTimeout(r, 25));
      assert.ok(walSize() <= walOfOneFrame(PAGE_SIZE), 'the checkpointer cut the WAL back after the delete');
      assert.ok(!fs.readFileSync(wal).includes('words to erase'), 'and it holds no deleted text');
    } finally {
      await server.close();
    }
  });

  it('the bundle starts its worker from dist/checkpointer-worker.mjs: the WAL is truncated soon after start', async () => {
    const file = tmpDb();
    const serve = await startServe(['--db', file]);
    try {
      assert.ok(fs.existsSync(path.join(ROOT, 'dist/checkpointer-worker.mjs')), 'built beside the bundle');
      // Start-up wrote the schema to the WAL. While the server holds the file open, only the
      // worker's start-up truncation (ERASE_DELAY_MS after it starts) empties it.
      const wal = `${file}-wal`;
      const walSize = () => (fs.existsSync(wal) ? fs.statSync(wal).size : -1);
      for (let i = 0; i < 100 && walSize() > walOfOneFrame(PAGE_SIZE); i++) await new Promise((r) => setTimeout(r, 50));
      assert.ok(walSize() <= walOfOneFrame(PAGE_SIZE), 'the worker cut the WAL back');
    } finally {
      assert.equal(await serve.stop(), 0);
    }
  });
});
