// Worker threads are started with a small young generation (src/worker-thread.ts): left to V8, a
// busy thread's grows to 16 MB semi-spaces that the process keeps (peak RSS, issue 14 point 5).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ResourceLimits } from 'node:worker_threads';
import { startModuleWorker, THREAD_YOUNG_GENERATION_MB } from '../src/worker-thread';

describe('startModuleWorker', () => {
  // A caller in the bundle starts dist/<name>.mjs; one run from source, <name>.ts through tsx.
  for (const caller of ['caller.mjs', 'caller.ts']) {
    it(`caps the thread's young generation at ${THREAD_YOUNG_GENERATION_MB} MB (called from ${caller})`, async () => {
      const worker = startModuleWorker('limits-worker', new URL(`./fixtures/${caller}`, import.meta.url).href, null);
      const limits = await new Promise<ResourceLimits>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      await worker.terminate();
      assert.equal(limits.maxYoungGenerationSizeMb, THREAD_YOUNG_GENERATION_MB);
    });
  }
});
