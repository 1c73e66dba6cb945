// docs/decisions.md §12 for the admin CLI: --version; commands other than accounts create, serve and
// restore refuse a --db that does not exist and create nothing; a file that is not a reclib
// database is refused untouched; errors name the file and say what is wrong; with --json errors
// are {"error":{"code","message"}} on stderr; exit 2 for usage, 1 otherwise; tables show dates;
// accounts set-password; sessions list and revoke (the running server refuses the session at once).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { openSqlite, sqlitePackage, usesNapiBuild } from '../../src/db/sqlite';
import pkg from '../../package.json' with { type: 'json' };
import { RECLIB_APPLICATION_ID, schemaText, SCHEMA_VERSION } from '../../src/db/migrate';
import { openDatabase } from '../../src/db/open';
import { BUNDLE, cleanEnv, cliJson, ensureBundle, ROOT, runCli, startServe } from '../helpers/bundle';
import { imageRuntimeCopy } from '../helpers/image';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-cli-admin-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = () => fs.mkdtempSync(path.join(root, `${++n}-`));
const errorOf = (stderr: string) => (JSON.parse(stderr) as { error: { code: string; message: string } }).error;

describe('reclib --version', () => {
  it('prints the package version (as {"version"} with --json)', async () => {
    const r = await runCli(['--version']);
    assert.deepEqual([r.code, r.stdout], [0, `${pkg.version}\n`]);
    assert.deepEqual(JSON.parse((await runCli(['--version', '--json'])).stdout), { version: pkg.version });
  });
});

describe('errors: exit codes and --json', () => {
  it('usage errors exit 2; with --json they are one {"error":{"code":"usage"}} object on stderr and nothing else', async () => {
    const r = await runCli(['accounts', 'list', '--bogus', '--json']);
    assert.equal(r.code, 2);
    assert.equal(r.stdout, '');
    assert.deepEqual(errorOf(r.stderr), { code: 'usage', message: "unknown option '--bogus'" });
    const missing = await runCli(['keys', 'create', '--account', 'acc_x', '--json']);
    assert.equal(missing.code, 2);
    assert.equal(errorOf(missing.stderr).code, 'usage');
    const config = await runCli(['accounts', 'list', '--db', path.join(fresh(), 'x.db'), '--durability', 'fast', '--json']);
    assert.equal(config.code, 2, 'a bad setting is a usage error too');
    assert.equal(errorOf(config.stderr).code, 'invalid_configuration');
  });

  it('other failures exit 1 with the error code of the cause', async () => {
    const db = path.join(fresh(), 'r.db');
    await cliJson(['accounts', 'create', '--db', db, '--name', 'me']);
    const r = await runCli(['devices', 'list', '--db', db, '--account', 'acc_nobody', '--json']);
    assert.equal(r.code, 1);
    assert.deepEqual(errorOf(r.stderr), { code: 'not_found', message: 'account acc_nobody not found' });
  });
});

describe('a --db that does not exist', () => {
  it('is refused by every admin command but accounts create: exit 1 naming the file, nothing created (not even the master secret)', async () => {
    const dir = fresh();
    const db = path.join(dir, 'typo', 'reclib.db');
    const commands = [
      ['accounts', 'list'],
      ['accounts', 'set-password', '--account', 'acc_x', '--password-stdin'],
      ['sessions', 'list', '--account', 'acc_x'],
      ['sessions', 'create', '--account', 'acc_x'],
      ['keys', 'list', '--account', 'acc_x'],
      ['devices', 'list', '--account', 'acc_x'],
      ['webhooks', 'list', '--account', 'acc_x'],
      ['export', '--account', 'acc_x', '--to', path.join(dir, 'out')],
      ['backup', '--to', path.join(dir, 'b.db')],
    ];
    for (const args of commands) {
      const r = await runCli([...args, '--db', db, '--json'], { input: 'a password\n' });
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
      assert.deepEqual(errorOf(r.stderr), { code: 'database_not_found', message: `database file ${db} does not exist; check --db (or RECLIB_DB)` });
    }
    assert.deepEqual(fs.readdirSync(dir), [], 'no folder, database, secret, backup or export');
    assert.equal((await runCli(['accounts', 'create', '--db', db, '--name', 'first', '--json'])).code, 0, 'accounts create starts a library');
  });
});

describe('a file that is not a reclib database is refused untouched', () => {
  const refuse = async (file: string, message: RegExp) => {
    const before = fs.readFileSync(file);
    for (const args of [['accounts', 'list'], ['accounts', 'create', '--name', 'x']]) {
      const r = await runCli([...args, '--db', file, '--json']);
      assert.equal(r.code, 1, r.stderr);
      const error = errorOf(r.stderr);
      assert.equal(error.code, 'not_a_reclib_database');
      assert.ok(error.message.startsWith(`database file ${file}: `), error.message);
      assert.match(error.message, message);
    }
    assert.ok(fs.readFileSync(file).equals(before), 'byte for byte as it was');
    assert.equal(fs.existsSync(`${file}.secret`), false);
    assert.equal(fs.existsSync(`${file}-wal`), false);
  };

  it("another application's SQLite database", async () => {
    const file = path.join(fresh(), 'notes.sqlite');
    const other = openSqlite(file);
    other.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('keep me')");
    other.close();
    await refuse(file, /tables reclib does not create \(notes\)/);
  });

  it("reclib's tables beside tables of its own, without reclib's marker", async () => {
    const file = path.join(fresh(), 'mixed.db');
    const raw = openSqlite(file);
    raw.exec(schemaText());
    raw.exec('CREATE TABLE my_extras (x)');
    raw.pragma(`user_version = ${SCHEMA_VERSION}`);
    raw.close();
    await refuse(file, /tables reclib does not create \(my_extras\)/);
  });

  it('a database marked by another application (application_id)', async () => {
    const file = path.join(fresh(), 'other.db');
    const other = openSqlite(file);
    other.pragma('application_id = 1234');
    other.close();
    await refuse(file, /application_id 1234/);
  });

  it('an empty file gets the schema and the reclib marker; a reclib database from before the marker is recognised by its tables and marked', () => {
    const dir = fresh();
    const empty = path.join(dir, 'empty.db');
    fs.writeFileSync(empty, '');
    const db = openDatabase(empty);
    assert.equal(db.pragma('application_id', { simple: true }), RECLIB_APPLICATION_ID);
    db.close();
    const older = path.join(dir, 'older.db');
    const raw = openSqlite(older);
    raw.exec(schemaText());
    raw.pragma(`user_version = ${SCHEMA_VERSION}`);
    raw.close();
    const opened = openDatabase(older);
    assert.equal(opened.pragma('application_id', { simple: true }), RECLIB_APPLICATION_ID);
    opened.close();
  });
});

describe('errors name the file and say what is wrong', () => {
  it('a parent that is a file', async () => {
    const dir = fresh();
    fs.writeFileSync(path.join(dir, 'data'), 'x');
    const db = path.join(dir, 'data', 'reclib.db');
    const r = await runCli(['accounts', 'create', '--db', db, '--name', 'me', '--json']);
    assert.equal(r.code, 1);
    assert.equal(errorOf(r.stderr).message, `database file ${db}: parent ${path.join(dir, 'data')} is a file, not a folder`);
  });

  it('a folder this user cannot write to', async () => {
    const dir = fresh();
    const locked = path.join(dir, 'locked');
    fs.mkdirSync(locked, { mode: 0o755 });
    const db = path.join(locked, 'reclib.db');
    // As root every folder is writable: run the CLI as nobody then.
    const asOther = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
    if (!('uid' in asOther)) fs.chmodSync(locked, 0o555);
    for (const d of [root, dir]) fs.chmodSync(d, 0o755); // reachable for that user
    ensureBundle();
    // That user may not reach the checkout (a clone in a 0700 folder): it runs a copy of what the
    // bundle loads (as the Docker image does), placed in the test's own folder.
    const bundle = 'uid' in asOther ? imageRuntimeCopy(path.join(dir, 'app')) : BUNDLE;
    const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [bundle, 'accounts', 'create', '--db', db, '--name', 'me'], { cwd: path.dirname(path.dirname(bundle)), env: cleanEnv(), ...asOther });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('close', (code) => resolve({ code, stderr }));
    });
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stderr, `reclib: database file ${db}: folder ${locked} is not writable\n`);
    assert.equal(fs.existsSync(db), false);
  });
});

describe('the bundle outside the checkout', () => {
  it('runs from dist/, schema.sql and better-sqlite3\'s addon alone, as the Docker image holds them', async () => {
    ensureBundle();
    const bundle = imageRuntimeCopy(path.join(fresh(), 'app'));
    const db = path.join(fresh(), 'r.db');
    const r = await runCli(['accounts', 'create', '--db', db, '--name', 'me', '--json'], { bundle, cwd: path.dirname(path.dirname(bundle)) });
    assert.equal(r.code, 0, r.stderr);
    assert.equal((JSON.parse(r.stdout) as { account: { name: string } }).account.name, 'me');
    // On Node 22 and later the copy must hold a loadable better-sqlite3 13, or the bundle falls back with a warning.
    assert.equal(r.stderr, '');
  });
});

describe('tables show dates', () => {
  it('accounts list, keys list and sessions list print ISO 8601 times, not epoch milliseconds', async () => {
    const db = path.join(fresh(), 'r.db');
    const acc = (await cliJson(['accounts', 'create', '--db', db, '--name', 'me'])).account.id as string;
    await cliJson(['keys', 'create', '--db', db, '--account', acc, '--name', 'k', '--permissions', 'events:read']);
    await cliJson(['sessions', 'create', '--db', db, '--account', acc]);
    for (const args of [['accounts', 'list'], ['keys', 'list', '--account', acc], ['sessions', 'list', '--account', acc]]) {
      const r = await runCli([...args, '--db', db]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z/, args.join(' '));
      assert.doesNotMatch(r.stdout, /\b\d{13}\b/, args.join(' '));
    }
  });
});

describe('accounts create refuses a short password before it makes anything', () => {
  it('exits 1 naming the rule, and leaves no database file or master secret behind', async () => {
    const db = path.join(fresh(), 'r.db');
    const short = await runCli(['accounts', 'create', '--db', db, '--name', 'me', '--password-stdin', '--json'], { input: 'short\n' });
    assert.equal(short.code, 1);
    assert.deepEqual(errorOf(short.stderr), { code: 'invalid_request', message: 'password must be at least 8 characters' });
    assert.deepEqual(fs.readdirSync(path.dirname(db)), []);
  });
});

describe('accounts set-password and sessions list / revoke', () => {
  it('set-password lets the account log in with the new password; a session revoked by the CLI is refused by the running server at once', async () => {
    const db = path.join(fresh(), 'r.db');
    const acc = (await cliJson(['accounts', 'create', '--db', db, '--name', 'me'])).account.id as string;
    const set = await cliJson(['accounts', 'set-password', '--db', db, '--account', acc, '--password-stdin'], { input: 'a brand new password\n' });
    assert.deepEqual(set, { account: { id: acc, passwordSet: true } });
    const short = await runCli(['accounts', 'set-password', '--db', db, '--account', acc, '--password-stdin', '--json'], { input: 'short\n' });
    assert.equal(short.code, 1);
    assert.equal(errorOf(short.stderr).code, 'invalid_request');

    const server = await startServe(['--db', db]);
    try {
      const login = await fetch(`${server.url}/api/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ account: acc, password: 'a brand new password' }) });
      assert.equal(login.status, 200);
      const token = (await cliJson(['sessions', 'create', '--db', db, '--account', acc])).session.token as string;
      const listed = (await cliJson(['sessions', 'list', '--db', db, '--account', acc])).sessions as Array<Record<string, unknown>>;
      assert.equal(listed.length, 2, 'the login session and the CLI one');
      for (const s of listed) assert.deepEqual(Object.keys(s), ['id', 'createdAt', 'expiresAt', 'endedAt']);
      assert.equal(JSON.stringify(listed).includes('rls_'), false, 'no tokens');
      const call = () => fetch(`${server.url}/api/v2/api-keys`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal((await call()).status, 200, 'the session works (and is now cached by the server)');
      const newest = listed[listed.length - 1]!;
      const revoked = await cliJson(['sessions', 'revoke', '--db', db, '--account', acc, String(newest.id)]);
      assert.equal(revoked.session.id, newest.id);
      assert.equal(typeof revoked.session.endedAt, 'number');
      assert.equal((await call()).status, 401, 'the next request with it');
      const unknown = await runCli(['sessions', 'revoke', '--db', db, '--account', acc, 'ses_nope', '--json']);
      assert.equal(unknown.code, 1);
      assert.equal(errorOf(unknown.stderr).code, 'not_found');
    } finally {
      await server.stop('SIGKILL');
    }
  });
});

// The CLI and the database file: `reclib backup` of a file that does not exist fails (non-zero
// exit, message on stderr, nothing on stdout) instead of creating an empty database and reporting
// its copy as a backup; a file that is not a database is refused with its name.
const dir = fresh();

describe('reclib backup --db <missing file>', () => {
  it('exits non-zero naming the file, and creates neither the database nor the copy', async () => {
    const db = path.join(dir, 'typo', 'reclib.db');
    const to = path.join(dir, 'copy.db');
    const r = await runCli(['backup', '--db', db, '--to', to, '--json']);
    assert.notEqual(r.code, 0, r.stdout);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /does not exist/);
    assert.ok(r.stderr.includes(db), r.stderr);
    assert.equal(fs.existsSync(db), false, 'no empty database was created');
    assert.equal(fs.existsSync(`${db}.secret`), false, 'no master secret was created');
    assert.equal(fs.existsSync(to), false, 'no copy was written');
  });

  it('still backs up an existing database', async () => {
    const db = path.join(dir, 'real.db');
    assert.equal((await runCli(['accounts', 'create', '--db', db, '--name', 'me', '--json'])).code, 0);
    const to = path.join(dir, 'real-copy.db');
    const r = await runCli(['backup', '--db', db, '--to', to, '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).backup.file, to);
  });
});

describe('a --db file that is not a SQLite database', () => {
  it('admin commands and serve exit 1 naming the file, and leave it as it was', async () => {
    const db = path.join(dir, 'notes.txt');
    fs.writeFileSync(db, 'shopping list\n'.repeat(100));
    for (const args of [['accounts', 'list', '--db', db], ['serve', '--db', db, '--port', '0']]) {
      const r = await runCli(args);
      assert.equal(r.code, 1, `${args[0]}: ${r.stderr}`);
      assert.equal(r.stdout, '');
      assert.equal(r.stderr, `reclib: database file ${db}: file is not a database\n`);
    }
    const json = await runCli(['accounts', 'list', '--db', db, '--json']);
    assert.equal(json.code, 1);
    assert.deepEqual(JSON.parse(json.stderr), { error: { code: 'not_a_database', message: `database file ${db}: file is not a database` } });
    assert.equal(fs.readFileSync(db, 'utf8'), 'shopping list\n'.repeat(100));
  });

  it('is refused untouched even with a -wal left beside it (from which SQLite would rebuild a database over it)', async () => {
    const db = path.join(dir, 'wal-left.db');
    // A process that made a database in WAL mode and was killed: every page is still in the -wal.
    const made = spawnSync(process.execPath, ['-e', `
      const Database = require(${JSON.stringify(path.join(ROOT, 'node_modules', sqlitePackage(usesNapiBuild(process.versions.node) ? 'napi' : 'classic')))});
      const d = new Database(${JSON.stringify(db)});
      d.pragma('journal_mode = WAL');
      d.pragma('wal_autocheckpoint = 0');
      d.exec('CREATE TABLE t (x); INSERT INTO t VALUES (1)');
      process.kill(process.pid, 'SIGKILL');
    `]);
    assert.equal(made.signal, 'SIGKILL', made.stderr.toString());
    assert.ok(fs.statSync(`${db}-wal`).size > 0, 'the -wal holds the database');
    fs.writeFileSync(db, 'my notes\n');
    const r = await runCli(['accounts', 'list', '--db', db]);
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stderr, `reclib: database file ${db}: file is not a database\n`);
    assert.equal(fs.readFileSync(db, 'utf8'), 'my notes\n');
  });

  it('a file a failed restore marked incomplete is refused with its first line, which says where the old database is', async () => {
    const db = path.join(dir, 'marked.db');
    fs.writeFileSync(db, `reclib: this file is incomplete: a restore failed while writing it. The database from before the restore is ${db}.before-restore-1.\n`);
    const r = await runCli(['accounts', 'list', '--db', db]);
    assert.equal(r.code, 1);
    assert.equal(r.stderr, `reclib: database file ${db}: file is not a database: reclib: this file is incomplete: a restore failed while writing it. The database from before the restore is ${db}.before-restore-1.\n`);
  });
});
