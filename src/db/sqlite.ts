// better-sqlite3: its Node-API build on Node 22 and later, else its classic build with the native
// addon loaded straight from its file.
//
// Two builds, chosen by Node's version. better-sqlite3 up to 12.x wraps its objects in Node's own
// `node::ObjectWrap`, whose destructor changed in Node 24.19: a statement or connection collected
// when no Node environment is current (at exit, as a worker thread ends, in some collections)
// aborts the process (SIGABRT, "Assertion failed: (env) != nullptr" in
// RemoveEnvironmentCleanupHook; nodejs/node#65446, WiseLibs/better-sqlite3#1515). On Node 24.21,
// 22 of the 107 test files aborted so, and a plain loop of inserts aborted in its middle
// (bench/results-notes.md, "On Node 24"). better-sqlite3 13 is built on Node-API, which has no
// such hook, and ships its prebuilt addons inside the package; it needs Node 22 or later (on Node
// 20 it crashes at once). So Node 22 and later use 13.x, installed under the alias
// `better-sqlite3-napi` and loaded from node_modules as it is (not bundled); Node 20 keeps 12.x,
// bundled, as below. Their JavaScript API is the same; their SQLite versions may differ by a
// release (both with FTS5 and the same compile options).
//
// 12.x (Node 20): the bundle carries its JavaScript (build.mjs); only the addon, a native file,
// stays in node_modules. Left to itself, better-sqlite3 finds the addon through the `bindings`
// package, which reads a stack trace to find the package's folder and tries a dozen paths;
// together with requiring the library's 13 files from node_modules that was ~10 ms of `reclib
// serve`'s start (medians of 20 alternating starts of the bundle, to the first /healthz and to the
// first API answer; loading the addon file by itself costs nothing measurable). The addon is where
// npm puts it: build/Release in the package (a prebuilt binary is downloaded there, a source build
// writes there). Only when it is not there (a debug build, say) is it looked for through
// `bindings`, from better-sqlite3's own folder as better-sqlite3 itself would (from the bundle,
// `bindings` would search reclib's folder instead).
// An addon that is there but does not load (built for another Node version) fails with Node's own
// message, which says to rebuild it.
//
// package.json pins 12.x's exact version: the bundled JavaScript and the installed addon talk
// through an interface private to better-sqlite3, so both must be of one version.
import BetterSqlite3 from 'better-sqlite3';
import { createRequire } from 'node:module';
import path from 'node:path';

const requireHere = createRequire(import.meta.url);
let addon: object | undefined;

function nativeBinding(): object {
  if (addon !== undefined) return addon;
  let file: string | undefined;
  try {
    file = requireHere.resolve('better-sqlite3/build/Release/better_sqlite3.node');
  } catch (e) {
    if ((e as { code?: string }).code !== 'MODULE_NOT_FOUND') throw e;
  }
  if (file !== undefined) return (addon = requireHere(file) as object);
  const packageJson = requireHere.resolve('better-sqlite3/package.json');
  const bindings = createRequire(packageJson)('bindings') as (o: { bindings: string; module_root: string }) => object;
  return (addon = bindings({ bindings: 'better_sqlite3.node', module_root: path.dirname(packageJson) }));
}

/** The first major version of Node on which better-sqlite3's Node-API build (13.x) is used. */
const NAPI_BUILD_FROM_NODE = 22;
/** The package name that build is installed under (package.json: `npm:better-sqlite3@13…`). */
export const NAPI_PACKAGE = 'better-sqlite3-napi';

/** Whether Node `version` (process.versions.node) uses better-sqlite3's Node-API build. */
export const usesNapiBuild = (version: string): boolean => Number(version.split('.')[0]) >= NAPI_BUILD_FROM_NODE;

/** Which of the two builds a thread uses. */
export type SqliteBuild = 'napi' | 'classic';
/** The package a build is installed as. */
export const sqlitePackage = (build: SqliteBuild): string => (build === 'napi' ? NAPI_PACKAGE : 'better-sqlite3');
/** The variable through which a worker thread is told its build (startModuleWorker sets it in the thread's env). */
export const SQLITE_BUILD_ENV = 'RECLIB_SQLITE_BUILD';
/** Errors after which the classic build serves: the package or its addon for this platform is missing, or the addon does not load here. */
const FALLBACK_CODES = new Set(['MODULE_NOT_FOUND', 'ERR_DLOPEN_FAILED']);

let napiBuild: typeof BetterSqlite3 | null | undefined;

/**
 * better-sqlite3's Node-API build when this thread uses it; else null.
 *
 * The main thread decides: the Node-API build where Node is 22 or later and it loads, else the
 * classic one. It does not load when it is not installed or has no prebuilt addon for this
 * platform (it ships linux, linuxmusl, darwin and win32 on x64 and arm64): then the classic build
 * serves, with a warning, as npm compiles that one at install where no prebuilt addon fits. Any
 * other error is thrown.
 *
 * A worker thread uses the build its starter names (SQLITE_BUILD_ENV), or fails: each build links
 * its own SQLite, and two copies of SQLite in one process on one file do not see each other's
 * POSIX locks (closing a file in one drops the locks the other holds), which can corrupt it
 * (sqlite.org/howtocorrupt.html, 2.2.1). A thread started without being told decides as the main
 * thread does.
 */
function napi(): typeof BetterSqlite3 | null {
  if (napiBuild !== undefined) return napiBuild;
  const told = process.env[SQLITE_BUILD_ENV];
  // node:worker_threads only where the answer matters: the main thread is not told (test/e2e/start-modules.test.ts).
  const worker = told !== undefined && !process.getBuiltinModule('node:worker_threads').isMainThread;
  const plan = buildPlan(process.versions.node, worker, told);
  if (plan === 'classic') return (napiBuild = null);
  try {
    const Napi = requireHere(NAPI_PACKAGE) as typeof BetterSqlite3;
    new Napi(':memory:').close(); // loads its addon
    return (napiBuild = Napi);
  } catch (e) {
    const message = (e as Error).message.split('\n')[0];
    if (plan === 'napi') throw new Error(`reclib: ${NAPI_PACKAGE} (better-sqlite3 13), which the main thread uses, did not load in this thread (${message})`);
    if (!FALLBACK_CODES.has((e as { code?: string }).code ?? '')) throw e;
    process.emitWarning(`reclib: ${NAPI_PACKAGE} (better-sqlite3 13) did not load (${message}); using better-sqlite3 12, which can abort the process on Node 24.19 and later`);
    return (napiBuild = null);
  }
}

/**
 * How a thread picks its build: 'classic'; 'napi' (or fail); 'napi-or-classic' (the Node-API
 * build, or the classic one with a warning where that does not load). `told`: SQLITE_BUILD_ENV,
 * read in worker threads only; a value that names no build this Node can run is refused.
 */
export function buildPlan(nodeVersion: string, worker: boolean, told: string | undefined): 'classic' | 'napi' | 'napi-or-classic' {
  if (worker && told !== undefined) {
    if (told === 'classic') return 'classic';
    if (told === 'napi' && usesNapiBuild(nodeVersion)) return 'napi';
    throw new Error(`reclib: ${SQLITE_BUILD_ENV}=${JSON.stringify(told)} names no better-sqlite3 build this thread can use on Node ${nodeVersion}`);
  }
  return usesNapiBuild(nodeVersion) ? 'napi-or-classic' : 'classic';
}

/** The build this thread uses (deciding it now if no connection was opened yet). */
export function sqliteBuild(): SqliteBuild {
  return napi() === null ? 'classic' : 'napi';
}

/** `new Database(file, options)` of better-sqlite3: the Node-API build where Node uses it, else the classic one with the addon loaded as above. */
export function openSqlite(file: string, options: BetterSqlite3.Options = {}): BetterSqlite3.Database {
  const Napi = napi();
  if (Napi !== null) return new Napi(file, options);
  return new BetterSqlite3(file, { ...options, nativeBinding: nativeBinding() as never });
}
