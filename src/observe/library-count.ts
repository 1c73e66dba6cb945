// reclib_recordings off the event loop. Counting the live recordings walks an index entry per
// recording: about 200 ms at 1M recordings on this machine, which on the server's connection would
// stall every request for that long at each scrape. A worker thread with a read-only connection of
// its own counts instead (WAL readers do not block the writer), the way src/db/checkpointer.ts
// checkpoints. In-memory databases (tests) and a worker that cannot start count on the caller's
// connection.
import type { Worker } from 'node:worker_threads';
import { errorLine } from '../errors';
import { LIVE_RECORDINGS_SQL, type MetricsStore } from '../store/metrics-store';
import { startModuleWorker } from '../worker-thread';
import type { LibraryCountReply, LibraryCountWorkerData } from './library-count-worker';

export class LibraryCount {
  private worker: Worker | undefined;
  private failed = false;
  private pending: Promise<number> | undefined;
  /** Where a worker that cannot run is reported, once (counts then stall the server's loop at 1M). */
  logTrouble: (line: string) => void = (line) => console.error(line);

  constructor(
    private readonly file: string,
    private readonly store: MetricsStore,
  ) {}

  /** Live recordings; concurrent scrapes share one count. */
  count(): Promise<number> {
    return (this.pending ??= this.countOnce().finally(() => (this.pending = undefined)));
  }

  private countOnce(): Promise<number> {
    const worker = this.start();
    if (!worker) return Promise.resolve(this.store.liveRecordings());
    return new Promise<number>((resolve) => {
      // A count that failed in the worker (busy, I/O) is taken on the server's connection instead.
      const onMessage = (m: LibraryCountReply) => {
        worker.off('error', onError);
        resolve('n' in m ? m.n : this.store.liveRecordings());
      };
      const onError = (e: Error) => {
        worker.off('message', onMessage);
        this.trouble(e);
        this.failed = true; // the worker is gone: from now on counted on the server's connection
        this.worker = undefined;
        resolve(this.store.liveRecordings());
      };
      worker.once('message', onMessage);
      worker.once('error', onError);
      worker.postMessage('count');
    });
  }

  private start(): Worker | undefined {
    if (this.worker || this.failed || this.file === ':memory:') return this.worker;
    try {
      const data: LibraryCountWorkerData = { file: this.file, sql: LIVE_RECORDINGS_SQL };
      const worker = startModuleWorker('library-count-worker', import.meta.url, data);
      worker.unref();
      worker.once('exit', () => {
        if (this.worker === worker) this.worker = undefined;
      });
      this.worker = worker;
    } catch (e) {
      this.failed = true;
      this.trouble(e);
    }
    return this.worker;
  }

  private trouble(e: unknown): void {
    this.logTrouble(`reclib: the library-count thread failed (${errorLine(e)}); /metrics counts recordings on the server's connection instead, which holds its other requests up at a large library`);
  }

  /** Ends the worker (its connection closes with it). */
  async stop(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    this.failed = true;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.ref(); // keep the process alive until the worker has closed its connection
    worker.postMessage('stop');
    await exited;
  }
}
