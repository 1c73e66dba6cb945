// The worker threads' files of the built bundle (dist/*-worker.mjs) each run on their own. Their
// callers fall back quietly when a worker cannot start (the server checkpoints and counts on its
// own connection instead), so a bundle whose worker file throws at load would otherwise pass every
// test that only watches the server from outside.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import { LIVE_RECORDINGS_SQL } from '../../src/store/metrics-store';
import { cliJson, ensureBundle, ROOT } from '../helpers/bundle';

/** Starts dist/<name>.mjs with `workerData`; resolves with its first message, rejects on its error. */
function firstMessage(name: string, workerData: unknown, send?: unknown): Promise<{ worker: Worker; message: unknown }> {
  ensureBundle();
  const worker = new Worker(path.join(ROOT, 'dist', `${name}.mjs`), { workerData });
  return new Promise((resolve, reject) => {
    worker.once('error', reject);
    worker.once('message', (message) => resolve({ worker, message }));
    if (send !== undefined) worker.postMessage(send);
  });
}

describe('the bundle\'s worker files', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-workers-'));
  const db = path.join(dir, 'reclib.db');

  it('library-count-worker opens the database read-only and counts its live recordings', async (t) => {
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    await cliJson(['accounts', 'create', '--db', db, '--name', 'counted']);
    const { worker, message } = await firstMessage('library-count-worker', { file: db, sql: LIVE_RECORDINGS_SQL }, 'count');
    t.after(() => worker.terminate());
    assert.deepEqual(message, { n: 0 });
  });
});
