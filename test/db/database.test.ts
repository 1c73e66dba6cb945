// The database: schema.sql applied and versioned with user_version (reopening is a no-op),
// the pragmas, BEGIN IMMEDIATE writes (why: a deferred read-then-write fails at once when another
// connection wrote meanwhile), and no plaintext secret in the database file.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import { buildPlan, NAPI_PACKAGE, openSqlite, sqliteBuild, sqlitePackage, usesNapiBuild } from '../../src/db/sqlite';
import { testConfig } from '../../src/config';
import { PAGE_SIZE, SCHEMA_VERSION } from '../../src/db/migrate';
import { BUSY_TIMEOUT_MS, fileIdentity, openDatabase } from '../../src/db/open';
import { Writer } from '../../src/db/writer';
import { createApp } from '../../src/http/app';
import { openRuntime } from '../../src/runtime';

const tmpDb = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-db-')), 'reclib.db');
const insertAccount = (db: Database.Database, id: string) =>
  db.prepare('INSERT INTO accounts (id, name, app_integration, created_at) VALUES (?, ?, ?, ?)').run(id, id, `int_${id}`, 1);

describe('the SQLite driver', () => {
  it('is better-sqlite3 13 (Node-API) from Node 22 on, 12 before (12 aborts on Node 24.19 and later)', () => {
    for (const v of ['20.18.0', '20.20.2', '21.7.3']) assert.equal(usesNapiBuild(v), false, v);
    for (const v of ['22.0.0', '22.23.3', '24.18.1', '24.21.0', '26.1.0']) assert.equal(usesNapiBuild(v), true, v);
  });

  it('the main thread decides; a worker thread takes the build it is told, and refuses one it cannot run', () => {
    assert.equal(buildPlan('20.20.2', false, 'napi'), 'classic', 'the main thread ignores the variable');
    assert.equal(buildPlan('24.21.0', false, 'classic'), 'napi-or-classic');
    assert.equal(buildPlan('24.21.0', true, undefined), 'napi-or-classic', 'a thread not told decides as the main thread');
    assert.equal(buildPlan('20.20.2', true, undefined), 'classic');
    assert.equal(buildPlan('24.21.0', true, 'classic'), 'classic', 'told classic (the main thread fell back): no second SQLite');
    assert.equal(buildPlan('24.21.0', true, 'napi'), 'napi', 'told napi: that or fail, no fallback');
    assert.throws(() => buildPlan('20.20.2', true, 'napi'), /names no better-sqlite3 build/, '13.x crashes on Node 20');
    assert.throws(() => buildPlan('24.21.0', true, 'nappi'), /names no better-sqlite3 build/);
  });

  it("opens connections with this Node's build; 13.x is installed with a prebuilt addon for this platform", () => {
    const require = createRequire(import.meta.url);
    const napi = usesNapiBuild(process.versions.node);
    const db = openSqlite(':memory:');
    assert.ok(db instanceof (require(sqlitePackage(napi ? 'napi' : 'classic')) as typeof Database), napi ? '13.x' : '12.x');
    assert.equal(db.prepare("SELECT count(*) FROM pragma_compile_options WHERE compile_options = 'ENABLE_FTS5'").pluck().get(), 1);
    db.close();
    const dir = path.dirname(require.resolve(`${NAPI_PACKAGE}/package.json`));
    assert.match((JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string }).version, /^13\./);
    assert.ok(fs.existsSync(path.join(dir, 'prebuilds', `${process.platform}-${process.arch}.node`)), 'the addon the Docker image copies');
  });

  it('every connection is opened through openSqlite(): nothing else imports better-sqlite3 but for its types', () => {
    const root = path.resolve(import.meta.dirname, '../..');
    const value = [
      /^\s*(?:import|export)\s+(?!type\s)[^;]*?from\s*['"]better-sqlite3(?:-napi)?['"]/m, // import X / export … from (not import type)
      /\b(?:import|require)\s*\(\s*['"]better-sqlite3(?:-napi)?['"]/, // import('…'), require('…')
      /\)\s*\(\s*['"]better-sqlite3(?:-napi)?['"]/, // createRequire(…)('…')
    ];
    const offenders: string[] = [];
    for (const dir of ['src', 'bin', 'test', 'bench', 'scripts']) {
      for (const rel of fs.readdirSync(path.join(root, dir), { recursive: true }) as string[]) {
        const file = path.join(dir, rel);
        if (!/\.[cm]?[jt]sx?$/.test(file) || file.split(path.sep).includes('.cache') || file === path.join('src', 'db', 'sqlite.ts')) continue;
        const text = fs.readFileSync(path.join(root, file), 'utf8');
        if (value.some((re) => re.test(text))) offenders.push(file);
      }
    }
    assert.deepEqual(offenders, []);
  });
});

describe('schema and pragmas', () => {
  it('a new database gets schema.sql and user_version; reopening is a no-op that keeps the data', () => {
    const file = tmpDb();
    const db = openDatabase(file);
    assert.equal(db.pragma('user_version', { simple: true }), SCHEMA_VERSION);
    assert.equal(db.pragma('page_size', { simple: true }), PAGE_SIZE, 'a new file has 16 KB pages');
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[];
    for (const t of ['accounts', 'api_keys', 'sessions', 'events']) assert.ok(tables.includes(t), t);
    insertAccount(db, 'acc_keep');
    const schemaBefore = db.prepare('SELECT sql FROM sqlite_master ORDER BY name').pluck().all();
    db.close();

    // Reopen while another connection holds the write lock: a no-op migration needs no lock.
    const holder = openSqlite(file);
    holder.prepare('BEGIN IMMEDIATE').run();
    const started = Date.now();
    const again = openDatabase(file);
    assert.ok(Date.now() - started < 1_000, 'reopening did not wait for the write lock');
    holder.prepare('ROLLBACK').run();
    holder.close();
    assert.equal(again.pragma('user_version', { simple: true }), SCHEMA_VERSION);
    assert.deepEqual(again.prepare('SELECT sql FROM sqlite_master ORDER BY name').pluck().all(), schemaBefore);
    assert.equal(again.prepare("SELECT count(*) FROM accounts WHERE id = 'acc_keep'").pluck().get(), 1);
    again.close();
  });

  it('a version 1 database is migrated: text indexed under v1 stays searchable, editable and deletable, the index stays exact', () => {
    const file = tmpDb();
    // A file as the previous release left it: its schema.sql (kept as a fixture), rows indexed by
    // its per-row triggers, their words in the prefix vocabulary.
    const raw = openSqlite(file);
    raw.pragma('journal_mode = WAL');
    raw.exec(fs.readFileSync(path.join(import.meta.dirname, '..', 'fixtures', 'schema-v1.sql'), 'utf8'));
    raw.pragma('user_version = 1');
    insertAccount(raw, 'acc_v1');
    const put = raw.prepare(
      `INSERT INTO recordings (seq, id, account_id, integration_id, type, title, transcript, recorded_at, created_at, updated_at, revision, status, body_hash)
       VALUES (?, ?, 'acc_v1', 'int_acc_v1', 'clip', '', ?, 1, 1, 1, 1, 'ready', 'h')`,
    );
    put.run(1, 'rec_keep', 'zebrafish in the old tank');
    put.run(2, 'rec_edit', 'zebrafish before the edit');
    put.run(3, 'rec_gone', 'zebrafish soon deleted');
    for (const term of ['zebrafish', 'in', 'the', 'old', 'tank', 'before', 'edit', 'soon', 'deleted']) raw.prepare('INSERT INTO recording_terms (term) VALUES (?)').run(term);
    assert.equal(raw.prepare("SELECT count(*) FROM recordings_fts WHERE recordings_fts MATCH 'zebrafish'").pluck().get(), 3);
    raw.close();

    const services = openRuntime(testConfig({ db: file }));
    const { db } = services.core;
    assert.equal(db.pragma('user_version', { simple: true }), SCHEMA_VERSION);
    const triggers = db.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'recordings' ORDER BY name").pluck().all();
    assert.deepEqual(triggers, ['recordings_fts_note_delete', 'recordings_fts_note_insert', 'recordings_fts_note_update']);
    const config = Object.fromEntries((db.prepare('SELECT k, v FROM recordings_fts_config').all() as Array<{ k: string; v: number }>).map((r) => [r.k, r.v]));
    assert.equal(config.automerge, 8, "schema.sql's merge settings reach a migrated index");
    const principal = services.auth.authenticate(services.auth.createKey('acc_v1', { name: 'k', permissions: ['recordings:create', 'recordings:read', 'recordings:write', 'recordings:delete'] }).secret);
    const ids = (q: string) => services.recordings.list(principal, { q, limit: 10 }).rows.map((r) => r.id).sort();
    assert.deepEqual(ids('zebraf'), ['rec_edit', 'rec_gone', 'rec_keep']);
    services.recordings.update(principal, 'rec_edit', { transcript: 'after the edit' }, 1);
    services.recordings.remove(principal, 'rec_gone', 1);
    services.recordings.create(principal, { type: 'clip', transcript: 'a new zebrafish' }, 'k-new');
    assert.deepEqual(ids('zebrafish').length, 2);
    assert.deepEqual(ids('before'), []);
    assert.deepEqual(ids('deleted'), []);
    assert.deepEqual(ids('after'), ['rec_edit']);
    db.exec("INSERT INTO recordings_fts (recordings_fts, rank) VALUES ('integrity-check', 1)");
    db.close();
  });

  it('a database from a newer reclib is refused with a clear message', () => {
    const file = tmpDb();
    openDatabase(file).close();
    const raw = openSqlite(file);
    raw.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    raw.close();
    assert.throws(() => openDatabase(file), /newer than this reclib/);
  });

  it('pragmas: busy_timeout, WAL, foreign_keys on, synchronous FULL (NORMAL with durability normal), a 64 MB page cache', () => {
    const db = openDatabase(tmpDb());
    assert.equal(db.pragma('busy_timeout', { simple: true }), 5000);
    assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
    assert.equal(db.pragma('foreign_keys', { simple: true }), 1);
    assert.equal(db.pragma('synchronous', { simple: true }), 2, 'FULL by default');
    const normal = openDatabase(tmpDb(), { durability: 'normal' });
    assert.equal(normal.pragma('synchronous', { simple: true }), 1, 'NORMAL when asked');
    normal.close();
    assert.equal(db.pragma('cache_size', { simple: true }), -65_536);
    db.close();
  });
});

/** A second connection in a worker thread that inserts one account when told to. */
function otherConnection(file: string) {
  const flags = new Int32Array(new SharedArrayBuffer(8)); // [0]: go, [1]: done
  // The build openSqlite() uses on this Node (src/db/sqlite.ts); the classic one finds its own addon.
  const sqlite = createRequire(import.meta.url).resolve(sqlitePackage(sqliteBuild()));
  const worker = new Worker(
    `const { workerData } = require('node:worker_threads');
     const Database = require(${JSON.stringify(sqlite)});
     const db = new Database(workerData.file);
     db.pragma('busy_timeout = 5000');
     Atomics.wait(workerData.flags, 0, 0);
     db.prepare("INSERT INTO accounts (id, name, app_integration, created_at) VALUES ('acc_other', 'o', 'int_other', 1)").run();
     db.close();
     Atomics.store(workerData.flags, 1, 1);
     Atomics.notify(workerData.flags, 1);`,
    { eval: true, workerData: { file, flags } },
  );
  const exited = new Promise<number>((resolve, reject) => {
    worker.on('error', reject);
    worker.on('exit', resolve);
  });
  return {
    go: () => {
      Atomics.store(flags, 0, 1);
      Atomics.notify(flags, 0);
    },
    /** Blocks this thread until the other connection committed, or the timeout passed. */
    waitDone: (ms: number) => Atomics.wait(flags, 1, 0, ms) !== 'timed-out',
    exited,
  };
}

describe('the process keeps its lock on the file while it has a connection open', () => {
  /** What another process asking for the file alone (as reclib restore does) gets. */
  const fromElsewhere = (file: string) =>
    spawnSync(process.execPath, ['--import', 'tsx', 'test/fixtures/try-exclusive.ts', file], { cwd: path.resolve(import.meta.dirname, '../..'), encoding: 'utf8' }).stdout.trim();

  it("a second connection opened with openInProcess (the server's writer thread) leaves the first one's lock in place", () => {
    const file = tmpDb();
    const main = openDatabase(file);
    main.prepare('SELECT count(*) FROM accounts').get();
    assert.equal(fromElsewhere(file), 'busy', 'one connection holds the file');
    const writer = openDatabase(file, { openInProcess: fileIdentity(file) });
    writer.prepare('SELECT count(*) FROM accounts').get();
    assert.equal(fromElsewhere(file), 'busy', 'and still does with the second one open');
    // What openInProcess avoids: reading the header closes a descriptor of the file, which drops
    // every POSIX lock of the process on it, and SQLite never takes its shared lock again.
    const third = openDatabase(file);
    third.prepare('SELECT count(*) FROM accounts').get();
    assert.equal(fromElsewhere(file), 'exclusive');
    for (const db of [third, writer, main]) db.close();
  });

  it('openInProcess refuses a path that names another file now (renamed over, or gone), and creates nothing', () => {
    const file = tmpDb();
    const main = openDatabase(file);
    const opened = fileIdentity(file);
    const other = path.join(path.dirname(file), 'other.db');
    openDatabase(other).close();
    fs.renameSync(other, file);
    assert.throws(() => openDatabase(file, { openInProcess: opened }), (e: Error) => {
      assert.equal(e.message, `database file ${file} is another file now, not the one this process opened (moved, deleted or replaced while it ran); restart to open what is there`);
      return true;
    });
    fs.rmSync(file);
    assert.throws(() => openDatabase(file, { openInProcess: opened }), /is gone, not the one this process opened/);
    assert.equal(fs.existsSync(file), false, 'no new file made in its place');
    main.close();
  });
});

describe('every write is one BEGIN IMMEDIATE transaction', () => {
  it('a deferred transaction that reads, then writes after another connection wrote, fails with SQLITE_BUSY_SNAPSHOT', async () => {
    const file = tmpDb();
    const db = openDatabase(file);
    const other = otherConnection(file);
    const deferred = db.transaction(() => {
      db.prepare('SELECT count(*) FROM accounts').get();
      other.go();
      assert.ok(other.waitDone(5_000), 'the other connection could write meanwhile');
      insertAccount(db, 'acc_mine');
    });
    assert.throws(() => deferred(), (e: { code?: string }) => e.code === 'SQLITE_BUSY_SNAPSHOT');
    await other.exited;
    db.close();
  });

  it('Writer.write holds the write lock from the start, so the other connection waits and both writes land', async () => {
    const file = tmpDb();
    const db = openDatabase(file);
    const writer = new Writer(db);
    const other = otherConnection(file);
    writer.write(() => {
      db.prepare('SELECT count(*) FROM accounts').get();
      other.go();
      assert.equal(other.waitDone(300), false, 'the other connection must wait for our commit');
      insertAccount(db, 'acc_mine');
    });
    await other.exited;
    assert.deepEqual(db.prepare('SELECT id FROM accounts ORDER BY id').pluck().all(), ['acc_mine', 'acc_other']);
    db.close();
  });

  it('Writer.writeNow fails at once on another connection\'s write lock, then waits busy_timeout again', () => {
    const file = tmpDb();
    const db = openDatabase(file);
    const writer = new Writer(db);
    const other = openSqlite(file);
    other.exec('BEGIN IMMEDIATE');
    const t0 = performance.now();
    assert.throws(() => writer.writeNow(() => insertAccount(db, 'acc_now')), (e: { code?: string }) => e.code === 'SQLITE_BUSY');
    assert.ok(performance.now() - t0 < 1_000, 'no wait for the lock');
    assert.equal(db.pragma('busy_timeout', { simple: true }), BUSY_TIMEOUT_MS);
    other.exec('COMMIT');
    other.close();
    writer.writeNow(() => insertAccount(db, 'acc_now'));
    assert.deepEqual(db.prepare('SELECT id FROM accounts').pluck().all(), ['acc_now']);
    db.close();
  });

  it('nested writes join the outer transaction; onCommit hooks run after commit and not after a rollback', () => {
    const db = openDatabase(':memory:');
    const writer = new Writer(db);
    const log: string[] = [];
    writer.write(() => {
      insertAccount(db, 'acc_a');
      writer.onCommit(() => log.push(`hook sees ${db.prepare('SELECT count(*) FROM accounts').pluck().get()}`));
      writer.write(() => insertAccount(db, 'acc_b'));
      log.push('body done');
    });
    assert.deepEqual(log, ['body done', 'hook sees 2']);
    assert.throws(() =>
      writer.write(() => {
        insertAccount(db, 'acc_c');
        writer.onCommit(() => log.push('must not run'));
        writer.write(() => insertAccount(db, 'acc_a')); // duplicate: the whole write rolls back
      }),
    );
    assert.equal(db.prepare("SELECT count(*) FROM accounts WHERE id = 'acc_c'").pluck().get(), 0);
    assert.equal(log.length, 2);
    assert.equal(db.inTransaction, false);
  });
});

describe('the database file holds no plaintext secret', () => {
  it('key, token and session secrets and the password never reach the db or its WAL', async () => {
    const file = tmpDb();
    const services = openRuntime(testConfig({ db: file, masterSecretFile: `${file}.secret` }));
    const { app } = createApp(services);
    const password = 'PlainPassword-7d1f';
    const account = services.auth.createAccount('owner', password);
    const call = async (method: string, p: string, token: string | undefined, body?: unknown) => {
      const res = await app.request(`http://127.0.0.1:8080${p}`, {
        method,
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return (res.status === 204 ? {} : await res.json()) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- response shapes vary
    };
    const login = await call('POST', '/api/session', undefined, { account: account.id, password });
    const session = login.session.token as string;
    const secrets = [password, session, services.auth.createSession(account.id).token];
    for (let i = 0; i < 5; i++) secrets.push((await call('POST', '/api/v2/api-keys', session, { name: `k${i}`, permissions: ['events:read'] })).secret);
    secrets.push((await call('POST', '/api/v1/tokens', session, { name: 't', scopes: ['events:read'] })).secret);
    secrets.push(services.auth.createKey(account.id, { name: 'cli', permissions: ['events:read'] }).secret);
    await call('GET', '/api/v2/api-keys', secrets[3]); // a use: lastUsedAt written
    await call('DELETE', '/api/session', session);

    const bytes = Buffer.concat([file, `${file}-wal`].filter((f) => fs.existsSync(f)).map((f) => fs.readFileSync(f)));
    assert.ok(bytes.length > 0);
    for (const secret of secrets) {
      assert.match(secret, /.{16}/);
      const body = secret.replace(/^rl[ks]_/, '');
      assert.equal(bytes.indexOf(secret), -1, 'secret found in the database');
      assert.equal(bytes.indexOf(body.slice(0, 16)), -1, 'part of a secret found in the database');
      assert.equal(bytes.indexOf(Buffer.from(secret, 'utf16le')), -1);
    }
    services.core.db.close();
  });
});
