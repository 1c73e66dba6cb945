// Cold start (issue 14 point 5): wall time from spawning `node dist/reclib.cjs serve` (with npm
// start's flags) on the run's existing database to the first 200 from GET /healthz, against `node
// -e 0` spawned the same way (pinned to the server's core) until it exits. The two alternate, so a
// shared machine falls on both; the judged figure is the median of the per-pair differences.
// Beside it, not judged: spawn to the first answer of an API request sent right after that
// /healthz (a list page with the run's key), which includes loading the node adapter and undici,
// which the server defers past its first answers (src/http/node-server.ts), and the first request's
// way through Hono.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, SERVER_CORE, SERVER_NODE_FLAGS } from './processes';
import { median, round2 } from './stats';

export interface ColdStartResult {
  pairs: number;
  /** Node's flags the server was started with (absent in runs before they were recorded). */
  nodeFlags?: string[];
  /** Median and [min, max] wall time of each, ms. */
  server: { median: number; range: [number, number] };
  node: { median: number; range: [number, number] };
  /** server − node per pair: median and [min, max], ms. */
  extra: { median: number; range: [number, number] };
  /** Spawn to the first 200 of GET /api/v2/recordings?limit=1 sent after that /healthz: median and [min, max], ms. */
  api?: { median: number; range: [number, number] };
  /** api − node per pair: median and [min, max], ms. */
  apiExtra?: { median: number; range: [number, number] };
  /** Spawn to the first /healthz 200 of a start without V8's code cache (src/code-cache.ts; an empty cache folder), ms; the pairs then start with the cache it wrote (absent in runs before the cache). */
  firstStart?: number;
}

const START_TIMEOUT_MS = 30_000;

/** Spawns `args` under taskset on the server's core; resolves with the child once spawned. */
const spawnPinned = (args: string[], env: NodeJS.ProcessEnv = process.env) =>
  spawn('taskset', ['-c', SERVER_CORE, process.execPath, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });

/** ms from spawn to the exit of `node -e 0`. */
function nodeNoop(): Promise<number> {
  const t0 = performance.now();
  const child = spawnPinned(['-e', '0']);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(performance.now() - t0) : reject(new Error(`node -e 0 exited ${code}`))));
  });
}

/** GET /healthz until it answers 200 (a refused connection is retried at once). */
async function firstHealthy(url: string, deadline: number): Promise<void> {
  for (;;) {
    try {
      const res = await fetch(`${url}/healthz`);
      await res.arrayBuffer();
      if (res.status === 200) return;
    } catch {
      // not accepting yet
    }
    if (performance.now() > deadline) throw new Error(`${url}/healthz did not answer 200 within ${START_TIMEOUT_MS} ms`);
  }
}

/** GET /api/v2/recordings?limit=1 with `token`; throws unless 200. */
async function firstApiAnswer(url: string, token: string): Promise<void> {
  const res = await fetch(`${url}/api/v2/recordings?limit=1`, { headers: { authorization: `Bearer ${token}` } });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`GET /api/v2/recordings?limit=1 answered ${res.status} right after the start`);
}

/**
 * ms from spawn to the first 200 from /healthz, and with `token`, to the first answer of an API
 * request sent after it. The port is the one the server picked (--port 0),
 * read from its start-up line; the server is then stopped with SIGTERM and awaited, so the next
 * start finds the database closed, as after a restart.
 */
async function serverStart(db: string, env: NodeJS.ProcessEnv, token?: string): Promise<{ healthz: number; api?: number }> {
  const t0 = performance.now();
  const child = spawnPinned([...SERVER_NODE_FLAGS, 'dist/reclib.cjs', 'serve', '--db', db, '--host', '127.0.0.1', '--port', '0'], env);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let out = '';
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`serve did not print its URL within ${START_TIMEOUT_MS} ms:\n${out}`)), START_TIMEOUT_MS);
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        const m = /reclib listening on (http:\/\/\S+)/.exec(out);
        if (m?.[1]) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
      child.stderr.on('data', (c: Buffer) => (out += c.toString()));
      child.once('exit', (code) => reject(new Error(`serve exited with ${code} before answering:\n${out}`)));
    });
    await firstHealthy(url, t0 + START_TIMEOUT_MS);
    const healthz = performance.now() - t0;
    if (token === undefined) return { healthz };
    await firstApiAnswer(url, token);
    return { healthz, api: performance.now() - t0 };
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

const range = (xs: number[]): [number, number] => [round2(Math.min(...xs)), round2(Math.max(...xs))];

/**
 * `pairs` alternating measurements (which of the two goes first alternates too), after one
 * unmeasured pair to warm the OS cache (without V8's code cache) and a start without a code cache
 * (measured apart: with an empty cache folder of its own, which it fills for the pairs).
 */
export async function measureColdStart(db: string, pairs: number, log: (line: string) => void, token?: string): Promise<ColdStartResult> {
  const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-bench-code-cache-'));
  try {
    await nodeNoop();
    await serverStart(db, { ...process.env, NODE_DISABLE_COMPILE_CACHE: '1' }, token);
    const env = { ...process.env, NODE_COMPILE_CACHE: cacheDir, NODE_DISABLE_COMPILE_CACHE: '' };
    const firstStart = (await serverStart(db, env, token)).healthz;
    log(`cold start without a code cache (an empty cache folder): serve → first /healthz 200 ${firstStart.toFixed(1)} ms`);
    return { ...(await measurePairs(db, env, pairs, log, token)), firstStart: round2(firstStart) };
  } finally {
    fs.rmSync(cacheDir, { recursive: true, force: true });
  }
}

async function measurePairs(db: string, env: NodeJS.ProcessEnv, pairs: number, log: (line: string) => void, token?: string): Promise<ColdStartResult> {
  const server: number[] = [];
  const api: number[] = [];
  const node: number[] = [];
  const start = async () => {
    const s = await serverStart(db, env, token);
    server.push(s.healthz);
    if (s.api !== undefined) api.push(s.api);
  };
  for (let i = 0; i < pairs; i++) {
    if (i % 2) {
      node.push(await nodeNoop());
      await start();
    } else {
      await start();
      node.push(await nodeNoop());
    }
    const apiText = api[i] === undefined ? '' : `, first API answer ${api[i]!.toFixed(1)} ms`;
    log(`cold start ${i + 1}/${pairs}: serve → first /healthz 200 ${server[i]!.toFixed(1)} ms${apiText}, node -e 0 ${node[i]!.toFixed(1)} ms`);
  }
  const extra = server.map((s, i) => s - node[i]!);
  const apiExtra = api.map((a, i) => a - node[i]!);
  return {
    pairs,
    nodeFlags: SERVER_NODE_FLAGS,
    server: { median: round2(median(server)), range: range(server) },
    node: { median: round2(median(node)), range: range(node) },
    extra: { median: round2(median(extra)), range: range(extra) },
    ...(api.length ? { api: { median: round2(median(api)), range: range(api) }, apiExtra: { median: round2(median(apiExtra)), range: range(apiExtra) } } : {}),
  };
}
