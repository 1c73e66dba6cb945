// Run by build.mjs after a build: `node scripts/warm-code-cache.mjs DIST`. A start without V8's code
// cache parses and compiles the whole program (~30 ms more on Node 20); this starts the server in
// DIST once, as `npm start` does (its Node flags: V8 keeps a cache per set of flags), on a throwaway
// database on 127.0.0.1, asks /healthz and stops it, so that the code cache (src/code-cache.ts)
// holds what a server's start compiles, for the main thread and the writer thread, and the first
// `npm start` after `npm ci` starts as quickly as the next ones. (A cache written by a shorter
// command, `--version`, holds less of it: it is used, not replaced, and each start was ~4 ms
// slower.) Exits 0 when the server answered and stopped; build.mjs ignores a failure.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The whole warm-up's limit; build.mjs waits longer, so that this script always ends its server itself. */
const LIMIT_MS = 20_000;
/** After /healthz: the writer thread starts ~250 ms after the server listens. */
const WRITER_START_MS = 1_000;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.resolve(process.argv[2] ?? path.join(root, 'dist'));
const start = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).scripts.start;
const flags = /^node ((?:--\S+ )*)dist\/reclib\.cjs serve$/.exec(start)?.[1]?.trim().split(' ').filter(Boolean) ?? [];
// None of the developer's settings: a port, a metrics token or a public URL would change the start.
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('RECLIB_') && k !== 'PORT'));

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-warm-'));
const args = [...flags, path.join(dist, 'reclib.cjs'), 'serve', '--db', path.join(dir, 'warm.db'), '--host', '127.0.0.1', '--port', '0', '--deliveries', 'off'];
const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'ignore'] });
const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
const limit = setTimeout(() => child.kill('SIGKILL'), LIMIT_MS);
try {
  const url = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const m = /reclib listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`the server exited (${code}) before listening`)));
  });
  const res = await fetch(`${url}/healthz`);
  if (res.status !== 200) throw new Error(`/healthz answered ${res.status}`);
  await new Promise((resolve) => setTimeout(resolve, WRITER_START_MS));
  child.kill('SIGTERM');
  const code = await exited;
  if (code !== 0) throw new Error(`the server exited ${code}`);
} catch (err) {
  process.exitCode = 1;
  console.error(`warm-code-cache: ${err.message}`);
  child.kill('SIGKILL');
  await exited;
} finally {
  clearTimeout(limit);
  fs.rmSync(dir, { recursive: true, force: true });
}
