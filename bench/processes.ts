// Child processes of the benchmark: the server under test and the baseline (pinned to core 0),
// the load generator (pinned to core 1) and one-shot CLI calls. Everything listens on loopback.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { LoadResult, LoadSpec } from './load';
import { mainThreadNodeFlags } from '../src/worker-thread';

export const ROOT = path.resolve(import.meta.dirname, '..');
export const SERVER_CORE = '0';
export const LOADER_CORE = '1';
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 20_000;

export interface Served {
  url: string;
  pid: number;
  child: ChildProcess;
  log: string[];
}

/** Starts `args` under taskset and resolves once a stdout line matches `ready` (its first group is the URL). */
function startPinned(core: string, args: string[], ready: RegExp): Promise<Served> {
  const child = spawn('taskset', ['-c', core, process.execPath, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const log: string[] = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${args.join(' ')} did not start within ${START_TIMEOUT_MS} ms:\n${log.join('')}`));
    }, START_TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      const text = chunk.toString();
      log.push(text);
      if (log.length > 200) log.splice(0, log.length - 200);
      const m = ready.exec(text);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve({ url: m[1], pid: child.pid!, child, log });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (c: Buffer) => log.push(c.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${args.join(' ')} exited with ${code}:\n${log.join('')}`));
    });
  });
}

/** The main thread's V8 flags on this Node (src/worker-thread.ts): none on Node 20, as `npm start` runs it; the Docker image's on Node 22 and later, as the README says to start it there. The baseline gets them too. */
export const SERVER_NODE_FLAGS = mainThreadNodeFlags();

/** `node dist/reclib.cjs serve` on `db` with SERVER_NODE_FLAGS, rate limit off, optionally writing a CPU profile on exit; `extraArgs` go to serve. */
export function startServer(db: string, cpuProfDir?: string, extraArgs: string[] = []): Promise<Served> {
  const prof = cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', cpuProfDir] : [];
  return startPinned(
    SERVER_CORE,
    // loop-delay.mjs: the server's event-loop delay histogram, read by the stall measurement.
    [...SERVER_NODE_FLAGS, ...prof, '--import', './bench/loop-delay.mjs', 'dist/reclib.cjs', 'serve', '--db', db, '--host', '127.0.0.1', '--port', '0', '--rate-limit', '0', ...extraArgs],
    /reclib listening on (http:\/\/\S+)/,
  );
}

export function startBaseline(db: string, cpuProfDir?: string): Promise<Served> {
  const prof = cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', cpuProfDir] : [];
  return startPinned(SERVER_CORE, [...SERVER_NODE_FLAGS, ...prof, '--import', 'tsx', 'bench/baseline-server.ts', db], /baseline listening on (http:\/\/\S+)/);
}

/** SIGTERM, then SIGKILL if the process has not exited in time. */
export function stop(s: Served): Promise<number | null> {
  if (s.child.exitCode !== null) return Promise.resolve(s.child.exitCode);
  return new Promise((resolve) => {
    const timer = setTimeout(() => s.child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    s.child.removeAllListeners('exit');
    s.child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
    s.child.kill('SIGTERM');
  });
}

/** Peak and current resident memory of a process, in MB (from /proc/<pid>/status). */
export function memoryMb(pid: number): { peakRssMb: number; rssMb: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { peakRssMb: Math.round(kb('VmHWM') / 1024), rssMb: Math.round(kb('VmRSS') / 1024) };
}

function collect(cmd: string, args: string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${err}`))));
    child.stdin.end(input ?? '');
  });
}

/** One admin command of the built CLI with --json (CONTRACT §2): its one JSON object. */
export async function cli<T>(args: string[]): Promise<T> {
  return JSON.parse(await collect(process.execPath, ['dist/reclib.cjs', ...args, '--json'])) as T;
}

/** One load-generator run in its own process on the other core. */
export async function load(spec: LoadSpec): Promise<LoadResult> {
  const out = await collect('taskset', ['-c', LOADER_CORE, process.execPath, '--import', 'tsx', 'bench/load.ts', JSON.stringify(spec)]);
  return JSON.parse(out.trim().split('\n').pop()!) as LoadResult;
}

export async function build(): Promise<void> {
  await collect(process.execPath, ['build.mjs']);
}
