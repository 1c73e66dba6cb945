// The writer thread, main side (docs/architecture.md, "The writer and its threads"). `reclib serve`
// answers reads on the main thread and hands every write request to this thread
// (src/http/forward-write.ts), which runs its own copy of the services and the app on its own
// connection to the file, with group commit there (src/writer-thread-app.ts). The background
// work that writes (the delivery scheduler, the index merger, the checkpointer) runs there too,
// so the main thread's connection only reads and nothing it answers waits behind a write.
//
// What crosses between the threads: requests and their answers (bytes), and after each commit of
// the writer a message, on which the main thread's event streams look for new events at once. The
// principal cache needs none: it sees every commit of another connection (db/commit-watch.ts).
// Delivery reports (the log and /metrics) and the storage condition (/healthz) come over too.
import type { Worker as Thread } from 'node:worker_threads';
import type { Config } from './config';
import { fileIdentity, type FileIdentity } from './db/open';
import type { CleanEnd } from './db/checkpointer';
import type { ScrubbedFile } from './db/page-scrub';
import type { WriteHealthStatus } from './db/write-health';
import type { DeliveryReport } from './delivery/scheduler';
import type { ForwardedAnswer, ForwardedRequest, WriteForwarder } from './http/env';
import { writerUnavailable } from './http/forward-write';
import { callErrorAgain, postBatch, type CallError, type WriteCallArgs, type WriteCallName, type WriteCallResult } from './http/write-calls';
import { SIGNAL, SIGNAL_SLOTS } from './group-gate';
import { NumberedTable } from './numbered-table';
import type { Worker } from './worker';
import { startModuleWorker } from './worker-thread';

/** What the thread is started with (structured-clone friendly: the allow-list is parsed there again). */
export interface WriterThreadData {
  config: Omit<Config, 'allowList'>;
  masterSecret: Uint8Array;
  /**
   * What the main thread tells the writer through shared memory (src/group-gate.ts, SIGNAL): its
   * activity (read by the writer's idle merger and its group gate), the writes it posted, and
   * whether it is writing a commit's answers.
   */
  signals: SharedArrayBuffer;
  /** The database file the main thread opened: the writer's connection must open that one (OpenOptions.openInProcess). */
  file: FileIdentity;
  /** The file as the last run's stop left it, every page scrubbed (src/db/scrub-mark.ts): its checkpointer skips the whole-file pass while the file still has that stamp. */
  scrubbed?: ScrubbedFile;
}

export type ToWriter =
  | { type: 'request'; id: number; request: ForwardedRequest }
  | { type: 'calls'; calls: Array<{ id: number; name: WriteCallName; args: unknown[] }> }
  | { type: 'stop' }
  | { type: 'close' };

/** How a service call ended: its result, or its error. */
export type CallOutcome = { type: 'result'; id: number; value: unknown } | { type: 'refused'; id: number; error: CallError };

export type FromWriter =
  | { type: 'answer'; id: number; answer: ForwardedAnswer }
  | { type: 'failed'; id: number; message: string }
  | { type: 'results'; results: CallOutcome[] }
  | { type: 'commit' }
  | { type: 'delivery'; report: DeliveryReport }
  | { type: 'health'; status: WriteHealthStatus | undefined }
  | { type: 'ready'; workers: string[] }
  | { type: 'stopped' }
  /** The thread's last message: with `scrubbed` when its checkpointer's last pass, after its connection closed, left every page of the file scrubbed. */
  | { type: 'closed'; scrubbed?: CleanEnd };

export interface WriterThreadHooks {
  /** The writer committed (posted at most once per turn of its event loop). */
  committed(): void;
  delivery(report: DeliveryReport): void;
  health(status: WriteHealthStatus | undefined): void;
  /** Unexpected trouble with the thread (it died and is started again). */
  log(line: string): void;
}

/**
 * How long after the server's start the thread starts when no write has started it first
 * (startSoon). Starting a thread is a Node environment of its own and a second copy of the app:
 * on one core, a fifth of a start's CPU, which the first answers of a server would wait behind.
 */
export const WRITER_START_DELAY_MS = 250;
/**
 * A thread that died is started again after this long, doubled for each start in a row that
 * dies before it is ready, up to RESTART_MAX_MS: one that can never start (the database file
 * replaced under the server) cost ~15% of a core and two log lines a second, forever.
 */
const RESTART_MS = 1_000;
const RESTART_MAX_MS = 60_000;
/**
 * Writes waiting for the thread (in its queue or being written) at most, and the bytes of their
 * bodies and texts: past either, a write is refused at once (503 with Retry-After: 1, nothing
 * saved) rather than held in memory. While the thread waits (a slow disk, the write lock held by
 * the CLI), each credential could otherwise add its whole rate budget of 1 MB bodies, and an
 * account has many keys: 118 waiting PATCHes of 1.4 MB took the server from 87 to 595 MB. The bench's
 * heaviest load keeps ~32 waiting.
 */
export const WAITING_LIMITS = { writes: 1_024, bytes: 64 * 1024 * 1024 };
/** close(): how long the thread may take to close its connection before it is terminated. */
const CLOSE_MS = 6_000; // above busy_timeout (5 s), the longest a statement waits for the lock

export class WriterThread implements Worker, WriteForwarder {
  private thread: Thread | undefined;
  /** The calls awaiting the thread's answer, by the number the answer names (not a Map: NumberedTable says why). */
  private readonly pending = new NumberedTable<{ resolve: (a: never) => void; reject: (e: unknown) => void; bytes: number }>();
  /** The bytes of the pending writes' bodies and texts (WAITING_LIMITS). */
  private waitingBytes = 0;
  /** WAITING_LIMITS; tests lower them. */
  limits = WAITING_LIMITS;
  private closing = false;
  private onStopped: (() => void) | undefined;
  private started = false;
  /** Set by startSoon until the thread starts: the first write starts it. */
  private deferred = false;
  private startTimer: ReturnType<typeof setTimeout> | undefined;
  private markReady: (workers: string[]) => void = () => {};
  /**
   * When the thread exited without being asked to, the first time in a series of restarts; undefined
   * once a new thread is ready or has reported its own storage condition (before 'ready': the
   * scheduler's first claim at its start).
   */
  private stoppedSince: number | undefined;
  /** Starts in a row that ended before the thread was ready (the restart's backoff). */
  private failedStarts = 0;
  /** Resolves, once the thread has opened its connection, with the background work it runs (class names). */
  ready: Promise<string[]> = new Promise((resolve) => (this.markReady = resolve));

  private readonly signals: Int32Array;

  constructor(
    private readonly data: WriterThreadData,
    private readonly hooks: WriterThreadHooks,
  ) {
    this.signals = new Int32Array(data.signals);
  }

  static dataOf(config: Config, masterSecret: Buffer, scrubbed?: ScrubbedFile): WriterThreadData {
    const { allowList: _parsedAgainThere, ...plain } = config;
    return {
      config: plain,
      masterSecret: new Uint8Array(masterSecret),
      signals: new SharedArrayBuffer(SIGNAL_SLOTS * Int32Array.BYTES_PER_ELEMENT),
      file: fileIdentity(config.db),
      ...(scrubbed ? { scrubbed } : {}),
    };
  }

  /** The main thread started a request (the writer's idle work and its groups wait for quiet here). */
  noteRequest(): void {
    Atomics.add(this.signals, SIGNAL.activity, 1);
  }

  /** Answers of the writer are written in this turn: its next group waits for that (group-gate.ts). */
  private answering(): void {
    Atomics.add(this.signals, SIGNAL.activity, 1);
    if (Atomics.exchange(this.signals, SIGNAL.answering, 1) === 0) setImmediate(() => Atomics.store(this.signals, SIGNAL.answering, 0));
  }

  /** `n` writes were posted: the writer's group gate may be waiting for them. */
  private posted(n: number): void {
    Atomics.add(this.signals, SIGNAL.posted, n);
    Atomics.notify(this.signals, SIGNAL.posted);
  }

  /**
   * Starts the thread after `delayMs`, or at once when a write is forwarded first: the answers of a
   * starting server (reads, /healthz) do not share the core with the thread's own start, and its
   * background work (deliveries, index merging, checkpoints) can wait that long.
   */
  startSoon(delayMs = WRITER_START_DELAY_MS): void {
    if (this.thread || this.closing || this.deferred) return;
    this.deferred = true;
    this.startTimer = setTimeout(() => this.start(), delayMs);
    this.startTimer.unref();
  }

  /** Whether the thread exists (started and not exited), ready or not. */
  get running(): boolean {
    return this.thread !== undefined;
  }

  /** Starts the thread. Requests forwarded before it is ready wait in its message queue. */
  start(): void {
    this.deferred = false;
    clearTimeout(this.startTimer);
    this.startTimer = undefined;
    if (this.thread || this.closing) return;
    // A new thread has read none of the writes posted to the last one.
    Atomics.store(this.signals, SIGNAL.posted, 0);
    const thread = startModuleWorker('writer-thread-worker', import.meta.url, this.data);
    this.thread = thread;
    this.started = false;
    thread.on('message', (m: FromWriter) => this.received(m));
    thread.on('error', (e) => this.hooks.log(`reclib: the writer thread failed: ${e.name}: ${e.message}`));
    thread.on('exit', (code) => {
      this.thread = undefined;
      this.outbox = [];
      this.onStopped?.();
      this.waitingBytes = 0;
      for (const p of this.pending.clear()) p.reject(writerUnavailable('the writer thread stopped before answering', { maybeSaved: true }));
      if (this.closing) return;
      // Its storage condition went with it: until the next thread is ready, /healthz says writes
      // are failing because there is no thread (since the first of a series of restarts); the
      // next thread reports its own.
      this.stoppedSince ??= Date.now();
      this.hooks.health({ failing: 'writer_stopped', since: this.stoppedSince });
      if (!this.started) this.failedStarts++;
      const delay = Math.min(RESTART_MS * 2 ** Math.max(0, this.failedStarts - 1), RESTART_MAX_MS);
      this.hooks.log(`reclib: the writer thread exited (code ${code}); starting it again${delay > RESTART_MS ? ` in ${delay / 1000} s (${this.failedStarts} starts in a row failed)` : ''}`);
      setTimeout(() => this.start(), delay).unref();
    });
  }

  forward(request: ForwardedRequest): Promise<ForwardedAnswer> {
    const bytes = request.body?.byteLength ?? 0;
    return this.send<ForwardedAnswer>((id) => ({ type: 'request', id, request }), request.body ? [request.body.buffer as ArrayBuffer] : [], bytes);
  }

  call<K extends WriteCallName>(name: K, ...args: WriteCallArgs<K>): Promise<WriteCallResult<K>> {
    return this.send<WriteCallResult<K>>((id) => {
      // The calls of one turn of the event loop go in one message (the writer commits them together anyway).
      if (this.outbox.length === 0) setImmediate(this.flushOutbox);
      this.outbox.push({ id, name, args });
      return undefined;
    }, [], textBytes(args));
  }

  private outbox: Array<{ id: number; name: WriteCallName; args: unknown[] }> = [];
  private readonly flushOutbox = (): void => {
    const calls = this.outbox;
    this.outbox = [];
    // A thread that exited meanwhile rejected these calls already (its 'exit' handler).
    const thread = this.thread;
    if (calls.length === 0 || !thread) return;
    let posted = 0;
    postBatch(
      calls,
      (batch) => {
        thread.postMessage({ type: 'calls', calls: batch } satisfies ToWriter);
        posted += batch.length;
      },
      (call, e) => this.settle(call.id, (p) => p.reject(e)),
    );
    this.posted(posted);
  };

  /** `message` returns what to post now, or undefined when it queued it itself. */
  private send<T>(message: (id: number) => ToWriter | undefined, transfer: ArrayBuffer[], bytes: number): Promise<T> {
    // Not started yet (startSoon): this write starts it, and waits in its queue until it is ready.
    if (this.deferred) this.start();
    const thread = this.thread;
    if (!thread || this.closing) return Promise.reject(writerUnavailable(this.closing ? 'the server is shutting down' : 'the writer thread is restarting'));
    // One write alone is always taken, whatever its size (the body limit bounds it).
    if (this.pending.size >= this.limits.writes || (this.waitingBytes > 0 && this.waitingBytes + bytes > this.limits.bytes)) {
      const mb = (this.waitingBytes / 1024 / 1024).toFixed(1);
      return Promise.reject(writerUnavailable(`the server has ${this.pending.size} writes (${mb} MB) waiting for its disk, as many as it holds`));
    }
    this.waitingBytes += bytes;
    return new Promise<T>((resolve, reject) => {
      const m = message(this.pending.add({ resolve: resolve as (a: never) => void, reject, bytes }));
      if (m) {
        thread.postMessage(m, transfer);
        this.posted(1);
      }
    });
  }

  /** Stops the thread's background work (the scheduler drains its sends); requests are still answered. */
  stop(): Promise<void> {
    // Not started yet: it is not started for its background work now (a write may still start it).
    clearTimeout(this.startTimer);
    const thread = this.thread;
    // Not ready: it runs nothing yet, and close() ends it before it could.
    if (!thread || !this.started) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.onStopped = resolve;
      this.flushOutbox();
      thread.postMessage({ type: 'stop' } satisfies ToWriter);
    });
  }

  /** From the thread's last message: its checkpointer's last pass left every page of the file scrubbed. */
  private scrubbed: CleanEnd | undefined;

  /**
   * After the last request: the thread closes its connection and ends (terminated if it takes too
   * long). How its checkpointer's last pass ended, when it left every page of the file scrubbed.
   */
  async close(): Promise<CleanEnd | undefined> {
    this.closing = true;
    this.deferred = false;
    clearTimeout(this.startTimer);
    const thread = this.thread;
    if (!thread) return undefined;
    const exited = new Promise<void>((resolve) => thread.once('exit', () => resolve()));
    // It ends at once when it has not loaded its app yet (src/writer-thread-worker.ts). Terminated
    // only as a last resort: a thread stopped inside SQLite can take the process down with it.
    this.flushOutbox();
    thread.postMessage({ type: 'close' } satisfies ToWriter);
    const timer = setTimeout(() => void thread.terminate(), CLOSE_MS);
    await exited;
    clearTimeout(timer);
    return this.scrubbed;
  }

  private settle(id: number, how: (p: { resolve: (a: never) => void; reject: (e: unknown) => void }) => void): void {
    const p = this.pending.take(id);
    if (!p) return;
    this.waitingBytes -= p.bytes;
    how(p);
  }

  private received(m: FromWriter): void {
    switch (m.type) {
      case 'answer':
        this.answering();
        return this.settle(m.id, (p) => p.resolve(m.answer as never));
      case 'failed':
        return this.settle(m.id, (p) => p.reject(new Error(m.message)));
      case 'results':
        this.answering();
        for (const r of m.results) this.settle(r.id, (p) => (r.type === 'result' ? p.resolve(r.value as never) : p.reject(callErrorAgain(r.error))));
        return;
      case 'commit':
        return this.hooks.committed();
      case 'delivery':
        return this.hooks.delivery(m.report);
      case 'health':
        this.stoppedSince = undefined;
        return this.hooks.health(m.status);
      case 'ready':
        this.started = true;
        this.failedStarts = 0;
        if (this.stoppedSince !== undefined) {
          this.stoppedSince = undefined;
          this.hooks.health(undefined);
        }
        return this.markReady(m.workers);
      case 'stopped':
        this.onStopped?.();
        this.onStopped = undefined;
        return;
      case 'closed':
        this.scrubbed = m.scrubbed;
        return;
    }
  }
}

/** About how many bytes a call's arguments hold: the lengths of their strings, a few levels deep (a create's title, transcript and metadata). */
function textBytes(value: unknown, depth = 0): number {
  if (typeof value === 'string') return value.length;
  if (depth > 3 || value === null || typeof value !== 'object') return 0;
  let n = 0;
  for (const v of Array.isArray(value) ? value : Object.values(value)) n += textBytes(v, depth + 1);
  return n;
}
