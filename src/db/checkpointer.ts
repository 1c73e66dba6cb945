// The WAL checkpointer of `reclib serve`: a worker thread with its own connection that copies
// committed WAL frames back into the database file every CHECKPOINT_EVERY_MS, or sooner once
// CHECKPOINT_PASS_FRAMES frames were written (checkpoint-policy.ts passDue: the less a pass copies,
// the shorter the wait of the commit behind its fsync), so that the copy and
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
// (a delete whose process died before this ran), the worker copies the whole WAL into the
// database file and cuts the file back, ERASE_DELAY_MS after the request so that a series of
// deletes costs one: to the one frame of a commit of its own that makes the WAL start over
// (page-scrub.ts, Scrub.truncate(), says why not wal_checkpoint(TRUNCATE)), or to zero
// bytes with TRUNCATE where the file is not scrubbed (no WAL index to read, or auto_vacuum). With
// it, it zeroes the stale copies of moved rows SQLite leaves in pages' unused space
// (page-scrub.ts). It runs here, off the event loop, because it copies what the last passive pass
// left and fsyncs. While it waits for the write lock, and while it copies and fsyncs, it holds up
// new writers (a reader of an older snapshot makes it give up and try later): at 1M recordings a truncation in the
// middle of a stream of deletes held the next one up for 55-105 ms (bench/results-notes.md). So it
// waits for a quiet pass (no commit since the pass before, every frame copied: nothing left to
// copy), or ERASE_MAX_DELAY_MS after the delete at the latest; it waits at most ERASE_WAIT_MS for
// the lock and otherwise tries again later, backing off up to ERASE_MAX_BACKOFF_MS (a long-lived
// reader such as Litestream).
//
// The worker also keeps the WAL file's size down. Without it, each connection's journal_size_limit
// cuts the file back to WAL_SIZE_LIMIT when a writer starts the WAL over; with edits writing ~2 MB
// of WAL each at 1M recordings that was a truncation of 100+ MB every few seconds, inside a commit,
// and on a disk mounted with `discard` the next fsync waited for the freed blocks to be trimmed
// (commits of 56-72 ms against 3 ms p50). While the worker runs, the server's connection keeps its
// WAL file (journal_size_limit = -1) and the worker truncates it at a quiet pass once it is larger
// than WAL_SIZE_LIMIT: under a steady stream of writes the file stays at its largest size since
// the last quiet moment (bounded by the backstop below), and shrinks when the writes pause.
//
// At a stop the worker goes on through the drain until the writer thread has closed its
// connection (finish()): its last pass copies everything, cuts the WAL back and scrubs the pages
// named by the frames written since the last slice (deletes answered during the drain included).
// When that leaves every page clean and nothing commits after it, the server's close records the
// file's stamp (src/db/scrub-mark.ts) and the next start skips the whole-file pass (`scrubbed`),
// which at 1M recordings reads 2.9 GB.
//
// The worker's code is src/db/checkpointer-worker.ts, built as dist/checkpointer-worker.mjs (see
// spawnWorker() for how each is started).
import type { Worker } from 'node:worker_threads';
import { errorLine } from '../errors';
import { startModuleWorker } from '../worker-thread';
import type { CheckpointerCommand, CheckpointerWorkerData, CheckpointReport, Finished } from './checkpointer-worker';
import { WAL_AUTOCHECKPOINT_BYTES, WAL_SIZE_LIMIT, walPages, type Db } from './open';
import type { ScrubbedFile } from './page-scrub';

export type { CheckpointReport, CleanEnd, Finished } from './checkpointer-worker';

export const CHECKPOINT_EVERY_MS = 100;
/** A pass sooner once this many frames (~2 MB of 4 KB pages) were written since the last (checkpoint-policy.ts passDue says why). */
export const CHECKPOINT_PASS_FRAMES = 512;
/** How often the worker looks at the WAL index while writes come. */
const CHECKPOINT_POLL_MS = 10;
/** The server connection's autocheckpoint while the worker runs: about 200 MB of WAL. */
export const BACKSTOP_BYTES = 200 * 1024 * 1024;
/** Checkpoint passes in a row that may fail before the worker gives up. */
const MAX_FAILURES = 50;
/** From a delete (or start-up) to the WAL truncation that takes its text out of the WAL file, once the writers are quiet. */
export const ERASE_DELAY_MS = 1_000;
/** From a delete to that truncation at the latest, while writes keep coming. */
export const ERASE_MAX_DELAY_MS = 10_000;
/** How long a truncation may wait for the write lock and for readers before it tries again later. */
const ERASE_WAIT_MS = 50;
const ERASE_MAX_BACKOFF_MS = 60_000;

/** The worker runs src/db/checkpointer-worker.ts (dist/checkpointer-worker.mjs in the bundle). */
const spawnWorker = (workerData: CheckpointerWorkerData): Worker => startModuleWorker('checkpointer-worker', import.meta.url, workerData);

export class Checkpointer {
  private worker: Worker | undefined;
  private exited: Promise<void> = Promise.resolve();
  private readonly listeners: Array<(r: CheckpointReport) => void> = [];
  private troubleReported = false;
  /**
   * Where a worker that cannot run, or ends on its own, is reported (once): the server is still
   * correct without it, only its writes are slower, so nothing else would show it.
   */
  logTrouble: (line: string) => void = (line) => console.error(line);
  /** The file as the last run's stop left it, every page scrubbed (scrub-mark.ts); set before start(). */
  scrubbed: ScrubbedFile | undefined;

  constructor(
    private readonly file: string,
    /** The server's own connection, whose autocheckpoint becomes the backstop. */
    private readonly server?: Db,
    private readonly everyMs = CHECKPOINT_EVERY_MS,
    private readonly eraseDelayMs = ERASE_DELAY_MS,
    private readonly eraseMaxDelayMs = ERASE_MAX_DELAY_MS,
    private readonly passFrames = CHECKPOINT_PASS_FRAMES,
  ) {}

  /**
   * Call after a commit that deleted text: the worker truncates the WAL about eraseDelayMs later
   * (see above). Without a running worker there is nothing to do until the next start-up, whose
   * first truncation covers it (and a process that closes the file last removes the WAL anyway).
   */
  eraseSoon(): void {
    this.send('erase');
  }

  start(): void {
    if (this.worker || this.file === ':memory:') return;
    let worker: Worker;
    try {
      worker = spawnWorker({
        file: this.file,
        everyMs: this.everyMs,
        passFrames: this.passFrames,
        pollMs: Math.min(CHECKPOINT_POLL_MS, this.everyMs),
        maxFailures: MAX_FAILURES,
        sizeLimit: WAL_SIZE_LIMIT,
        erase: { delayMs: this.eraseDelayMs, maxDelayMs: Math.max(this.eraseDelayMs, this.eraseMaxDelayMs), waitMs: ERASE_WAIT_MS, maxBackoffMs: ERASE_MAX_BACKOFF_MS },
        ...(this.scrubbed ? { scrubbed: this.scrubbed } : {}),
      });
    } catch (e) {
      // No worker (e.g. threads refused): the server checkpoints as it would without one.
      this.trouble(`could not start (${errorLine(e)})`);
      return;
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
    worker.on('error', (e) => this.trouble(`failed (${errorLine(e)})`));
    this.exited = new Promise<void>((resolve) =>
      worker.once('exit', (code) => {
        if (this.worker === worker) {
          this.worker = undefined;
          this.backstop(WAL_AUTOCHECKPOINT_BYTES, WAL_SIZE_LIMIT);
          this.trouble(`ended (exit code ${code})`);
        }
        resolve();
      }),
    );
    worker.unref();
    this.worker = worker;
    this.backstop(BACKSTOP_BYTES, -1);
  }

  private trouble(what: string): void {
    if (this.troubleReported) return;
    this.troubleReported = true;
    this.logTrouble(`reclib: the checkpointer thread ${what}; checkpoints now run inside writes, which makes them slower`);
  }

  private send(command: CheckpointerCommand): void {
    this.worker?.postMessage(command);
  }

  /** The server connection's autocheckpoint and WAL size limit (-1: the worker keeps the size down). */
  private backstop(bytes: number, sizeLimit: number): void {
    if (!this.server?.open) return;
    this.server.pragma(`wal_autocheckpoint = ${walPages(this.server, bytes)}`);
    this.server.pragma(`journal_size_limit = ${sizeLimit}`);
  }

  onCheckpoint(listener: (r: CheckpointReport) => void): void {
    this.listeners.push(listener);
  }

  /** Ends the worker after its current pass; the server's own close checkpoints what is left. */
  async stop(): Promise<void> {
    await this.end('stop');
  }

  /**
   * Ends the worker with the run's last pass, once no connection of this process writes any more
   * (the writer thread's, closed): how it ended (see the top).
   */
  async finish(): Promise<Finished> {
    return (await this.end('finish')) ?? { clean: false };
  }

  private async end(command: 'stop' | 'finish'): Promise<Finished | undefined> {
    const worker = this.worker;
    if (!worker) {
      await this.exited;
      return undefined;
    }
    this.worker = undefined;
    this.backstop(WAL_AUTOCHECKPOINT_BYTES, WAL_SIZE_LIMIT);
    let finished: Finished | undefined;
    worker.on('message', (r: CheckpointReport) => (finished = r.finished ?? finished));
    worker.ref(); // keep the process alive until it has closed its connection
    worker.postMessage(command satisfies CheckpointerCommand);
    await this.exited;
    return finished;
  }
}
