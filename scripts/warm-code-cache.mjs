// Run by build.mjs after a build: `node scripts/warm-code-cache.mjs DIST`. The first start after a
// build would parse and compile the whole program (~30 ms more on Node 20); this runs the command
// in DIST once with `npm start`'s Node flags (V8 keeps a cache per set of flags), so that V8's code
// cache (src/code-cache.ts) holds the program and the first `npm start` after `npm ci` starts as
// quickly as the next ones. Exits with the command's status; build.mjs ignores a failure.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.resolve(process.argv[2] ?? path.join(root, 'dist'));
const start = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).scripts.start;
const flags = /^node ((?:--\S+ )*)dist\/reclib\.cjs serve$/.exec(start)?.[1]?.trim().split(' ').filter(Boolean) ?? [];
execFileSync(process.execPath, [...flags, path.join(dist, 'reclib.cjs'), '--version'], { stdio: 'ignore', timeout: 30_000 });
