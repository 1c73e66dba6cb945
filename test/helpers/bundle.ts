// Running the built bundle (dist/reclib.cjs) as a child process: the CLI once per call, and
// `serve` in the background until stopped. `npm test` builds the bundle first; when a test file
// is run on its own, the bundle is (re)built here if it is missing or older than the sources.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BUNDLE = path.join(ROOT, 'dist/reclib.cjs');

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && /\.(ts|tsx|css)$/.test(entry.name)) newest = Math.max(newest, fs.statSync(path.join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

let checked = false;
export function ensureBundle(): string {
  if (checked) return BUNDLE;
  // The checkpointer's worker is built beside the bundle; without it serve runs without the worker.
  const built = fs.existsSync(BUNDLE) && ['checkpointer-worker', 'library-count-worker'].every((w) => fs.existsSync(path.join(ROOT, `dist/${w}.mjs`))) ? fs.statSync(BUNDLE).mtimeMs : 0;
  // build.mjs too: it shapes the bundle (test/e2e/start-modules.test.ts tests what it does).
  if (built < Math.max(newestSource(path.join(ROOT, 'src')), newestSource(path.join(ROOT, 'bin')), fs.statSync(path.join(ROOT, 'build.mjs')).mtimeMs)) {
    const r = spawnSync(process.execPath, ['build.mjs'], { cwd: ROOT, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`building the bundle failed: ${r.stderr}`);
  }
  checked = true;
  return BUNDLE;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

let codeCache: string | undefined;

/**
 * The code cache folder (src/code-cache.ts) of this test file's children: its own, removed when the
 * file's process exits. In the system's shared one, each copy of the bundle a test makes (each in
 * a folder of its own, so each with a cache file of its own) left ~0.5 MB behind, for the week
 * after which reclib removes a cache nobody uses.
 */
export function testCodeCache(): string {
  if (codeCache === undefined) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-test-code-cache-'));
    process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
    codeCache = dir;
  }
  return codeCache;
}

/** Env for children: no RECLIB_* settings leak in from the developer's shell, and the code cache is the test file's own (`extra` may name another). */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('RECLIB_') && k !== 'PORT') env[k] = v;
  return { ...env, NODE_COMPILE_CACHE: testCodeCache(), ...extra };
}

/** Runs `reclib <args>` from the bundle (`opts.bundle`: a copy of it elsewhere; `opts.nodeArgs`: Node's own, before it) and waits for it to exit. */
export function runCli(args: string[], opts: { env?: Record<string, string>; input?: string; cwd?: string; bundle?: string; nodeArgs?: string[] } = {}): Promise<CliResult> {
  ensureBundle();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), opts.bundle ?? BUNDLE, ...args], { cwd: opts.cwd ?? ROOT, env: cleanEnv(opts.env) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(opts.input ?? '');
  });
}

/** `runCli` with --json, parsed; throws with stderr when the command fails. */
export async function cliJson<T = Record<string, any>>(args: string[], opts: { env?: Record<string, string>; input?: string } = {}): Promise<T> { // eslint-disable-line @typescript-eslint/no-explicit-any -- callers read arbitrary shapes
  const r = await runCli([...args, '--json'], opts);
  if (r.code !== 0) throw new Error(`reclib ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

export interface ServeProcess {
  child: ChildProcess;
  url: string;
  /** Everything printed on stdout so far. */
  stdout(): string;
  stderr(): string;
  /** Sends a signal and waits for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** The exit code, once the process ended by itself or otherwise. */
  exited: Promise<number | null>;
}

/**
 * Starts `reclib serve --port 0 <args>` (`opts.nodeArgs`: Node's own, before the bundle; `opts.bundle`
 * and `opts.cwd`: a copy of it elsewhere, and where it runs; `opts.wrapper`: a command that runs
 * Node, such as `strace -f -o FILE`, whose process `child` then is) and resolves once it prints its URL.
 */
export function startServe(args: string[], opts: { env?: Record<string, string>; timeoutMs?: number; nodeArgs?: string[]; bundle?: string; cwd?: string; wrapper?: string[] } = {}): Promise<ServeProcess> {
  ensureBundle();
  const [command, ...commandArgs] = [...(opts.wrapper ?? []), process.execPath, ...(opts.nodeArgs ?? []), opts.bundle ?? BUNDLE, 'serve', '--port', '0', ...args];
  const child = spawn(command!, commandArgs, { cwd: opts.cwd ?? ROOT, env: cleanEnv(opts.env) });
  let out = '';
  let err = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`serve did not start: ${out}${err}`));
    }, opts.timeoutMs ?? 8_000);
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /reclib listening on (http:\/\/\S+)/.exec(out);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve({
          child,
          url: m[1],
          stdout: () => out,
          stderr: () => err,
          stop: (signal = 'SIGTERM') => {
            if (child.exitCode === null && child.signalCode === null) child.kill(signal);
            return exited;
          },
          exited,
        });
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code} before listening: ${out}${err}`));
    });
  });
}

/** The first-run hint's commands (its lines indented by two spaces), trimmed, once `serve` has printed the last. */
export async function hintCommands(server: ServeProcess): Promise<string[]> {
  for (let i = 0; i < 50 && !server.stdout().includes('--password-stdin'); i++) await new Promise((r) => setTimeout(r, 20));
  return server
    .stdout()
    .split('\n')
    .filter((l) => /^ {2}\S/.test(l))
    .map((l) => l.trim());
}

/**
 * An install of its own in `install` (made if missing), which a server can start from (dist/,
 * schema.sql beside it, node_modules), so that its files can be touched without touching dist/:
 * its dist/ folder.
 */
export function installCopy(install: string): string {
  const copy = path.join(install, 'dist');
  ensureBundle();
  fs.cpSync(path.join(ROOT, 'dist'), copy, { recursive: true, filter: (f) => !f.endsWith('.map') });
  fs.copyFileSync(path.join(ROOT, 'schema.sql'), path.join(install, 'schema.sql'));
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(install, 'node_modules'));
  return copy;
}
