// Live event streams (CONTRACT §10): GET /api/v2/events/stream sends the account's feed as
// Server-Sent Events. The feed table is the buffer: a stream remembers only the last event id it
// sent and reads the next page from the database when its reader has taken what it had, so a
// reconnect with that id resumes exactly (no gap, no repeat) and a slow reader costs no memory
// beyond one bounded queue.
//
// New events reach open streams without a polling loop per connection:
//   - this process's commits: every emitted event of an account with open streams registers an
//     on-commit hook (so a rolled-back write announces nothing); the hooks of one turn are folded
//     into one wake-up per account on the next microtask, and each of its streams reads its next page.
//   - other processes (the admin CLI writing to the same file): one timer for the whole hub reads
//     the newest event id every FOREIGN_CHECK_MS while any stream is open, and wakes every account
//     when it moved.
// Backpressure: each stream's queue holds at most STREAM_BUFFER_BYTES (plus the page being added);
// reading stops while it is full, and the HTTP adapter waits for the socket to drain before taking
// more. A reader that takes nothing for a whole ping interval while its queue is full is cut off
// (it reconnects and resumes from its last id). Pings (`: ping`) go out every PING_MS, also
// re-checking the credential, so a revoked key or ended session stops streaming.
import type { Core } from '../context';
import { AppError } from '../errors';
import type { Principal } from '../permissions';
import type { Worker } from '../server';
import type { EventRow } from '../store/event-store';
import { systemTimers, type Timers } from '../timers';
import { eventJson, type EventService } from './events';

export const PING_MS = 15_000;
export const FOREIGN_CHECK_MS = 250;
export const STREAM_BUFFER_BYTES = 64 * 1024;
export const MAX_STREAMS_PER_CREDENTIAL = 10;
/** Events read from the database at a time. */
const PAGE = 100;

const encoder = new TextEncoder();
const PING = encoder.encode(': ping\n\n');

/** One feed event as an SSE message: its id, its type as the event name, the feed item as data. */
export const sseMessage = (row: EventRow): string => `id: ${row.seq}\nevent: ${row.type}\ndata: ${JSON.stringify(eventJson(row))}\n\n`;

export interface StreamHooks {
  /** Asked at every ping: false (a revoked key, an ended session) ends the stream. */
  stillValid(): boolean;
  /**
   * Drops the connection at once (the HTTP layer destroys the socket). Without it a cut errors
   * the body, which the HTTP adapter reports as a failed response.
   */
  disconnect?: () => void;
}

interface StreamOwner {
  read(accountId: string, afterSeq: number, limit: number): EventRow[];
  release(stream: FeedStream): void;
}

class FeedStream {
  readonly body: ReadableStream<Uint8Array>;
  private controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  /** Ping intervals in a row that found the queue full with no read in between. */
  private stalledTicks = 0;
  private ended = false;

  constructor(
    readonly principal: Principal,
    private afterSeq: number,
    private readonly owner: StreamOwner,
    private readonly hooks: StreamHooks,
  ) {
    this.body = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.controller = controller;
        },
        // Called when the reader took chunks and the queue has room again: progress.
        pull: () => {
          this.stalledTicks = 0;
          this.fill();
        },
        // The client went away (the adapter cancels the body when the socket closes).
        cancel: () => this.finish(),
      },
      new ByteLengthQueuingStrategy({ highWaterMark: STREAM_BUFFER_BYTES }),
    );
  }

  /** Queues the events after the last one sent while the queue has room. */
  fill(): void {
    const c = this.controller;
    if (this.ended || !c) return;
    try {
      while ((c.desiredSize ?? 0) > 0) {
        const rows = this.owner.read(this.principal.accountId, this.afterSeq, PAGE);
        const last = rows[rows.length - 1];
        if (!last) return;
        let text = '';
        for (const row of rows) text += sseMessage(row);
        this.afterSeq = last.seq;
        c.enqueue(encoder.encode(text));
        if (rows.length < PAGE) return;
      }
    } catch {
      // The database went away (shutdown) or the stream was closed under us: end this stream only.
      this.end('cut');
    }
  }

  /** The ping interval: a ping, or the end of a stream whose reader stalled or whose credential ended. */
  tick(): void {
    const c = this.controller;
    if (this.ended || !c) return;
    if (!this.hooks.stillValid()) return this.end('close');
    if ((c.desiredSize ?? 0) <= 0) {
      if (++this.stalledTicks >= 2) this.end('cut');
      return;
    }
    c.enqueue(PING);
  }

  /**
   * close: the end of the response (when nothing is queued). cut: the connection is dropped now,
   * as a reader that is not reading would never take the queued bytes; it resumes from its last id.
   */
  end(how: 'close' | 'cut'): void {
    if (this.ended) return;
    const c = this.controller;
    this.finish();
    try {
      if (how === 'close' && (c?.desiredSize ?? 0) >= STREAM_BUFFER_BYTES) c?.close();
      else if (this.hooks.disconnect) this.hooks.disconnect();
      else c?.error(new Error('event stream reader too far behind'));
    } catch {
      // Already closed by the other side.
    }
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.owner.release(this);
  }
}

/** Every open stream of the process; a Worker so that `serve` closes them on shutdown. */
export class EventHub implements Worker {
  private readonly byAccount = new Map<string, Set<FeedStream>>();
  private readonly perCredential = new Map<string, number>();
  private readonly timers: Timers;
  private woken = new Set<string>();
  private stopTimers: Array<() => void> = [];
  private newestSeq = 0;
  private stopped = false;

  constructor(
    core: Core,
    private readonly events: EventService,
  ) {
    this.timers = core.timers ?? systemTimers;
    events.onEvent((row) => {
      if (this.byAccount.has(row.account_id)) core.writer.onCommit(() => this.wake(row.account_id));
    });
  }

  /** Open streams (for tests and metrics). */
  get size(): number {
    let n = 0;
    for (const set of this.byAccount.values()) n += set.size;
    return n;
  }

  /** A stream of the principal's account starting after `afterSeq` (undefined: after the newest event now). */
  open(principal: Principal, afterSeq: number | undefined, hooks: StreamHooks): ReadableStream<Uint8Array> {
    if (this.stopped) throw new AppError('unavailable', 'the server is shutting down; reconnect shortly');
    const open = this.perCredential.get(principal.credentialId) ?? 0;
    if (open >= MAX_STREAMS_PER_CREDENTIAL) {
      throw new AppError('rate_limited', `at most ${MAX_STREAMS_PER_CREDENTIAL} event streams may be open per credential; close one first`, { 'Retry-After': '5' });
    }
    if (this.size === 0) this.startTimers();
    const store = this.events.store;
    const stream = new FeedStream(principal, afterSeq ?? store.lastSeq(), {
      read: (account, after, limit) => store.page(account, after, limit),
      release: (s) => this.release(s),
    }, hooks);
    this.perCredential.set(principal.credentialId, open + 1);
    let set = this.byAccount.get(principal.accountId);
    if (!set) this.byAccount.set(principal.accountId, (set = new Set()));
    set.add(stream);
    return stream.body;
  }

  start(): void {}

  /** Shutdown: every stream ends (its reader gets what is queued) and no new one opens. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const set of [...this.byAccount.values()]) for (const s of [...set]) s.end('close');
    this.stopTimersNow();
  }

  /** New events of the account were committed: its streams read on, once per turn of the event loop. */
  private wake(accountId: string): void {
    if (this.woken.size === 0) queueMicrotask(() => this.flushWakes());
    this.woken.add(accountId);
  }

  private flushWakes(): void {
    const accounts = this.woken;
    this.woken = new Set();
    for (const account of accounts) for (const s of [...(this.byAccount.get(account) ?? [])]) s.fill();
  }

  private release(stream: FeedStream): void {
    const { accountId, credentialId } = stream.principal;
    const set = this.byAccount.get(accountId);
    if (!set?.delete(stream)) return;
    if (set.size === 0) this.byAccount.delete(accountId);
    const left = (this.perCredential.get(credentialId) ?? 1) - 1;
    if (left > 0) this.perCredential.set(credentialId, left);
    else this.perCredential.delete(credentialId);
    if (this.size === 0) this.stopTimersNow();
  }

  private startTimers(): void {
    this.newestSeq = this.events.store.lastSeq();
    this.stopTimers = [
      this.timers.every(PING_MS, () => {
        for (const set of [...this.byAccount.values()]) for (const s of [...set]) s.tick();
      }),
      this.timers.every(FOREIGN_CHECK_MS, () => this.checkForeignCommits()),
    ];
  }

  private stopTimersNow(): void {
    for (const stop of this.stopTimers) stop();
    this.stopTimers = [];
  }

  /** Events another process committed: the newest id moved without a wake-up of ours. */
  private checkForeignCommits(): void {
    let newest: number;
    try {
      newest = this.events.store.lastSeq();
    } catch {
      return; // the database is closing
    }
    if (newest === this.newestSeq) return;
    this.newestSeq = newest;
    for (const account of this.byAccount.keys()) this.wake(account);
  }
}
