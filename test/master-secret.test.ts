// The master secret file: created once with its full text, kept afterwards, never left empty.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { loadMasterSecret } from '../src/master-secret';

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-secret-'));

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

  it('processes starting together on a new path all get the same secret', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'db.secret');
    const script = `import('${path.resolve('src/master-secret.ts').replace(/\\/g, '/')}').then((m) => process.stdout.write(m.loadMasterSecret(${JSON.stringify(file)}).toString('hex')))`;
    const one = () =>
      new Promise<string>((resolve, reject) => {
        const child = spawn(process.execPath, ['--import', 'tsx', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        let err = '';
        child.stdout.on('data', (d: Buffer) => (out += d));
        child.stderr.on('data', (d: Buffer) => (err += d));
        child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(err))));
      });
    const secrets = await Promise.all(Array.from({ length: 6 }, one));
    assert.equal(new Set(secrets).size, 1);
    assert.equal(secrets[0]!.length, 64);
    assert.deepEqual(fs.readdirSync(dir), ['db.secret']);
  });

  it('a file that holds no secret is refused with its name', () => {
    const file = path.join(tempDir(), 'db.secret');
    fs.writeFileSync(file, '');
    assert.throws(() => loadMasterSecret(file), /master secret file .*db\.secret does not hold/);
  });
});
