// The master secret file: created once with its full text, kept afterwards, never left empty.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { loadMasterSecret } from '../src/master-secret';

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-secret-'));
/** `fs[name]` fails with `code` (after `before`) for this test only: the modules share node:fs's object. */
const refuse = (t: TestContext, name: 'linkSync' | 'fchmodSync', code: string, before?: () => void) =>
  t.mock.method(fs, name, () => {
    before?.();
    throw Object.assign(new Error(`${code}: refused`), { code });
  });

describe('master secret file', () => {
  it('is created private with a 32-byte secret, read back unchanged, and leaves no temporary file', () => {
    const dir = tempDir();
    const file = path.join(dir, 'db.secret');
    const first = loadMasterSecret(file);
    assert.equal(first.length, 32);
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    assert.deepEqual(loadMasterSecret(file), first);
    assert.deepEqual(fs.readdirSync(dir), ['db.secret']);
  });

  it('a temporary copy left by a process that died mid-way is removed once it is old, a young one is left alone', () => {
    const dir = tempDir();
    const file = path.join(dir, 'db.secret');
    const stale = path.join(dir, 'db.secret.4242.0123456789ab.tmp');
    const young = path.join(dir, 'db.secret.4243.ba9876543210.tmp');
    fs.writeFileSync(stale, 'c2VjcmV0');
    fs.writeFileSync(young, 'c2VjcmV0');
    const old = new Date(Date.now() - 10 * 60_000);
    fs.utimesSync(stale, old, old);
    loadMasterSecret(file);
    assert.deepEqual(fs.readdirSync(dir).sort(), ['db.secret', 'db.secret.4243.ba9876543210.tmp']);
  });

  it('on a file system without hard links (link: EPERM) it is created 0600 all the same, and no temporary file is left', (t) => {
    const dir = tempDir();
    const file = path.join(dir, 'db.secret');
    refuse(t, 'linkSync', 'EPERM');
    assert.equal(loadMasterSecret(file).length, 32);
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    assert.deepEqual(fs.readdirSync(dir), ['db.secret']);
  });

  it('one made meanwhile by another process (link: EEXIST) is the secret, and no temporary file is left', (t) => {
    const dir = tempDir();
    const file = path.join(dir, 'db.secret');
    const theirs = Buffer.alloc(32, 7);
    refuse(t, 'linkSync', 'EEXIST', () => fs.writeFileSync(file, `${theirs.toString('base64')}\n`, { mode: 0o600 }));
    assert.deepEqual(loadMasterSecret(file), theirs);
    assert.deepEqual(fs.readdirSync(dir), ['db.secret']);
  });

  it('a file system that refuses chmod (EPERM) leaves no temporary file beside it', (t) => {
    const dir = tempDir();
    const file = path.join(dir, 'db.secret');
    refuse(t, 'fchmodSync', 'EPERM');
    assert.equal(loadMasterSecret(file).length, 32);
    assert.deepEqual(fs.readdirSync(dir), ['db.secret']);
  });

  it('a file that holds no secret is refused with its name', () => {
    const file = path.join(tempDir(), 'db.secret');
    fs.writeFileSync(file, '');
    assert.throws(() => loadMasterSecret(file), /master secret file .*db\.secret does not hold/);
  });
});
