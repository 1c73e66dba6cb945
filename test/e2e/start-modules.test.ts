// What a server's start loads before it listens (cold start, issue 14). Node modules it needs only
// later are loaded when first used: https and dns at the first webhook delivery, worker_threads
// when the server starts its threads after listening. Built-in modules reach the bundle through
// require(), since an import reads every export of a module's ESM facade, and node:http's getters
// load undici (with tls, http2 and zlib) on Node 24, node:crypto's webcrypto (build.mjs,
// builtinsByRequire). (listen() itself loads cluster and child_process, in Node.)
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, it } from 'node:test';
import { cleanEnv, ensureBundle, ROOT } from '../helpers/bundle';

const PRELOAD = path.join(ROOT, 'test/fixtures/modules-at-listen.cjs');

/** The Node modules loaded when `serve` first calls listen(), as the preload reports them. */
function modulesAtListen(db: string): Promise<string[]> {
  const child = spawn(process.execPath, ['--require', PRELOAD, ensureBundle(), 'serve', '--port', '0', '--host', '127.0.0.1', '--db', db], { cwd: ROOT, env: cleanEnv() });
  let err = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no report within 15 s: ${err}`));
    }, 15_000);
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /modules-at-listen: (\S*)\n/.exec(err);
      if (!m) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      child.once('exit', () => resolve(m[1]!.split(',')));
      child.kill('SIGTERM');
    });
    child.once('exit', (code) => reject(new Error(`serve exited ${code} before listening: ${err}`)));
  });
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-start-modules-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

it('serve listens before loading the Node modules only later requests or threads use', async () => {
  const loaded = await modulesAtListen(path.join(dir, 'reclib.db'));
  // The report works: the HTTP server and the hashing of API keys are loaded by then.
  assert.ok(loaded.includes('http') && loaded.includes('crypto'), loaded.join(' '));
  const early = ['tls', 'https', 'http2', 'zlib', 'dns', 'worker_threads', 'internal/deps/undici/undici', 'internal/crypto/webcrypto'];
  assert.deepEqual(early.filter((m) => loaded.includes(m)), []);
});
