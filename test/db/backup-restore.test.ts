// docs/decisions.md §11: `reclib backup --to FILE` writes FILE and FILE.secret, checks the copy and never
// overwrites; `reclib restore --from FILE` refuses while a server uses the database (also right
// after the server was killed -9, when it must go ahead), checks the backup, keeps the old database
// and secret, and restores both, so a restored server's webhooks still verify with the secret a
// consumer was given before the disaster.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { backupFailure } from '../../src/db/backup';
import { putBack } from '../../src/db/restore';
import { openSqlite } from '../../src/db/sqlite';
import { Webhook } from 'standardwebhooks';
import { cliJson, runCli, startServe } from '../helpers/bundle';
import { startReceiver } from '../helpers/receiver';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-backup-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));
let n = 0;
const freshDir = () => fs.mkdtempSync(path.join(root, `${++n}-`));
const mode = (f: string) => fs.statSync(f).mode & 0o777;
const accountIds = async (db: string) => ((await cliJson(['accounts', 'list', '--db', db])).accounts as Array<{ id: string }>).map((a) => a.id);

async function library(dir: string): Promise<{ db: string; accountId: string }> {
  const db = path.join(dir, 'lib', 'reclib.db');
  const accountId = (await cliJson(['accounts', 'create', '--db', db, '--name', 'owner'])).account.id as string;
  return { db, accountId };
}

/** A library, its backup (backup.db beside it), and `target`: reclib.db in a new folder `sub`, for a restore. */
async function backedUp(sub: string) {
  const dir = freshDir();
  const { db } = await library(dir);
  const backup = path.join(dir, 'backup.db');
  await cliJson(['backup', '--db', db, '--to', backup]);
  const target = path.join(dir, sub, 'reclib.db');
  fs.mkdirSync(path.dirname(target));
  return { backup, target };
}

describe('reclib backup', () => {
  it('writes FILE and FILE.secret (0600, the master secret), reports the integrity check, and the copy is a working database', async () => {
    const dir = freshDir();
    const { db, accountId } = await library(dir);
    const to = path.join(dir, 'backups', 'one.db');
    const r = await cliJson(['backup', '--db', db, '--to', to]);
    assert.deepEqual(r, { backup: { file: to, secretFile: `${to}.secret`, pages: r.backup.pages, bytes: fs.statSync(to).size, integrity: 'ok' } });
    assert.equal(fs.readFileSync(`${to}.secret`, 'utf8'), fs.readFileSync(`${db}.secret`, 'utf8'));
    assert.deepEqual([mode(to), mode(`${to}.secret`), mode(path.dirname(to))], [0o600, 0o600, 0o700]);
    const copy = openSqlite(to, { readonly: true });
    assert.equal(copy.pragma('journal_mode', { simple: true }), 'delete', 'a standalone file: nothing beside it is needed');
    copy.close();
    assert.deepEqual(await accountIds(to), [accountId]);
  });

  it('never overwrites FILE or FILE.secret: exit 1, both left as they were', async () => {
    const dir = freshDir();
    const { db } = await library(dir);
    const to = path.join(dir, 'taken.db');
    fs.writeFileSync(`${to}.secret`, 'mine\n');
    const r = await runCli(['backup', '--db', db, '--to', to, '--json']);
    assert.equal(r.code, 1);
    assert.equal(JSON.parse(r.stderr).error.code, 'file_exists');
    assert.equal(fs.existsSync(to), false, 'no copy without its secret');
    assert.equal(fs.readFileSync(`${to}.secret`, 'utf8'), 'mine\n');
    fs.rmSync(`${to}.secret`);
    fs.writeFileSync(to, 'mine');
    assert.equal((await runCli(['backup', '--db', db, '--to', to])).code, 1);
    assert.equal(fs.readFileSync(to, 'utf8'), 'mine');
    assert.equal(fs.existsSync(`${to}.secret`), false);
  });

  it("with the server's master secret kept elsewhere, refuses without --master-secret-file (it made a new secret and backed that up), and backs up the one named", async () => {
    const dir = freshDir();
    const { db } = await library(dir);
    const elsewhere = path.join(dir, 'etc-secret');
    fs.renameSync(`${db}.secret`, elsewhere);
    const to = path.join(dir, 'b.db');
    const r = await runCli(['backup', '--db', db, '--to', to, '--json']);
    assert.equal(r.code, 1, r.stderr);
    assert.equal(JSON.parse(r.stderr).error.code, 'secret_not_found');
    assert.equal(fs.existsSync(`${db}.secret`), false, 'no new secret made');
    assert.equal(fs.existsSync(to), false);
    await cliJson(['backup', '--db', db, '--to', to, '--master-secret-file', elsewhere]);
    assert.equal(fs.readFileSync(`${to}.secret`, 'utf8'), fs.readFileSync(elsewhere, 'utf8'));
  });

  it('a target it cannot write names the backup file and says why (not the database, not a raw errno line)', async () => {
    const dir = freshDir();
    const { db } = await library(dir);
    const r = await runCli(['backup', '--db', db, '--to', '/proc/reclib-backup.db', '--json']);
    assert.equal(r.code, 1);
    const { error } = JSON.parse(r.stderr);
    assert.equal(error.code, 'backup_failed');
    assert.match(error.message, /^backup file \/proc\/reclib-backup\.db: no such file or directory \(ENOENT\); nothing was kept$/);
    // A full disk: SQLite says "database or disk is full" (SQLITE_FULL), about the copy.
    const full = backupFailure('/mnt/x/b.db', Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' })) as Error;
    assert.equal(full.message, 'backup file /mnt/x/b.db: no space left on the device it is on; nothing was kept');
    const other = new Error('something else');
    assert.equal(backupFailure('/b.db', other), other, 'anything else goes on as it was');
  });
});

describe('reclib restore', () => {
  it('round trip after losing the database and its secret: a restored server signs webhooks that verify with the secret given out before', async () => {
    const dir = freshDir();
    const { db, accountId } = await library(dir);
    const receiver = await startReceiver();
    try {
      const allow = ['--webhook-allow', '127.0.0.1'];
      const hook = await cliJson(['webhooks', 'create', '--db', db, '--account', accountId, '--url', receiver.url, '--events', 'recording.created', ...allow]);
      const key = (await cliJson(['keys', 'create', '--db', db, '--account', accountId, '--name', 'k', '--permissions', 'recordings:create'])).secret as string;
      const backup = path.join(dir, 'backup.db');
      await cliJson(['backup', '--db', db, '--to', backup]);
      for (const f of [db, `${db}.secret`]) fs.rmSync(f); // the disk is gone

      const restored = await cliJson(['restore', '--from', backup, '--db', db]);
      assert.deepEqual(restored, { restore: { database: db, secretFile: `${db}.secret`, kept: null } });
      assert.equal(mode(db), 0o600);
      assert.equal(mode(`${db}.secret`), 0o600);

      const server = await startServe(['--db', db, ...allow]);
      try {
        const res = await fetch(`${server.url}/api/v2/recordings`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'after-restore' },
          body: JSON.stringify({ type: 'memo', title: 'after the restore' }),
        });
        assert.equal(res.status, 201, await res.text());
        await receiver.waitForRequests(1, 10_000);
      } finally {
        await server.stop();
      }
      const [req] = receiver.requests;
      const verified = new Webhook(hook.secret as string).verify(req!.body, {
        'webhook-id': String(req!.headers['webhook-id']),
        'webhook-timestamp': String(req!.headers['webhook-timestamp']),
        'webhook-signature': String(req!.headers['webhook-signature']),
      }) as { type: string };
      assert.equal(verified.type, 'recording.created');
    } finally {
      await receiver.close();
    }
  });

  it('into a path without a database keeps a master secret found there, as DB.before-restore-<ms>.secret', async () => {
    const { backup, target } = await backedUp('elsewhere');
    fs.writeFileSync(`${target}.secret`, fs.readFileSync(`${backup}.secret`, 'utf8').replace(/^./, (c) => (c === 'A' ? 'B' : 'A')));
    const orphan = fs.readFileSync(`${target}.secret`, 'utf8');
    const r = await cliJson(['restore', '--from', backup, '--db', target]);
    assert.match(r.restore.kept.secretFile, /elsewhere\/reclib\.db\.before-restore-\d{13}\.secret$/);
    assert.equal(r.restore.kept.database, null);
    assert.equal(fs.readFileSync(r.restore.kept.secretFile, 'utf8'), orphan);
    assert.equal(fs.readFileSync(`${target}.secret`, 'utf8'), fs.readFileSync(`${backup}.secret`, 'utf8'));
  });

  it('into a path where a database moved away left its WAL: refused (SQLite would replay it into the restored file), the WAL kept; without it, restored', async () => {
    const { backup, target } = await backedUp('moved');
    fs.writeFileSync(`${target}-wal`, Buffer.alloc(4096, 1));
    const r = await runCli(['restore', '--from', backup, '--db', target, '--json']);
    assert.equal(r.code, 1, r.stderr);
    assert.match(JSON.parse(r.stderr).error.message, /reclib\.db-wal exists without .*reclib\.db/);
    assert.equal(fs.existsSync(target), false);
    assert.equal(fs.statSync(`${target}-wal`).size, 4096, 'not deleted: it belongs to the database moved away');
    fs.rmSync(`${target}-wal`);
    fs.writeFileSync(`${target}-shm`, Buffer.alloc(32768, 1)); // an index only: removed
    await cliJson(['restore', '--from', backup, '--db', target]);
    assert.equal(fs.existsSync(`${target}-shm`) && fs.statSync(`${target}-shm`).size === 32768, false);
    const check = openSqlite(target, { readonly: true });
    assert.equal(check.pragma('integrity_check', { simple: true }), 'ok');
    check.close();
  });

  it('cut off while it wrote the database: every command says so (not "malformed"), and the same restore again finishes it, keeping the database from before', async () => {
    const dir = freshDir();
    const { db, accountId } = await library(dir);
    const other = await library(path.join(dir, 'o'));
    const backup = path.join(dir, 'backup.db');
    await cliJson(['backup', '--db', other.db, '--to', backup]);
    // The state a kill leaves halfway (as restore.ts writes it): the old database kept, the
    // marker naming it, the backup's secret in place, the file a prefix of the backup.
    const kept = `${db}.before-restore-1`;
    await cliJson(['backup', '--db', db, '--to', kept]);
    fs.writeFileSync(`${db}.restore-in-progress`, `${kept}\n`);
    fs.copyFileSync(`${backup}.secret`, `${db}.secret`);
    const bytes = fs.readFileSync(backup);
    fs.writeFileSync(db, bytes.subarray(0, Math.floor(bytes.length / 2)));
    for (const side of [`${db}-wal`, `${db}-shm`]) fs.rmSync(side, { force: true });
    const said = await runCli(['accounts', 'list', '--db', db, '--json']);
    assert.equal(said.code, 1);
    assert.match(JSON.parse(said.stderr).error.message, /restore into it was cut off .*run the same reclib restore again/);
    const r = await cliJson(['restore', '--from', backup, '--db', db]);
    assert.equal(r.restore.kept.database, kept);
    assert.deepEqual(await accountIds(db), [other.accountId]);
    assert.equal(fs.existsSync(`${db}.restore-in-progress`), false);
    assert.deepEqual(await accountIds(kept), [accountId], 'the database from before, kept');

    // Cut off again, and this time the half file deleted by hand: nothing makes a new, empty
    // library at the path meanwhile, and the restore into the empty path clears the marker.
    fs.writeFileSync(`${db}.restore-in-progress`, `${kept}\n`);
    fs.rmSync(db);
    // accounts create would make a new library where none is.
    const refused = await runCli(['accounts', 'create', '--name', 'x', '--db', db, '--json']);
    assert.equal(refused.code, 1);
    assert.match(JSON.parse(refused.stderr).error.message, /^database file [^:]+: a reclib restore into it was cut off/);
    assert.equal(fs.existsSync(db), false, 'no empty library made');
    await cliJson(['restore', '--from', backup, '--db', db]);
    assert.equal(fs.existsSync(`${db}.restore-in-progress`), false);
    assert.deepEqual(await accountIds(db), [other.accountId]);
  });

  it('is refused while a server uses the database (exit 1, nothing changed), and goes ahead after the server was killed -9, keeping what it had written', async () => {
    const dir = freshDir();
    const { db, accountId } = await library(dir);
    const backup = path.join(dir, 'backup.db');
    await cliJson(['backup', '--db', db, '--to', backup]);
    const server = await startServe(['--db', db]);
    let killed = false;
    try {
      // Written while the server runs: sits in the WAL the server will not get to checkpoint.
      const later = (await cliJson(['accounts', 'create', '--db', db, '--name', 'later'])).account.id as string;
      // A write through the server: its writer thread (started 250 ms after the server, or by the
      // first write) has opened its connection once this is answered. Its open is what dropped the
      // process's lock on the file (openInProcess, src/db/open.ts); without it, whether restore
      // ran before or after that open was a matter of timing.
      const { secret: key } = await cliJson(['keys', 'create', '--db', db, '--account', accountId, '--name', 'k', '--permissions', 'recordings:create']);
      const created = await fetch(`${server.url}/api/v2/recordings`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'idempotency-key': 'k1', 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'clip', transcript: 'written by the writer thread' }),
      });
      assert.equal(created.status, 201, await created.text());
      const secret = fs.readFileSync(`${db}.secret`, 'utf8');
      const refused = await runCli(['restore', '--from', backup, '--db', db, '--json']);
      assert.equal(refused.code, 1, refused.stderr);
      assert.equal(refused.stdout, '');
      const error = JSON.parse(refused.stderr).error as { code: string; message: string };
      assert.equal(error.code, 'database_in_use');
      assert.ok(error.message.includes(db), error.message);
      assert.deepEqual(await accountIds(db), [accountId, later], 'the database is untouched');
      assert.equal(fs.readFileSync(`${db}.secret`, 'utf8'), secret);
      assert.deepEqual(fs.readdirSync(path.dirname(db)).filter((f) => f.includes('before-restore')), []);
      assert.equal((await fetch(`${server.url}/healthz`)).status, 200, 'the server kept running');

      assert.notEqual(await server.stop('SIGKILL'), 0);
      killed = true;
      const secretBefore = fs.readFileSync(`${db}.secret`, 'utf8');
      const r = await cliJson(['restore', '--from', backup, '--db', db]);
      const kept = r.restore.kept as { database: string; secretFile: string };
      assert.match(path.basename(kept.database), /^reclib\.db\.before-restore-\d{13}$/);
      assert.equal(kept.secretFile, `${kept.database}.secret`);
      assert.deepEqual(await accountIds(db), [accountId], 'the backup is back');
      assert.deepEqual(await accountIds(kept.database), [accountId, later], 'the kept database has what the killed server had in its WAL');
      assert.equal(fs.readFileSync(kept.secretFile, 'utf8'), secretBefore);
      assert.equal(fs.readFileSync(`${db}.secret`, 'utf8'), fs.readFileSync(`${backup}.secret`, 'utf8'));
      assert.deepEqual([mode(kept.database), mode(kept.secretFile)], [0o600, 0o600]);
      assert.deepEqual(fs.readdirSync(path.dirname(db)).filter((f) => f.endsWith('.before-restore')), [], "the old secret's second name is gone");
    } finally {
      if (!killed) await server.stop('SIGKILL');
    }
  });

  it('checks the backup first: a missing secret, a damaged copy or another application\'s database is refused and the database stays as it was', async () => {
    const dir = freshDir();
    const { db, accountId } = await library(dir);
    const good = path.join(dir, 'good.db');
    await cliJson(['backup', '--db', db, '--to', good]);
    const noSecret = path.join(dir, 'no-secret.db');
    fs.copyFileSync(good, noSecret);
    const damaged = path.join(dir, 'damaged.db');
    const bytes = fs.readFileSync(good);
    bytes.fill(0x55, 4096 * 3, 4096 * 6); // whole pages of the schema's tables overwritten
    fs.writeFileSync(damaged, bytes);
    fs.copyFileSync(`${good}.secret`, `${damaged}.secret`);
    const foreign = path.join(dir, 'foreign.db');
    const other = openSqlite(foreign);
    other.exec('CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES (\'mine\')');
    other.close();
    fs.copyFileSync(`${good}.secret`, `${foreign}.secret`);

    const before = fs.readFileSync(db);
    for (const [file, message] of [[noSecret, /no-secret\.db\.secret is missing/], [damaged, /damaged\.db/], [foreign, /not a reclib database/]] as const) {
      const r = await runCli(['restore', '--from', file, '--db', db, '--json']);
      assert.equal(r.code, 1, `${file}: ${r.stderr}`);
      const error = JSON.parse(r.stderr).error as { code: string; message: string };
      assert.equal(error.code, 'invalid_backup', error.message);
      assert.match(error.message, message);
    }
    assert.ok(fs.readFileSync(db).equals(before));
    assert.deepEqual(fs.readdirSync(path.dirname(db)).sort(), ['reclib.db', 'reclib.db.secret']);
    assert.deepEqual(await accountIds(db), [accountId]);
  });
});

describe('reclib restore when the copy into the database fails halfway (a full disk)', () => {
  const files = () => {
    const dir = freshDir();
    const db = path.join(dir, 'reclib.db');
    const kept = `${db}.before-restore-1`;
    return { db, kept, secretFile: `${db}.secret`, oldSecret: `${db}.secret.1.before-restore` as string | null };
  };

  it('puts the kept database and the old secret back (a rename, no data to write), and says both are as they were', () => {
    const f = files();
    fs.writeFileSync(f.kept, 'the old database, whole');
    fs.writeFileSync(f.oldSecret!, 'the old secret\n');
    fs.writeFileSync(f.db, 'the backup, cut sho');
    fs.writeFileSync(f.secretFile, 'the backup secret\n');
    const fd = fs.openSync(f.db, 'r+');
    try {
      assert.equal(putBack({ ...f, fd }), `the database is as it was; its secret is as it was (the old database is also kept at ${f.kept})`);
    } finally {
      fs.closeSync(fd);
    }
    assert.equal(fs.readFileSync(f.db, 'utf8'), 'the old database, whole');
    assert.equal(fs.readFileSync(f.secretFile, 'utf8'), 'the old secret\n');
    assert.equal(fs.existsSync(f.oldSecret!), false, 'its second name is gone');
  });

  it('without an old secret, removes the one written for the backup; a database not yet truncated is left alone', () => {
    const f = files();
    fs.writeFileSync(f.db, 'untouched');
    fs.writeFileSync(f.secretFile, 'the backup secret\n');
    assert.equal(putBack({ ...f, fd: undefined, oldSecret: null }), `the database was not changed; the backup's secret written for it is removed (there was none before) (the old database is also kept at ${f.kept})`);
    assert.equal(fs.readFileSync(f.db, 'utf8'), 'untouched');
    assert.equal(fs.existsSync(f.secretFile), false);
  });

  it('if the kept copy cannot be read, the file is marked incomplete, never left empty (an empty file would open as a new library), and the message says what to copy where', () => {
    const f = files();
    fs.writeFileSync(f.db, 'cut sho');
    fs.writeFileSync(f.oldSecret!, 'the old secret\n');
    const fd = fs.openSync(f.db, 'r+');
    try {
      const said = putBack({ ...f, fd });
      assert.match(said, /^putting the old database back failed too \(.*ENOENT.*\): .*reclib\.db is incomplete; copy .*reclib\.db\.before-restore-1 over it before starting reclib; its secret is as it was/);
    } finally {
      fs.closeSync(fd);
    }
    assert.match(fs.readFileSync(f.db, 'utf8'), /^reclib: this file is incomplete: a restore failed while writing it\. The database from before the restore is .*before-restore-1\.\n$/);
    const file = openSqlite(f.db, { readonly: true });
    try {
      assert.throws(() => file.pragma('user_version'), /not a database/, 'SQLite refuses it');
    } finally {
      file.close();
    }
  });
});
