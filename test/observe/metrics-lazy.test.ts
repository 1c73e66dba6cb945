// prom-client is loaded only when /metrics is configured (src/observe/load-metrics.ts): its
// evaluation was a noticeable share of every start (issue 14's cold start, bench/cold-start.ts).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { startServe } from '../helpers/bundle';

/** Preloaded into the bundle: on exit, the main thread writes the list of Node's own modules it loaded. */
const probe = (out: string) =>
  `data:text/javascript,${encodeURIComponent(
    `import fs from 'node:fs'; import { isMainThread } from 'node:worker_threads';` +
      `if (isMainThread) process.on('exit', () => fs.writeFileSync(${JSON.stringify(out)}, JSON.stringify(process.moduleLoadList)));`,
  )}`;

/** The Node modules `reclib serve` (the bundle) loaded by the time it answered /healthz and stopped. */
async function modulesLoaded(args: string[]): Promise<string[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-start-'));
  const out = path.join(dir, 'modules.json');
  try {
    const s = await startServe(['--db', path.join(dir, 'lib.db'), ...args], { env: { NODE_OPTIONS: `--import=${probe(out)}` } });
    try {
      assert.equal((await fetch(`${s.url}/healthz`)).status, 200);
    } finally {
      await s.stop('SIGTERM');
    }
    return JSON.parse(fs.readFileSync(out, 'utf8')) as string[];
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// prom-client's default collectors are what load node:v8 in serve (heap statistics).
const V8 = 'NativeModule v8';

describe('metrics are loaded only when configured', () => {
  it('serve without a metrics token does not load prom-client (node:v8 stays unloaded); with one it does', async () => {
    const without = await modulesLoaded([]);
    assert.ok(without.includes('NativeModule http'), 'the probe sees the modules serve loads');
    assert.ok(!without.includes(V8), 'prom-client was loaded without a metrics token');
    const withToken = await modulesLoaded(['--metrics-token', 'metrics-token-for-the-lazy-load-test']);
    assert.ok(withToken.includes(V8), 'with a metrics token prom-client is loaded');
  });
});
