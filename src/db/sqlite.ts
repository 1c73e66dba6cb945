// better-sqlite3, with its native addon loaded straight from its file.
//
// The bundle carries better-sqlite3's JavaScript (build.mjs); only the addon, a native file, stays
// in node_modules. Left to itself, better-sqlite3 finds the addon through the `bindings` package,
// which reads a stack trace to find the package's folder and tries a dozen paths; together with
// requiring the library's 13 files from node_modules that was ~15 ms of `reclib serve`'s start on
// this machine (`node -e` with and without it, medians of 25 starts each: loading the addon file by
// itself costs nothing measurable). The addon is where npm puts it: build/Release in the package
// (a prebuilt binary is downloaded there, a source build writes there). If it is somewhere else,
// better-sqlite3 looks for it through `bindings` as before (kept external in the bundle).
import BetterSqlite3 from 'better-sqlite3';
import { createRequire } from 'node:module';

const requireHere = createRequire(import.meta.url);
let addon: object | null | undefined;

/** The loaded addon, or null when it is not at build/Release (then better-sqlite3 finds it). */
function nativeBinding(): object | null {
  if (addon === undefined) {
    try {
      addon = requireHere(requireHere.resolve('better-sqlite3/build/Release/better_sqlite3.node')) as object;
    } catch {
      addon = null;
    }
  }
  return addon;
}

/** `new Database(file, options)` of better-sqlite3, with the addon loaded as above. */
export function openSqlite(file: string, options: BetterSqlite3.Options = {}): BetterSqlite3.Database {
  const binding = nativeBinding();
  return new BetterSqlite3(file, binding ? { ...options, nativeBinding: binding as never } : options);
}
