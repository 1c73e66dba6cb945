// One `reclib serve` per database file (src/db/serve-lock.ts), as processes: a second server on
// the same file exits 1 at its start and says why, and the lock goes with the process that held
// it, however it ended (kill -9 included), so the next start is never refused by a dead server.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { cliJson, runCli, startServe } from '../helpers/bundle';

describe('reclib serve: one server per database file', () => {
  it('a second serve on the same file exits 1 naming the file, while the CLI still works on it; after kill -9 of the first, a new serve starts', async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-serve-lock-e2e-'));
    const db = path.join(dir, 'reclib.db');
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const first = await startServe(['--db', db]);
    t.after(() => first.stop('SIGKILL'));
    const second = await runCli(['serve', '--db', db, '--port', '0']);
    assert.equal(second.code, 1, second.stderr);
    assert.equal(second.stdout, '', 'it never listened');
    assert.match(second.stderr, /^reclib: cannot serve: another reclib serve is serving .*reclib\.db .*run one server per database file/);
    // With --json, the error object every command prints (CONTRACT §12).
    const asJson = await runCli(['serve', '--db', db, '--port', '0', '--json']);
    assert.equal(asJson.code, 1);
    assert.equal(asJson.stdout, '');
    const { error } = JSON.parse(asJson.stderr) as { error: { code: string; message: string } };
    assert.equal(error.code, 'database_in_use');
    assert.match(error.message, /^cannot serve: another reclib serve is serving .*reclib\.db/);
    // The admin CLI is not a server: it works on the file while the server runs.
    const created = await cliJson(['accounts', 'create', '--db', db, '--name', 'me']);
    assert.match(created.account.id, /^acc_/);
    assert.equal((await fetch(`${first.url}/healthz`)).status, 200);
    assert.equal(await first.stop('SIGKILL'), null, 'killed, not exited');
    const next = await startServe(['--db', db]);
    t.after(() => next.stop());
    assert.equal((await fetch(`${next.url}/healthz`)).status, 200);
  });

  it('a serve on a port another server holds exits 1 with "cannot listen", and with --json the error object', async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-serve-port-e2e-'));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const first = await startServe(['--db', path.join(dir, 'a.db')]);
    t.after(() => first.stop());
    const port = new URL(first.url).port;
    const second = await runCli(['serve', '--db', path.join(dir, 'b.db'), '--port', port]);
    assert.equal(second.code, 1, second.stderr);
    assert.equal(second.stdout, '');
    assert.match(second.stderr, new RegExp(`^reclib: cannot listen: listen EADDRINUSE: address already in use 127\\.0\\.0\\.1:${port}\\n$`));
    const asJson = await runCli(['serve', '--db', path.join(dir, 'b.db'), '--port', port, '--json']);
    assert.equal(asJson.code, 1);
    assert.equal(asJson.stdout, '');
    assert.deepEqual(JSON.parse(asJson.stderr), { error: { code: 'address_in_use', message: `cannot listen: listen EADDRINUSE: address already in use 127.0.0.1:${port}` } });
  });
});
