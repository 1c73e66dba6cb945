// The in-process ceiling for creates (issue 14 point 3): the same create bodies the server's create
// scenarios send, inserted through the project's own RecordingService in this process (no HTTP, no
// threads handing requests over), 32 creates per transaction, synchronous=FULL (the default), with
// the checkpointer thread that `serve` runs, on a copy of the run's database made just before the
// server starts (same corpus, same API key). The server's creates/s divided by this is the ratio
// the issue judges (≥ 0.6), for both shapes (bench/create-shapes.ts).
//
// It runs as one long-lived process pinned to the server's core, started once and warmed up like
// the server (its SQLite page cache stays warm between rounds); run.ts measures it right after the
// server's run of the same shape in each round, with the server and the baseline stopped
// (SIGSTOP), and keeps it stopped the rest of the time. The parent talks to it in JSON lines.
//
// As a process: `node --import tsx bench/ceiling.ts '<CeilingArgs JSON>'`, then one command per
// stdin line: {"shape":"device","seconds":5,"tag":"r0"} → one CeilingRun line; "quit" ends it.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { pathToFileURL } from 'node:url';
import { fsyncFile } from './cache';
import type { CreateShape } from './create-shapes';
import { ROOT, SERVER_CORE, SERVER_NODE_FLAGS } from './processes';

/** Creates per transaction, as the issue defines the ceiling (the seeder uses 2,000). */
export const CEILING_GROUP = 32;

export interface CeilingArgs {
  db: string;
  token: string;
  bodies: Record<CreateShape, string>;
  keyPrefix: string;
}

export interface CeilingRun {
  shape: CreateShape;
  creates: number;
  seconds: number;
  rps: number;
  /** CPU of the whole process (its checkpointer thread included), % of one core. */
  cpu: number;
  /** Time of one transaction of CEILING_GROUP creates, ms. */
  txP50: number;
  txP99: number;
  /** PRAGMA synchronous as the connection reports it (2: FULL). */
  synchronous: number;
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? Math.round(s[Math.min(s.length - 1, Math.floor(q * s.length))]! * 100) / 100 : NaN;
};

/** The child: opens the runtime and answers commands until "quit". */
async function child(args: CeilingArgs): Promise<void> {
  const { loadConfig } = await import('../src/config');
  const { openRuntime } = await import('../src/runtime');
  const { Checkpointer } = await import('../src/db/checkpointer');
  const services = openRuntime(loadConfig({ db: args.db }, {}));
  const checkpointer = services.workers.find((w) => w instanceof Checkpointer);
  checkpointer?.start();
  const principal = services.auth.authenticate(args.token);
  const bodies = {
    device: JSON.parse(fs.readFileSync(args.bodies.device, 'utf8')) as Array<Record<string, unknown>>,
    import: JSON.parse(fs.readFileSync(args.bodies.import, 'utf8')) as Array<Record<string, unknown>>,
  };
  const synchronous = services.core.db.pragma('synchronous', { simple: true }) as number;
  type Input = Parameters<typeof services.recordings.create>[1];
  let n = 0;
  const run = (shape: CreateShape, seconds: number, tag: string): CeilingRun => {
    const list = bodies[shape];
    const tx: number[] = [];
    let creates = 0;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const end = t0 + seconds * 1000;
    let t = t0;
    while (t < end) {
      services.core.writer.write(() => {
        for (let i = 0; i < CEILING_GROUP; i++, n++) services.recordings.create(principal, list[n % list.length] as unknown as Input, `${args.keyPrefix}-${tag}-${n}`);
      });
      const now = performance.now();
      tx.push(now - t);
      t = now;
      creates += CEILING_GROUP;
    }
    const wall = t - t0;
    const cpu = process.cpuUsage(cpu0);
    return {
      shape,
      creates,
      seconds: Math.round(wall) / 1000,
      rps: Math.round(creates / (wall / 1000)),
      cpu: Math.round(((cpu.user + cpu.system) / 1000 / wall) * 100),
      txP50: quantile(tx, 0.5),
      txP99: quantile(tx, 0.99),
      synchronous,
    };
  };
  const out = (x: unknown) => process.stdout.write(JSON.stringify(x) + '\n');
  out({ ready: true, synchronous });
  for await (const line of readline.createInterface({ input: process.stdin })) {
    if (line.trim() === 'quit') break;
    const cmd = JSON.parse(line) as { shape: CreateShape; seconds: number; tag: string };
    out(run(cmd.shape, cmd.seconds, cmd.tag));
  }
  await checkpointer?.stop();
  services.core.db.close();
}

const signal = (pid: number | undefined, sig: NodeJS.Signals) => {
  try {
    if (pid) process.kill(pid, sig);
  } catch {
    // gone already
  }
};

/** The parent's handle on the ceiling process. */
export class Ceiling {
  private readonly lines: string[] = [];
  private waiting: ((line: string) => void) | undefined;
  private readonly stderr: string[] = [];

  private constructor(
    private readonly proc: ChildProcess,
    readonly db: string,
  ) {
    readline.createInterface({ input: proc.stdout! }).on('line', (line) => {
      const w = this.waiting;
      this.waiting = undefined;
      if (w) w(line);
      else this.lines.push(line);
    });
    proc.stderr!.on('data', (c: Buffer) => this.stderr.push(c.toString()));
    // Never leave it stopped behind an interrupted bench (a stopped process ignores SIGTERM).
    process.once('exit', () => {
      signal(proc.pid, 'SIGCONT');
      signal(proc.pid, 'SIGKILL');
    });
  }

  /**
   * Copies `runDb` (before the server opens it: the API key is there, nothing else is running) and
   * starts the ceiling process on the copy, warmed up with a second of each shape, then stopped.
   */
  static async start(runDb: string, token: string, bodies: Record<CreateShape, string>, keyPrefix: string): Promise<Ceiling> {
    const db = path.join(path.dirname(runDb), `ceiling-${path.basename(runDb)}`);
    for (const suffix of ['', '-wal', '-shm', '.secret', '.scrubbed']) fs.rmSync(db + suffix, { force: true });
    fs.copyFileSync(runDb, db);
    // The WAL, if the CLI left one; the master secret, so that the same key authenticates.
    for (const suffix of ['-wal', '.secret']) if (fs.existsSync(runDb + suffix)) fs.copyFileSync(runDb + suffix, db + suffix);
    fsyncFile(db);
    const args: CeilingArgs = { db, token, bodies, keyPrefix: `${keyPrefix}-ceiling` };
    const proc = spawn('taskset', ['-c', SERVER_CORE, process.execPath, ...SERVER_NODE_FLAGS, '--import', 'tsx', 'bench/ceiling.ts', JSON.stringify(args)], {
      cwd: ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const c = new Ceiling(proc, db);
    await c.next();
    for (const shape of ['device', 'import'] as const) await c.command(shape, 1, `warm-${shape}`);
    signal(proc.pid, 'SIGSTOP');
    return c;
  }

  private next(): Promise<string> {
    const line = this.lines.shift();
    if (line !== undefined) return Promise.resolve(line);
    return new Promise((resolve, reject) => {
      this.waiting = resolve;
      this.proc.once('exit', (code) => reject(new Error(`the ceiling process exited (${code}): ${this.stderr.join('')}`)));
    });
  }

  private async command(shape: CreateShape, seconds: number, tag: string): Promise<CeilingRun> {
    this.proc.stdin!.write(JSON.stringify({ shape, seconds, tag }) + '\n');
    return JSON.parse(await this.next()) as CeilingRun;
  }

  /**
   * One measured run: the processes in `pause` (the server, the baseline) are stopped meanwhile, so
   * the core is this process's alone, as it is the server's during its runs. Afterwards its files
   * are flushed and the disk left a second to settle, as run.ts does after the server's creates.
   */
  async measure(shape: CreateShape, seconds: number, tag: string, pause: number[]): Promise<CeilingRun> {
    for (const pid of pause) signal(pid, 'SIGSTOP');
    signal(this.proc.pid, 'SIGCONT');
    try {
      return await this.command(shape, seconds, tag);
    } finally {
      signal(this.proc.pid, 'SIGSTOP');
      for (const pid of pause) signal(pid, 'SIGCONT');
      for (const f of [this.db, `${this.db}-wal`]) if (fs.existsSync(f)) fsyncFile(f);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }

  async close(): Promise<void> {
    if (this.proc.exitCode !== null) return;
    const exited = new Promise((resolve) => this.proc.once('exit', resolve));
    signal(this.proc.pid, 'SIGCONT');
    this.proc.stdin!.end('quit\n');
    const timer = setTimeout(() => signal(this.proc.pid, 'SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
    for (const suffix of ['', '-wal', '-shm', '.secret', '.scrubbed']) fs.rmSync(this.db + suffix, { force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  child(JSON.parse(process.argv[2] ?? '') as CeilingArgs).then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`ceiling: ${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    },
  );
}
