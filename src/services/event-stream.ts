// Live event streams (docs/decisions.md §10): GET /api/v2/events/stream sends the account's feed as
// Server-Sent Events. This hub keeps every open stream (services/feed-stream.ts: one stream, its
// bounded queue and the cut-off of stalled readers), wakes them when events commit, pings them and
// limits them to MAX_STREAMS_PER_CREDENTIAL per key or session.
//
// New events reach open streams without a polling loop per connection:
//   - this process's commits: every emitted event of an account with open streams registers an
//     on-commit hook (so a rolled-back write announces nothing); the hooks of one turn are folded
//     into one wake-up per account on the next microtask, and each of its streams reads its next page.
//   - the writer thread (src/writer-thread.ts), which commits the server's own writes on its
//     connection: it posts a message after each commit, and the hub checks at once (othersCommitted).
//   - other processes (the admin CLI writing to the same file): one timer for the whole hub reads
//     the newest event id every FOREIGN_CHECK_MS while any stream is open, and wakes every account
//     when it moved. That asks exactly "are there new events" (db/commit-watch.ts would also fire
//     for commits without any, a key's lastUsedAt for one) for one lookup of the primary key's end.
// Pings (`: ping`) go out every PING_MS, also re-checking the credential, so a revoked key or an
// ended session stops streaming.
import type { Core } from '../context';
import { AppError } from '../errors';
import type { Principal } from '../permissions';
import type { Worker } from '../worker';
import { systemTimers, type Timers } from '../timers';
import type { EventService } from './events';
import { FeedStream, type StreamHooks } from './feed-stream';

export const PING_MS = 15_000;
export const FOREIGN_CHECK_MS = 250;
export const MAX_STREAMS_PER_CREDENTIAL = 10;

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
      this.timers.every(FOREIGN_CHECK_MS, () => this.othersCommitted()),
    ];
  }

  private stopTimersNow(): void {
    for (const stop of this.stopTimers) stop();
    this.stopTimers = [];
  }

  /**
   * Another connection committed (or may have): the writer thread says so after each of its
   * commits, and the timer asks every FOREIGN_CHECK_MS for other processes. Wakes every account
   * with open streams when the newest event id moved.
   */
  othersCommitted(): void {
    if (this.size === 0) return;
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
