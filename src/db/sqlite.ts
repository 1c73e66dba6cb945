// better-sqlite3, with its native addon loaded straight from its file.
//
// The bundle carries better-sqlite3's JavaScript (build.mjs); only the addon, a native file, stays
// in node_modules. Left to itself, better-sqlite3 finds the addon through the `bindings` package,
// which reads a stack trace to find the package's folder and tries a dozen paths; together with
// requiring the library's 13 files from node_modules that was ~10 ms of `reclib serve`'s start
// (medians of 20 alternating starts of the bundle, to the first /healthz and to the first API
// answer; loading the addon file by itself costs nothing measurable). The addon is where npm puts
// it: build/Release in the package (a prebuilt binary is downloaded there, a source build writes
// there). Only when it is not there (a debug build, say) is it looked for through `bindings`, from
// better-sqlite3's own folder as better-sqlite3 itself would (from the bundle, `bindings` would
// search reclib's folder instead).
// An addon that is there but does not load (built for another Node version) fails with Node's own
// message, which says to rebuild it.
//
// package.json pins better-sqlite3's exact version: the bundled JavaScript and the installed
// addon talk through an interface private to better-sqlite3, so both must be of one version.
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

/** `new Database(file, options)` of better-sqlite3, with the addon loaded as above. */
export function openSqlite(file: string, options: BetterSqlite3.Options = {}): BetterSqlite3.Database {
  return new BetterSqlite3(file, { ...options, nativeBinding: nativeBinding() as never });
}
