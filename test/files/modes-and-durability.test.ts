// docs/decisions.md §11: files reclib creates are private whatever the umask (the database,
// its -wal and -shm, the master secret, backups, exports: 0600; folders 0700), and
// --durability full|normal (RECLIB_DURABILITY, default full) sets synchronous=FULL or NORMAL on
// the server's connection and on every admin command's connection alike.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { openAdminRuntime } from '../../src/cli/shared';
import { loadConfig } from '../../src/config';
import { openDatabase } from '../../src/db/open';
import { createPrivateFile } from '../../src/files/private-files';
import { startServer } from '../../src/server';
import { BUNDLE, cleanEnv, ensureBundle, ROOT } from '../helpers/bundle';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-files-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = () => fs.mkdtempSync(path.join(root, `${++n}-`));
const mode = (f: string) => fs.statSync(f).mode & 0o777;

/** Runs the bundle under `umask 000` in a shell, so the child starts with the most permissive umask. */
function withUmask000(args: string[], untilStdout?: RegExp): Promise<{ code: number | null; stdout: string; stderr: string; kill(): void }> {
  ensureBundle();
  const quoted = [process.execPath, BUNDLE, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const child = spawn('/bin/sh', ['-c', `umask 000 && exec ${quoted}`], { cwd: ROOT, env: cleanEnv() });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => {
    const done = (code: number | null) => resolve({ code, stdout, stderr, kill: () => child.kill('SIGKILL') });
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (untilStdout?.test(stdout)) done(null);
    });
    child.on('close', (code) => done(code));
  });
}

describe('file modes under umask 000', () => {
  it('serve creates its folder 0700 and the database, -wal, -shm and master secret 0600', async () => {
    const dir = fresh();
    const db = path.join(dir, 'data', 'reclib.db');
    const server = await withUmask000(['serve', '--db', db, '--port', '0'], /listening on/);
    try {
      assert.match(server.stdout, /listening on/, server.stderr);
      assert.deepEqual(
        [mode(path.dirname(db)), mode(db), mode(`${db}-wal`), mode(`${db}-shm`), mode(`${db}.secret`)],
        [0o700, 0o600, 0o600, 0o600, 0o600],
      );
    } finally {
      server.kill();
    }
  });

  it('accounts create, backup and export create 0600 files in 0700 folders', async () => {
    const dir = fresh();
    const db = path.join(dir, 'lib', 'reclib.db');
    const created = await withUmask000(['accounts', 'create', '--db', db, '--name', 'me', '--json']);
    assert.equal(created.code, 0, created.stderr);
    const account = (JSON.parse(created.stdout) as { account: { id: string } }).account.id;
    const to = path.join(dir, 'backups', 'nightly', 'b.db');
    assert.equal((await withUmask000(['backup', '--db', db, '--to', to])).code, 0);
    const out = path.join(dir, 'export', 'notes');
    assert.equal((await withUmask000(['export', '--db', db, '--account', account, '--to', out, '--format', 'json'])).code, 0);
    assert.deepEqual(
      [mode(path.dirname(db)), mode(db), mode(`${db}.secret`)],
      [0o700, 0o600, 0o600],
    );
    assert.deepEqual([mode(path.join(dir, 'backups')), mode(path.dirname(to)), mode(to), mode(`${to}.secret`)], [0o700, 0o700, 0o600, 0o600]);
    assert.deepEqual([mode(path.dirname(out)), mode(out), mode(path.join(out, 'recordings.jsonl'))], [0o700, 0o700, 0o600]);
  });

  it('an existing folder and database keep the modes their owner gave them', () => {
    const dir = fresh();
    fs.chmodSync(dir, 0o750);
    const db = path.join(dir, 'shared.db');
    openDatabase(db).close();
    fs.chmodSync(db, 0o640);
    openDatabase(db).close();
    assert.deepEqual([mode(dir), mode(db)], [0o750, 0o640]);
  });
});

describe('createPrivateFile', () => {
  it('takes away the file it made when its mode cannot be set (chmod: EPERM): a retry does not find the name taken', (t) => {
    const file = path.join(fresh(), 'backup.db');
    t.mock.method(fs, 'fchmodSync', () => {
      throw Object.assign(new Error('EPERM: operation not permitted, fchmod'), { code: 'EPERM' });
    });
    assert.throws(() => createPrivateFile(file), { code: 'EPERM' });
    assert.equal(fs.existsSync(file), false);
  });
});

describe('--durability', () => {
  const synchronous = (db: { pragma(p: string, o: { simple: true }): unknown }) => db.pragma('synchronous', { simple: true });

  it("the server's connection: FULL (2) by default, NORMAL (1) with --durability normal or RECLIB_DURABILITY=normal", async () => {
    const db = path.join(fresh(), 'r.db');
    for (const [config, expected] of [
      [loadConfig({ db, port: '0' }, {}), 2],
      [loadConfig({ db, port: '0', durability: 'normal' }, {}), 1],
      [loadConfig({ db, port: '0' }, { RECLIB_DURABILITY: 'normal' }), 1],
    ] as const) {
      const server = await startServer(config, () => undefined);
      try {
        assert.equal(synchronous(server.services.core.db), expected, JSON.stringify(config.durability));
      } finally {
        await server.close();
      }
    }
  });

  it("every admin command's connection: FULL by default, NORMAL with --durability normal or RECLIB_DURABILITY=normal", () => {
    const db = path.join(fresh(), 'r.db');
    openDatabase(db).close();
    const check = (opts: { durability?: string }, expected: number) => {
      const services = openAdminRuntime({ db, ...opts });
      try {
        assert.equal(synchronous(services.core.db), expected);
      } finally {
        services.core.db.close();
      }
    };
    check({}, 2);
    check({ durability: 'normal' }, 1);
    const before = process.env.RECLIB_DURABILITY;
    process.env.RECLIB_DURABILITY = 'normal';
    try {
      check({}, 1);
      check({ durability: 'full' }, 2);
    } finally {
      if (before === undefined) delete process.env.RECLIB_DURABILITY;
      else process.env.RECLIB_DURABILITY = before;
    }
  });

  // Under FULL a commit returns only after the WAL is on disk: the process asks the kernel to flush
  // it (fdatasync/fsync) before it reports the write. Under NORMAL the same commit flushes nothing
  // (the WAL reaches the disk at the next checkpoint). Seen from outside with strace; the process
  // exits without closing the database, so no checkpoint-on-close adds a flush.
  const hasStrace = spawnSync('strace', ['-V']).status === 0;
  it('FULL flushes the WAL before a commit returns, NORMAL does not (strace counts fsync/fdatasync)', { skip: !hasStrace && 'strace not installed' }, () => {
    const db = path.join(fresh(), 'r.db');
    openDatabase(db).close();
    const script = `
      import { openDatabase } from ${JSON.stringify(path.join(ROOT, 'src/db/open.ts'))};
      const db = openDatabase(process.argv[2], { durability: process.argv[3] });
      process.stdout.write('opened\\n');
      db.prepare("INSERT INTO accounts (id, name, app_integration, created_at) VALUES (?, 'x', ?, 0)").run(process.argv[3], 'int_' + process.argv[3]);
      process.stdout.write('committed\\n');
      process.exit(0);`;
    const file = path.join(root, `sync-probe-${process.pid}.mts`);
    fs.writeFileSync(file, script);
    const flushes = (durability: string): number => {
      const trace = path.join(root, `trace-${durability}`);
      const r = spawnSync('strace', ['-f', '-qq', '-e', 'trace=fsync,fdatasync,write', '-o', trace, process.execPath, '--import', 'tsx', file, db, durability], { cwd: ROOT, encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      const lines = fs.readFileSync(trace, 'utf8').split('\n');
      const from = lines.findIndex((l) => l.includes('"opened\\n"'));
      const to = lines.findIndex((l) => l.includes('"committed\\n"'));
      assert.ok(from >= 0 && to > from, 'the probe ran');
      return lines.slice(from, to).filter((l) => /\b(fsync|fdatasync)\(/.test(l)).length;
    };
    assert.ok(flushes('full') >= 1, 'FULL: the commit flushed the WAL');
    assert.equal(flushes('normal'), 0, 'NORMAL: the commit flushed nothing');
  });
});
