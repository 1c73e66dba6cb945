// Starting a worker thread whose code is a typed module of its own (the checkpointer's, the
// library count's). In the bundle (dist/reclib.mjs) the module is the file esbuild built beside
// it, `dist/<name>.mjs`. From source (tests, `npx tsx bin/reclib.ts`) it is `<name>.ts` beside the
// caller, imported after tsx's loader is registered inside the thread: Node 20 does not apply
// `--import` loaders from a worker's execArgv to its main module. execArgv is empty either way,
// so none of the server's flags (a profiler's, say) reach the thread.
import { Worker } from 'node:worker_threads';

/** `callerUrl`: the caller's import.meta.url, which tells the bundle from the sources. */
export function startModuleWorker(name: string, callerUrl: string, workerData: unknown): Worker {
  if (!callerUrl.endsWith('.ts')) return new Worker(new URL(`./${name}.mjs`, callerUrl), { execArgv: [], workerData });
  const tsx = import.meta.resolve('tsx/esm/api');
  const module = new URL(`./${name}.ts`, callerUrl).href;
  const boot = `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(module)}); });`;
  return new Worker(boot, { eval: true, execArgv: [], workerData });
}
