// Bundles server and CLI into one file, dist/reclib.program.cjs, run by the `reclib` command
// dist/reclib.cjs (better-sqlite3's JavaScript included; its native addon is loaded from node_modules,
// src/db/sqlite.ts). schema.sql is read at run time from beside dist/.
// The web app (src/web) is a second entry: dist/app/ with content-hashed names, a precompressed
// .gz and .br beside each file, and manifest.json that src/http/web-app.ts reads.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import zlib from 'node:zlib';

/**
 * Node's own modules reach the bundle through require(), not import. An import of a built-in module
 * builds its ESM facade, which reads every export, and some exports are getters that load modules
 * of their own: on Node 24 node:http's load undici, and with it tls, http2, zlib and assert;
 * node:crypto's load webcrypto. require() hands over the module as it is; esbuild's interop reads
 * an export where the code uses it. With https, dns and worker_threads loaded at first use, this
 * took a Node 24 start to listening from 93.5 to 65.0 ms on a library of 100,000, and ~3 ms off
 * Node 20's (bench/results-notes.md, 2026-11-27; test/e2e/start-modules.test.ts). `fs` and
 * `node:fs` become one module.
 */
const builtinsByRequire = {
  name: 'builtins-by-require',
  setup(b) {
    const bare = builtinModules.filter((name) => !name.startsWith('node:')).join('|');
    b.onResolve({ filter: new RegExp(`^(node:.+|${bare})$`) }, (args) =>
      args.kind === 'import-statement' ? { path: args.path.startsWith('node:') ? args.path : `node:${args.path}`, namespace: 'node-builtin' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'node-builtin' }, (args) => ({ contents: `module.exports = require(${JSON.stringify(args.path)});`, loader: 'js' }));
  },
};

/**
 * Modules the build makes programs of their own (dist/NAME.program.cjs), run with V8's code cache
 * (src/code-cache.ts) when they are first imported, rather than text of every program that imports
 * them: a start reads, keeps and compiles nothing of them. Each is imported only with import() (or
 * from modules imported so), and holds its own copy of whatever it imports, so it must share no
 * state with the rest: the MCP SDK with its zod and ajv, ~480 KB of the ~1.17 MB the server's
 * program was, and prom-client, ~100 KB, which only a server with a metrics token loads
 * (bench/results-notes.md, 2026-11-27).
 */
const LAZY_PROGRAMS = { 'mcp-sdk': 'src/mcp/sdk.ts', 'prom-client': 'src/observe/prom-client.ts' };
const lazyPrograms = {
  name: 'lazy-programs',
  setup(b) {
    const byFile = new Map(Object.entries(LAZY_PROGRAMS).map(([name, file]) => [path.resolve(file).replace(/\.ts$/, ''), name]));
    const bases = [...new Set(Object.values(LAZY_PROGRAMS).map((file) => path.basename(file, '.ts')))].join('|');
    // With `.js` too: TypeScript's Bundler resolution, and esbuild, take `./sdk.js` for sdk.ts.
    b.onResolve({ filter: new RegExp(`^\\.{1,2}/(.*/)?(${bases})(\\.[jt]s)?$`) }, (args) => {
      // Relative paths only: `prom-client` bare is the package the module of that name re-exports.
      const name = byFile.get(path.resolve(args.resolveDir, args.path).replace(/\.[jt]s$/, ''));
      // The program's own build has the module as its entry point.
      return name === undefined || args.kind === 'entry-point' ? undefined : { path: name, namespace: 'lazy-program' };
    });
    b.onLoad({ filter: /.*/, namespace: 'lazy-program' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(path.resolve('src/code-cache.ts'))}).runWithCodeCache(require('node:url').pathToFileURL(require('node:path').join(__dirname, ${JSON.stringify(`${args.path}.program.cjs`)})));`,
      loader: 'js',
      resolveDir: path.resolve('.'),
    }));
  },
};

/**
 * The Node side, for Node 20. better-sqlite3's JavaScript is bundled (src/db/sqlite.ts hands it its
 * addon); `bindings`, which its code would require otherwise, stays external.
 */
const nodeBundle = {
  bundle: true, plugins: [builtinsByRequire], platform: 'node', target: 'node20', external: ['bindings'], sourcemap: true, logLevel: 'warning',
  // Less text to parse at every start; names are kept (the source map has the rest).
  minifyWhitespace: true, minifySyntax: true,
};

/** ES modules (the loaders and the small worker threads' files). */
const esmBundle = {
  ...nodeBundle, format: 'esm',
  // CommonJS code in the bundle (better-sqlite3) calls require() for Node's own modules.
  banner: {
    js: "import { createRequire as __reclibRequire } from 'node:module'; const require = __reclibRequire(import.meta.url);",
  },
};

/**
 * The programs a loader runs with V8's code cache (src/code-cache.ts): CommonJS, since only a script
 * takes cached data, in one file each. Code loaded with import() (the admin commands, the web app's
 * server side) stays in the file but is evaluated only when imported, and V8
 * only pre-parses it (with the cache, not even that). import.meta is an object with the program's
 * file URL as `url` (nothing else: import.meta.resolve is used only from the sources).
 */
const programBundle = {
  ...nodeBundle, format: 'cjs', plugins: [builtinsByRequire, lazyPrograms],
  define: { 'import.meta': '__reclibImportMeta' },
  // "use strict" first: esbuild writes its own after the banner, where it is a mere expression, and the program would run in sloppy mode (its sources are ES modules, strict).
  banner: { js: "'use strict'; const __reclibImportMeta = { url: require('node:url').pathToFileURL(__filename).href };" },
};

fs.rmSync('dist', { recursive: true, force: true });
// The CLI and server (dist/reclib.program.cjs, run by the `reclib` command dist/reclib.cjs), and the
// writer thread's module (src/writer-thread.ts; dist/writer-thread-worker.program.cjs, run by
// dist/writer-thread-worker.mjs). The command's loader is CommonJS: an ES module as the entry
// costs Node 20 ~7 ms of loading its ES module loader; the writer thread starts after the server
// listens, from an ES module like every worker thread's file.
for (const [entry, name, loader] of [['bin/reclib.ts', 'reclib', 'cjs'], ['src/writer-thread-worker.ts', 'writer-thread-worker', 'esm']]) {
  await build({ ...programBundle, entryPoints: [entry], outfile: `dist/${name}.program.cjs` });
  const define = { RECLIB_PROGRAM: JSON.stringify(`${name}.program.cjs`) };
  const loaderBundle = loader === 'cjs' ? programBundle : esmBundle;
  await build({ ...loaderBundle, entryPoints: ['bin/load-program.ts'], outfile: `dist/${name}.${loader === 'cjs' ? 'cjs' : 'mjs'}`, define: { ...loaderBundle.define, ...define } });
}
for (const [name, entry] of Object.entries(LAZY_PROGRAMS)) await build({ ...programBundle, entryPoints: [entry], outfile: `dist/${name}.program.cjs` });
// Command lines written before the command was dist/reclib.cjs (an MCP client's, a service's).
fs.writeFileSync('dist/reclib.mjs', "#!/usr/bin/env node\n// The reclib command is dist/reclib.cjs; this file keeps older command lines working.\nimport './reclib.cjs';\n", { mode: 0o755 });

// The WAL checkpointer's worker thread runs a file of its own, found beside the bundle
// (src/db/checkpointer.ts).
// So does the library count's (src/observe/library-count.ts).
await build({ ...esmBundle, entryPoints: ['src/db/checkpointer-worker.ts'], outfile: 'dist/checkpointer-worker.mjs' });
await build({ ...esmBundle, entryPoints: ['src/observe/library-count-worker.ts'], outfile: 'dist/library-count-worker.mjs' });

/** The most JavaScript the browser may download, gzipped: the app must start quickly on a phone on a slow network. */
const JS_BUDGET_GZIP = 60 * 1024;
const APP_DIR = 'dist/app';
fs.rmSync(APP_DIR, { recursive: true, force: true });
const app = await build({
  entryPoints: ['src/web/main.tsx'],
  outdir: APP_DIR,
  entryNames: '[name]-[hash]',
  assetNames: '[name]-[hash]',
  bundle: true,
  minify: true,
  platform: 'browser',
  target: ['chrome110', 'firefox110', 'safari16'],
  format: 'esm',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  metafile: true,
  legalComments: 'none',
  logLevel: 'warning',
});
const files = Object.keys(app.metafile.outputs).map((f) => path.basename(f));
// The icon is not imported by code: copied under a content-hashed name like the rest.
const iconSvg = fs.readFileSync('src/web/icon.svg');
const icon = `icon-${createHash('sha256').update(iconSvg).digest('hex').slice(0, 8)}.svg`;
fs.writeFileSync(path.join(APP_DIR, icon), iconSvg);
files.push(icon);
const manifest = {
  script: files.find((f) => f.endsWith('.js')),
  style: files.find((f) => f.endsWith('.css')),
  icon,
  files,
};
let jsGzip = 0;
for (const f of files) {
  const raw = fs.readFileSync(path.join(APP_DIR, f));
  const gz = zlib.gzipSync(raw, { level: 9 });
  fs.writeFileSync(path.join(APP_DIR, `${f}.gz`), gz);
  fs.writeFileSync(path.join(APP_DIR, `${f}.br`), zlib.brotliCompressSync(raw, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }));
  if (f.endsWith('.js')) jsGzip += gz.length;
}
fs.writeFileSync(path.join(APP_DIR, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
console.log(`web app: ${files.join(', ')}; JavaScript ${(jsGzip / 1024).toFixed(1)} KB gzipped (budget ${JS_BUDGET_GZIP / 1024} KB)`);
if (jsGzip > JS_BUDGET_GZIP) {
  console.error('web app: the JavaScript is over its budget');
  process.exit(1);
}

// V8's code cache for the first `npm start` (scripts/warm-code-cache.mjs says why). Best effort.
try {
  execFileSync(process.execPath, ['scripts/warm-code-cache.mjs', 'dist'], { stdio: 'ignore', timeout: 30_000 }); // the script's own limit is 20 s
} catch {
  // no cache yet; the first start writes it
}
