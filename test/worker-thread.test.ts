// Worker threads are started with a small young generation (src/worker-thread.ts): left to V8, a
// busy thread's grows to 16 MB semi-spaces that the process keeps (peak RSS, issue 14 point 5).
// And they are told which better-sqlite3 build the process uses (src/db/sqlite.ts): two copies of
// SQLite in one process on one file can corrupt it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ResourceLimits } from 'node:worker_threads';
import { sqliteBuild } from '../src/db/sqlite';
import fs from 'node:fs';
import { MAIN_SEMI_SPACE_MB, startModuleWorker, THREAD_YOUNG_GENERATION_MB } from '../src/worker-thread';

describe('startModuleWorker', () => {
  // A caller in the bundle starts dist/<name>.mjs; one run from source, <name>.ts through tsx.
  for (const caller of ['caller.mjs', 'caller.ts']) {
    it(`caps the thread's young generation at ${THREAD_YOUNG_GENERATION_MB} MB and names this thread's SQLite build (called from ${caller})`, async () => {
      const worker = startModuleWorker('limits-worker', new URL(`./fixtures/${caller}`, import.meta.url).href, null);
      const told = await new Promise<{ resourceLimits: ResourceLimits; sqliteBuild?: string; uses?: string }>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      await worker.terminate();
      assert.equal(told.resourceLimits.maxYoungGenerationSizeMb, THREAD_YOUNG_GENERATION_MB);
      assert.equal(told.sqliteBuild, sqliteBuild());
      // From source the thread runs src/db/sqlite.ts and reports the build it decided on.
      if (caller === 'caller.ts') assert.equal(told.uses, sqliteBuild());
    });
  }

  it(`npm start and the Docker image run the main thread with ${MAIN_SEMI_SPACE_MB} MB semi-spaces`, () => {
    const flag = `--max-semi-space-size=${MAIN_SEMI_SPACE_MB}`;
    const root = new URL('../', import.meta.url);
    const start = (JSON.parse(fs.readFileSync(new URL('package.json', root), 'utf8')) as { scripts: { start: string } }).scripts.start;
    assert.equal(start, `node ${flag} dist/reclib.cjs serve`);
    assert.match(fs.readFileSync(new URL('Dockerfile', root), 'utf8'), new RegExp(`^CMD \\["node", "${flag}", "dist/reclib\\.cjs", "serve"\\]$`, 'm'));
  });
});
