// `npm run bench:create-ab -- [--shape device|import|get] [--seconds 5] [--rounds 3] [--size 100000] DIR...`:
// creates (or, with `--shape get`, gets by id of the corpus's recordings) through builds of the
// server side by side. Each DIR holds a build (a copy of dist/, e.g.
// `cp -r dist /tmp/before` before a change; a DIR inside the checkout finds node_modules and
// schema.sql as dist/ does); `DIR:--flag,--flag` adds node flags to that one (after SERVER_NODE_FLAGS).
// In each round every build serves, in turn, on a fresh copy of the cached corpus (bench/.cache,
// seeded by `npm run bench`), pinned to core 0: 2 s of warm-up, then `--seconds` of creates of the
// shape's bodies at 32 connections from core 1. Printed per run and as medians per build: requests/s
// and the CPU of each thread per request (main, writer, the rest: V8's helpers and the
// checkpointer), read from /proc/<pid>/task/*/stat, and the server's peak RSS (VmHWM). This is
// how bench/results-notes.md (2026-11-26 evening) split a create's cost between the threads. Not a
// test: CI does not run it.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CACHE_DIR, holdBenchLock, scrubOnce } from './cache';
import { cli, load, LOADER_CORE, ROOT, SERVER_CORE, SERVER_NODE_FLAGS } from './processes';
import { median } from './stats';

const { values: opt, positionals: builds } = parseArgs({
  allowPositionals: true,
  options: {
    shape: { type: 'string', default: 'device' },
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    size: { type: 'string', default: '100000' },
  },
});
if (builds.length === 0) throw new Error('name at least one build folder (a copy of dist/)');
if (opt.shape !== 'device' && opt.shape !== 'import' && opt.shape !== 'get') throw new Error('--shape is device, import or get');
const corpus = fs.readdirSync(CACHE_DIR).find((f) => f.startsWith(`corpus-${opt.size}-`) && f.endsWith('.db'));
if (!corpus) throw new Error(`no cached corpus of ${opt.size} recordings in ${CACHE_DIR}: run npm run bench -- --size ${opt.size} --seed-only first`);
const source = path.join(CACHE_DIR, corpus);
const { accountId } = JSON.parse(fs.readFileSync(source.replace(/\.db$/, '.json'), 'utf8')) as { accountId: string };
const bodies = opt.shape === 'get' ? source.replace(/\.db$/, '.ids.json') : path.join(CACHE_DIR, opt.shape === 'device' ? 'create-bodies.json' : 'create-import-bodies.json');
if (!fs.existsSync(bodies)) throw new Error(`${bodies} is missing: npm run bench writes it`);
holdBenchLock();
const db = path.join(CACHE_DIR, 'run', 'create-ab.db');
fs.mkdirSync(path.dirname(db), { recursive: true });

/** What a request is, in what is printed. */
const UNIT = opt.shape === 'get' ? 'get' : 'create';

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** CPU (ms) of each thread of `pid` so far. */
function threadCpu(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(tid, (Number(fields[11]) + Number(fields[12])) * TICK_MS);
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

/** The process's peak RSS so far, MB (VmHWM). */
function peakRssMb(pid: number): number {
  const m = /^VmHWM:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`/proc/${pid}/status has no VmHWM line`);
  return Number(m[1]) / 1024;
}

interface Run {
  rps: number;
  main: number;
  writer: number;
  rest: number;
  peakRss: number;
}

async function measure(build: string, tag: string): Promise<Run> {
  const [dir, flags] = build.split(':') as [string, string | undefined];
  for (const suffix of ['', '-wal', '-shm', '.secret', '.scrubbed']) fs.rmSync(db + suffix, { force: true });
  fs.copyFileSync(source, db);
  scrubOnce(db);
  const permissions = 'recordings:create,recordings:read';
  const { secret: token } = await cli<{ secret: string }>(['keys', 'create', '--db', db, '--account', accountId, '--name', 'create-ab', '--permissions', permissions]);
  const args = [...SERVER_NODE_FLAGS, ...(flags ? flags.split(',') : []), path.resolve(dir, 'reclib.cjs'), 'serve', '--db', db, '--host', '127.0.0.1', '--port', '0', '--rate-limit', '0'];
  const child = spawn('taskset', ['-c', SERVER_CORE, process.execPath, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`${build} exited with ${code}`)));
      child.stdout!.on('data', (c: Buffer) => {
        const m = /listening on (http:\/\/\S+)/.exec(c.toString());
        if (m?.[1]) resolve(m[1]);
      });
    });
    const spec = (seconds: number, key: string) => ({
      url, token, durationSec: seconds, connections: 32, dataFile: bodies,
      ...(opt.shape === 'get' ? { mode: 'byId' as const, path: '/api/v2/recordings/{id}' } : { mode: 'create' as const, path: '/api/v2/recordings' }),
      keyPrefix: `create-ab-${Date.now()}-${key}`, serverPid: child.pid!, serverCore: Number(SERVER_CORE), loaderCore: Number(LOADER_CORE),
    });
    await load(spec(2, `${tag}-warm`));
    const before = threadCpu(child.pid!);
    const result = await load(spec(Number(opt.seconds), tag));
    const after = threadCpu(child.pid!);
    const perCreate = (tid: string) => ((after.get(tid)! - (before.get(tid) ?? 0)) * 1000) / result.requests;
    // The main thread's id is the pid; the busiest other thread is the writer's.
    const others = [...after.keys()].filter((tid) => tid !== String(child.pid)).map(perCreate).sort((a, b) => b - a);
    return { rps: result.rps, main: perCreate(String(child.pid)), writer: others[0] ?? 0, rest: others.slice(1).reduce((s, x) => s + x, 0), peakRss: peakRssMb(child.pid!) };
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve)));
  }
}

const runs = new Map<string, Run[]>(builds.map((b) => [b, []]));
const f0 = (x: number) => x.toFixed(0);
for (let round = 0; round < Number(opt.rounds); round++) {
  for (const build of builds) {
    const r = await measure(build, `r${round}`);
    runs.get(build)!.push(r);
    console.log(`round ${round + 1} ${build}: ${f0(r.rps)} ${UNIT}s/s; CPU µs per ${UNIT}: main ${f0(r.main)}, writer ${f0(r.writer)}, rest ${f0(r.rest)}; peak RSS ${f0(r.peakRss)} MB`);
  }
}
console.log(`\n${opt.shape === 'get' ? 'gets by id' : `${opt.shape} creates`} at ${opt.size} recordings, medians of ${opt.rounds} rounds:`);
for (const [build, rs] of runs) {
  const m = (k: keyof Run) => f0(median(rs.map((r) => r[k])));
  const total = f0(median(rs.map((r) => r.main + r.writer + r.rest)));
  console.log(`  ${build}: ${m('rps')} ${UNIT}s/s (${rs.map((r) => f0(r.rps)).join(', ')}); CPU µs per ${UNIT} ${total} (main ${m('main')}, writer ${m('writer')}, rest ${m('rest')}); peak RSS ${m('peakRss')} MB`);
}
