// The CLI and the database file: `reclib backup` of a file that does not exist fails (non-zero
// exit, message on stderr, nothing on stdout) instead of creating an empty database and reporting
// its copy as a backup; a file that is not a database is refused with its name.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { runCli } from './helpers/bundle';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-db-file-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

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
});
