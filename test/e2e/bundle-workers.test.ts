// The worker threads' files of the built bundle (dist/*-worker.mjs) each run on their own. Their
// callers fall back quietly when a worker cannot start (the server checkpoints and counts on its
// own connection instead), so a bundle whose worker file throws at load would otherwise pass every
// test that only watches the server from outside.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { Worker } from 'node:worker_threads';
import type { CheckpointerWorkerData } from '../../src/db/checkpointer-worker';
import { LIVE_RECORDINGS_SQL } from '../../src/store/metrics-store';
import { startModuleWorker } from '../../src/worker-thread';
import { BUNDLE, cliJson, ensureBundle } from '../helpers/bundle';

/** Starts dist/<name>.mjs as the bundle does, with `workerData`; resolves with its first message, rejects on its error or exit. */
function firstMessage(name: string, workerData: unknown, send?: unknown): Promise<{ worker: Worker; message: unknown }> {
  const worker = startModuleWorker(name, pathToFileURL(ensureBundle()).href, workerData);
  return new Promise((resolve, reject) => {
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`${name} exited (code ${code}) before its first message`)));
    worker.once('message', (message) => resolve({ worker, message }));
    if (send !== undefined) worker.postMessage(send);
  });
}

describe("the bundle's worker files", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-workers-'));
  const db = path.join(dir, 'reclib.db');

  // A reclib database (one account, no recordings) for the workers to open.
  const made = cliJson(['accounts', 'create', '--db', db, '--name', 'counted']);
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('library-count-worker opens the database read-only and counts its live recordings', async (t) => {
    await made;
    const { worker, message } = await firstMessage('library-count-worker', { file: db, sql: LIVE_RECORDINGS_SQL }, 'count');
    t.after(() => worker.terminate());
    assert.deepEqual(message, { n: 0 });
  });

  it('checkpointer-worker checkpoints the file on its own connection, and stops when told', async () => {
    await made;
    const data: CheckpointerWorkerData = { file: db, everyMs: 10, passFrames: 512, pollMs: 10, maxFailures: 3, sizeLimit: 1 << 30, erase: { delayMs: 0, maxDelayMs: 0, waitMs: 100, maxBackoffMs: 100 } };
    const { worker, message } = await firstMessage('checkpointer-worker', data);
    const exited = new Promise<number>((resolve) => worker.once('exit', resolve));
    assert.equal(typeof (message as { log?: unknown }).log, 'number', JSON.stringify(message));
    worker.postMessage('stop');
    assert.equal(await exited, 0);
  });
});
