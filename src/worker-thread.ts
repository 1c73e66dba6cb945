// Starting a worker thread whose code is a typed module of its own (the checkpointer's, the
// library count's, the writer's). In the bundle (dist/reclib.cjs) the module is the file esbuild
// built beside it, `dist/<name>.mjs`. From source (tests, `npx tsx bin/reclib.ts`) it is `<name>.ts` beside the
// caller, imported after tsx's loader is registered inside the thread: Node 20 does not apply
// `--import` loaders from a worker's execArgv to its main module. execArgv is empty either way,
// so none of the server's flags (a profiler's, say) reach the thread.
import type { Worker } from 'node:worker_threads';
import { SQLITE_BUILD_ENV, sqliteBuild } from './db/sqlite';

/**
 * Each thread's young generation (V8's space for new objects: two semi-spaces and the new large
 * objects beside them), in MB. Left to V8 it grows to 16 MB semi-spaces under a steady stream of
 * allocations, such as the writer thread's answers to creates; it is memory the process keeps.
 * Under creates and then gets by id on a library of 1,000,000 (bench/results-notes.md,
 * 2026-11-26), the server's peak RSS was 204-221 MB with 16 against 224-237 MB without a cap, and
 * CPU per create the same in interleaved runs; 6 took the peak to 199-216 MB but cost 15% more CPU
 * per create (objects waiting for their group commit outlived 2 MB semi-spaces). The main
 * thread's own is set by V8 at the process's start, before any of our code runs
 * (MAIN_SEMI_SPACE_MB).
 */
export const THREAD_YOUNG_GENERATION_MB = 16;

/**
 * The main thread's semi-space cap, MB: Node 20's default. Node 24's lets the young generation
 * grow ~100 MB more under steady searching (286 against 184 MB RSS at 1,000,000, same
 * throughput), so there node must be started with `--max-semi-space-size` (mainThreadNodeFlags).
 */
export const MAIN_SEMI_SPACE_MB = 16;

/**
 * The flags node must be started with for the main thread's young generation to be
 * MAIN_SEMI_SPACE_MB. None on Node 20 (`npm start`): 16 MB is V8's default there, and naming it
 * costs each start ~15 ms, since V8 then refuses the code Node compiled its own modules into
 * (made with other flags) and compiles them again (bench/results-notes.md, 2026-11-29).
 * `--max-semi-space-size` on Node 22 and later (the Docker image's CMD). Measured on Node 24,
 * where the flag costs the start nothing; Node 22 is assumed to be alike.
 */
export function mainThreadNodeFlags(nodeVersion: string = process.versions.node): string[] {
  return Number(nodeVersion.split('.')[0]) >= 22 ? [`--max-semi-space-size=${MAIN_SEMI_SPACE_MB}`] : [];
}

/**
 * `callerUrl`: the caller's import.meta.url, which tells the bundle from the sources. The new thread
 * is told which better-sqlite3 build the calling thread uses (src/db/sqlite.ts), so that one
 * process never has two copies of SQLite on one file.
 */
export function startModuleWorker(name: string, callerUrl: string, workerData: unknown): Worker {
  // Loaded here, not imported: the server starts its threads after it listens (test/e2e/start-modules.test.ts).
  const { Worker } = process.getBuiltinModule('node:worker_threads');
  const options = { execArgv: [], workerData, resourceLimits: { maxYoungGenerationSizeMb: THREAD_YOUNG_GENERATION_MB }, env: { ...process.env, [SQLITE_BUILD_ENV]: sqliteBuild() } };
  if (!callerUrl.endsWith('.ts')) return new Worker(new URL(`./${name}.mjs`, callerUrl), options);
  const tsx = import.meta.resolve('tsx/esm/api');
  const module = new URL(`./${name}.ts`, callerUrl).href;
  const boot = `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(module)}); });`;
  return new Worker(boot, { ...options, eval: true });
}
