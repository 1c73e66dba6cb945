// Bundles server and CLI into one file, dist/reclib.mjs (better-sqlite3 stays external: it is a
// native addon). schema.sql is read at run time from beside dist/.
import { build } from 'esbuild';

await build({
  entryPoints: ['bin/reclib.ts'],
  outfile: 'dist/reclib.mjs',
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  external: ['better-sqlite3'],
  sourcemap: true,
  banner: {
    js: "import { createRequire as __reclibRequire } from 'node:module'; const require = __reclibRequire(import.meta.url);",
  },
  logLevel: 'warning',
});

// The WAL checkpointer's worker thread runs a file of its own, found beside the bundle
// (src/db/checkpointer.ts).
await build({
  entryPoints: ['src/db/checkpointer-worker.ts'],
  outfile: 'dist/checkpointer-worker.mjs',
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  external: ['better-sqlite3'],
  sourcemap: true,
  logLevel: 'warning',
});
