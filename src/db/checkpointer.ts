// The WAL checkpointer of `reclib serve`: a worker thread with its own connection that copies
// committed WAL frames back into the database file every CHECKPOINT_EVERY_MS, so that the copy and
// its two fsyncs (WAL, then database) block that thread, not the event loop. At 1M recordings the
// checkpoints inside requests were one of the places where creates sat waiting for the disk.
//
// PASSIVE checkpoints never wait for or block the writer or readers. The server connection keeps an
// autocheckpoint as the backstop, raised to BACKSTOP_PAGES while the worker runs: a PASSIVE
// checkpoint cannot finish while commits keep arriving, and the WAL starts over only after one did,
// so under sustained writes the WAL grows until the writer completes the (by then small) rest
// itself and the next write restarts it. At the usual 10,000 pages that happened every few
// hundred milliseconds at 2,000 creates/s, each time with an fsync on the event loop. If the worker
// fails, the usual threshold comes back and the server runs exactly as it would without it.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { WAL_AUTOCHECKPOINT, type Db } from './open';

export const CHECKPOINT_EVERY_MS = 100;
/** The server connection's autocheckpoint while the worker runs: 50,000 pages, about 200 MB of WAL. */
export const BACKSTOP_PAGES = 50_000;
/** Checkpoint passes in a row that may fail before the worker gives up. */
const MAX_FAILURES = 50;

/** What one checkpoint pass reports to the server (tests listen for it). */
export interface CheckpointReport {
  /** Frames in the WAL, and how many of them are now in the database file. */
  log: number;
  checkpointed: number;
}

// CommonJS source for an eval worker: the bundle (dist/reclib.mjs) has no file for a worker of its
// own, and better-sqlite3 is loaded from the path the server itself resolved.
const SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.sqlite);
const db = new Database(workerData.file);
let timer;
let last = -1;
let failures = 0;
const pass = () => {
  try {
    const [r] = db.pragma('wal_checkpoint(PASSIVE)');
    failures = 0;
    if (r.checkpointed !== last && r.log > 0) parentPort.postMessage({ log: r.log, checkpointed: r.checkpointed });
    last = r.checkpointed;
  } catch (e) {
    // Busy or a transient I/O error: the next pass tries again. Failing every time, the worker
    // ends (uncaught), and the server takes its usual autocheckpoint back.
    if (++failures >= workerData.maxFailures) throw e;
  }
  timer = setTimeout(pass, workerData.everyMs);
};
parentPort.on('message', (m) => {
  if (m !== 'stop') return;
  clearTimeout(timer);
  db.close();
  parentPort.close();
});
timer = setTimeout(pass, workerData.everyMs);
`;

export class Checkpointer {
  private worker: Worker | undefined;
  private exited: Promise<void> = Promise.resolve();
  private readonly listeners: Array<(r: CheckpointReport) => void> = [];

  constructor(
    private readonly file: string,
    /** The server's own connection, whose autocheckpoint becomes the backstop. */
    private readonly server?: Db,
    private readonly everyMs = CHECKPOINT_EVERY_MS,
  ) {}

  start(): void {
    if (this.worker || this.file === ':memory:') return;
    let worker: Worker;
    try {
      const sqlite = createRequire(import.meta.url).resolve('better-sqlite3');
      worker = new Worker(SOURCE, {
        eval: true,
        execArgv: [], // not the server's loader or profiler flags
        workerData: { sqlite, file: this.file, everyMs: this.everyMs, maxFailures: MAX_FAILURES },
      });
    } catch {
      return; // no worker (e.g. threads refused): the server checkpoints as it would without one
    }
    worker.on('message', (r: CheckpointReport) => {
      for (const listener of this.listeners) {
        try {
          listener(r);
        } catch {
          // A report listener's failure is not the server's.
        }
      }
    });
    // A failed or ended worker leaves the server on its own autocheckpoint: correct, only slower.
    worker.on('error', () => undefined);
    this.exited = new Promise<void>((resolve) =>
      worker.once('exit', () => {
        if (this.worker === worker) {
          this.worker = undefined;
          this.backstop(WAL_AUTOCHECKPOINT);
        }
        resolve();
      }),
    );
    worker.unref();
    this.worker = worker;
    this.backstop(BACKSTOP_PAGES);
  }

  private backstop(pages: number): void {
    if (this.server?.open) this.server.pragma(`wal_autocheckpoint = ${pages}`);
  }

  onCheckpoint(listener: (r: CheckpointReport) => void): void {
    this.listeners.push(listener);
  }

  /** Ends the worker after its current pass; the server's own close checkpoints what is left. */
  async stop(): Promise<void> {
    const worker = this.worker;
    if (!worker) return this.exited;
    this.worker = undefined;
    this.backstop(WAL_AUTOCHECKPOINT);
    worker.ref(); // keep the process alive until it has closed its connection
    worker.postMessage('stop');
    await this.exited;
  }
}
