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
//
// The worker also takes deleted text out of the WAL file. A delete erases the text from the
// database (secure_delete zeroes what it overwrites, FTS5's secure-delete takes the words out of
// the index), but the WAL still holds the earlier copies of the pages that had it, written by the
// create and any edits, and a checkpoint does not remove them: the WAL starts over from its
// beginning without shrinking, so old frames stay until later writes happen to cover them, which
// on a quiet server may be never. So after a delete commits (eraseSoon()), and once at start-up
// (a delete whose process died before this ran), the worker checkpoints the whole WAL and
// truncates it to zero bytes: wal_checkpoint(TRUNCATE), ERASE_DELAY_MS after the request so that a
// series of deletes costs one. It runs here, off the event loop, because it copies what the last
// passive pass left and fsyncs. While it waits for the write lock or for another process's reader
// it holds up new writers, so it waits at most ERASE_WAIT_MS and otherwise tries again later,
// backing off up to ERASE_MAX_BACKOFF_MS (a long-lived reader such as Litestream).
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { WAL_AUTOCHECKPOINT, type Db } from './open';

export const CHECKPOINT_EVERY_MS = 100;
/** The server connection's autocheckpoint while the worker runs: 50,000 pages, about 200 MB of WAL. */
export const BACKSTOP_PAGES = 50_000;
/** Checkpoint passes in a row that may fail before the worker gives up. */
const MAX_FAILURES = 50;
/** From a delete (or start-up) to the WAL truncation that takes its text out of the WAL file. */
export const ERASE_DELAY_MS = 1_000;
/** How long a truncation may wait for the write lock and for readers before it tries again later. */
const ERASE_WAIT_MS = 50;
const ERASE_MAX_BACKOFF_MS = 60_000;

/** What one checkpoint pass reports to the server (tests listen for it). */
export interface CheckpointReport {
  /** Frames in the WAL, and how many of them are now in the database file. */
  log: number;
  checkpointed: number;
  /** The pass truncated the WAL to zero bytes (an erasure, see above). */
  truncated?: true;
}

// CommonJS source for an eval worker: the bundle (dist/reclib.mjs) has no file for a worker of its
// own, and better-sqlite3 is loaded from the path the server itself resolved.
const SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.sqlite);
const db = new Database(workerData.file);
const busyTimeout = db.pragma('busy_timeout', { simple: true });
let timer;
let last = -1;
let failures = 0;
// Erasure: the time the WAL is to be truncated (null: nothing to erase), and the current backoff.
let eraseAt = Date.now() + workerData.erase.delayMs;
let backoff = workerData.erase.delayMs;
const truncate = () => {
  db.pragma('busy_timeout = ' + workerData.erase.waitMs);
  try {
    const [r] = db.pragma('wal_checkpoint(TRUNCATE)');
    if (r.busy === 0) {
      eraseAt = null;
      backoff = workerData.erase.delayMs;
      last = -1;
      parentPort.postMessage({ log: 0, checkpointed: 0, truncated: true });
      return;
    }
  } catch {
    // SQLITE_BUSY or a transient I/O error: tried again after the backoff.
  } finally {
    db.pragma('busy_timeout = ' + busyTimeout);
  }
  backoff = Math.min(backoff * 2, workerData.erase.maxBackoffMs);
  eraseAt = Date.now() + backoff;
};
const pass = () => {
  if (eraseAt !== null && Date.now() >= eraseAt) truncate();
  else {
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
  }
  timer = setTimeout(pass, workerData.everyMs);
};
parentPort.on('message', (m) => {
  if (m === 'erase') {
    // A series of deletes is erased by one truncation; a pending retry keeps its backoff.
    if (eraseAt === null) eraseAt = Date.now() + workerData.erase.delayMs;
    return;
  }
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
    private readonly eraseDelayMs = ERASE_DELAY_MS,
  ) {}

  /**
   * Call after a commit that deleted text: the worker truncates the WAL about eraseDelayMs later
   * (see above). Without a running worker there is nothing to do until the next start-up, whose
   * first truncation covers it (and a process that closes the file last removes the WAL anyway).
   */
  eraseSoon(): void {
    this.worker?.postMessage('erase');
  }

  start(): void {
    if (this.worker || this.file === ':memory:') return;
    let worker: Worker;
    try {
      const sqlite = createRequire(import.meta.url).resolve('better-sqlite3');
      worker = new Worker(SOURCE, {
        eval: true,
        execArgv: [], // not the server's loader or profiler flags
        workerData: {
          sqlite,
          file: this.file,
          everyMs: this.everyMs,
          maxFailures: MAX_FAILURES,
          erase: { delayMs: this.eraseDelayMs, waitMs: ERASE_WAIT_MS, maxBackoffMs: ERASE_MAX_BACKOFF_MS },
        },
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
