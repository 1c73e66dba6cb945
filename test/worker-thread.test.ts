// Worker threads are started with a small young generation (src/worker-thread.ts): left to V8, a
// busy thread's grows to 16 MB semi-spaces that the process keeps (peak RSS, issue 14 point 5).
// And they are told which better-sqlite3 build the process uses (src/db/sqlite.ts): two copies of
// SQLite in one process on one file can corrupt it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import type { ResourceLimits } from 'node:worker_threads';
import { sqliteBuild } from '../src/db/sqlite';
import { MAIN_SEMI_SPACE_MB, mainThreadNodeFlags, startModuleWorker, THREAD_YOUNG_GENERATION_MB } from '../src/worker-thread';

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

  it('npm start names no V8 flag (Node 20), and the Docker image (Node 24) caps the main thread\'s semi-spaces', () => {
    const root = new URL('../', import.meta.url);
    const start = (JSON.parse(fs.readFileSync(new URL('package.json', root), 'utf8')) as { scripts: { start: string } }).scripts.start;
    assert.equal(start, ['node', ...mainThreadNodeFlags('20.18.0'), 'dist/reclib.cjs serve'].join(' '));
    const dockerfile = fs.readFileSync(new URL('Dockerfile', root), 'utf8');
    const node = /^FROM node:(\d+)\S* AS build$/m.exec(dockerfile)?.[1];
    assert.ok(node !== undefined && Number(node) >= 22, `the Dockerfile's Node: ${node}`);
    assert.match(dockerfile, new RegExp(`^FROM node:${node}\\S*$`, 'm'));
    const cmd = ['node', ...mainThreadNodeFlags(`${node}.0.0`), 'dist/reclib.cjs', 'serve'].map((w) => JSON.stringify(w)).join(', ');
    assert.ok(dockerfile.split('\n').includes(`CMD [${cmd}]`), `the Dockerfile's CMD is not [${cmd}]`);
  });

  it(`started with mainThreadNodeFlags(), this Node keeps the main thread's semi-spaces at ${MAIN_SEMI_SPACE_MB} MB under steady allocation`, () => {
    // Objects that survive a while make V8 grow the new space up to its cap (Node 24 without the flag: 128 MB).
    const script = `let keep = []; for (let r = 0; r < 40; r++) { for (let i = 0; i < 100000; i++) keep.push({ i }); if (keep.length > 600000) keep = []; }
      process.stdout.write(String(require('node:v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size));`;
    const r = spawnSync(process.execPath, [...mainThreadNodeFlags(), '-e', script], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    // The new space is two semi-spaces.
    assert.ok(Number(r.stdout) <= 2 * MAIN_SEMI_SPACE_MB * 1024 * 1024, `new space ${Number(r.stdout) / 1048576} MB`);
  });
});
