// What a server's start loads before it listens (cold start, issue 14): not the Node modules that
// only later work uses. https and dns load at the first webhook delivery or hostname check,
// worker_threads when the server starts its threads after listening, and no built-in module is
// imported through its ESM facade (build.mjs, builtinsByRequire, says why). listen() itself then
// loads cluster and child_process, in Node.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, it } from 'node:test';
import { cleanEnv, ensureBundle, ROOT } from '../helpers/bundle';

const PRELOAD = path.join(ROOT, 'test/fixtures/modules-at-listen.cjs');
const REPORT = /modules-at-listen: (\S*)\n/;

/** The Node modules loaded when `serve` first calls listen(), as the preload reports them; the server is then killed. */
function modulesAtListen(db: string): Promise<string[]> {
  const child = spawn(process.execPath, ['--require', PRELOAD, ensureBundle(), 'serve', '--port', '0', '--host', '127.0.0.1', '--db', db], { cwd: ROOT, env: cleanEnv() });
  let err = '';
  let report: string[] | undefined;
  return new Promise((resolve, reject) => {
    // Until the process is gone, whatever happens: nothing is checked at its exit.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no report and exit within 15 s: ${err}`));
    }, 15_000);
    child.stderr.on('data', (d: Buffer) => {
      if (report) return;
      err += d.toString();
      const m = REPORT.exec(err);
      if (!m) return;
      report = m[1]!.split(',');
      child.kill('SIGKILL');
    });
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (report) resolve(report);
      else reject(new Error(`serve exited (${code ?? signal}) before listening: ${err}`));
    });
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
