// What a server's start loads before it listens (cold start, issue 14): not the Node modules that
// only later work uses. https and dns load at the first webhook delivery or hostname check,
// worker_threads when the server starts its threads after listening, and no built-in module is
// imported through its ESM facade (build.mjs, builtinsByRequire, says why). listen() itself then
// loads cluster and child_process, in Node.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, it } from 'node:test';
import { ROOT, startServe } from '../helpers/bundle';

const PRELOAD = path.join(ROOT, 'test/fixtures/modules-at-listen.cjs');
const REPORT = /modules-at-listen: (\S*)\n/;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-start-modules-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

it('serve listens before loading the Node modules only later requests or threads use', async (t) => {
  const s = await startServe(['--host', '127.0.0.1', '--db', path.join(dir, 'reclib.db')], { nodeArgs: ['--require', PRELOAD] });
  t.after(() => s.stop('SIGKILL'));
  // The preload writes its line before listen(), the server its URL after; the two pipes are read apart.
  for (let i = 0; i < 100 && !REPORT.test(s.stderr()); i++) await new Promise((r) => setTimeout(r, 50));
  const loaded = REPORT.exec(s.stderr())?.[1]?.split(',');
  assert.ok(loaded, `no report on stderr: ${s.stderr()}`);
  // The report works: the HTTP server and the hashing of API keys are loaded by then.
  assert.ok(loaded.includes('http') && loaded.includes('crypto'), loaded.join(' '));
  const early = ['tls', 'https', 'http2', 'zlib', 'dns', 'worker_threads', 'internal/deps/undici/undici', 'internal/crypto/webcrypto'];
  assert.deepEqual(early.filter((m) => loaded.includes(m)), []);
});
