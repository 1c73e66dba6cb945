// docs/decisions.md §8: `reclib accounts create` with a name another account has, in any case, exits 1
// with a message naming the account that has it, and creates nothing.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { cliJson, runCli } from '../helpers/bundle';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-unique-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('accounts create refuses a taken name', () => {
  it('a name taken in another case exits 1 naming the existing account; the list is unchanged', async () => {
    const db = path.join(dir, 'r.db');
    const first = await cliJson(['accounts', 'create', '--db', db, '--name', 'Alice']);
    for (const name of ['Alice', 'alice', 'ALICE']) {
      const r = await runCli(['accounts', 'create', '--db', db, '--name', name]);
      assert.equal(r.code, 1, `${name}: ${r.stderr}`);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, /already exists/);
      assert.ok(r.stderr.includes(first.account.id), r.stderr);
    }
    const list = await cliJson(['accounts', 'list', '--db', db]);
    assert.deepEqual(list.accounts.map((a: { name: string }) => a.name), ['Alice']);
  });
});

describe('accounts create bounds the name', () => {
  it('a name over 200 characters exits 1 saying so, and creates nothing (as for key names)', async () => {
    const db = path.join(dir, 'long.db');
    const r = await runCli(['accounts', 'create', '--db', db, '--name', 'a'.repeat(201)]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /name must be at most 200 characters/);
    assert.equal(fs.existsSync(db), false, 'no database file started for it');
    assert.equal((await runCli(['accounts', 'create', '--db', db, '--name', 'a'.repeat(200)])).code, 0);
  });
});
