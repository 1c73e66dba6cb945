// When the writer thread's next group has gathered its members (docs/architecture.md, "Group
// commit"). A transaction has a fixed cost: its commit writes the pages its members share again,
// and the search index gets one more segment to merge later. In process, 32 creates a transaction
// cost ~170 µs of CPU each, 16 ~190 and 8 ~240 (100,000 recordings). The writer used to wait a
// fixed 1 ms under concurrent writes; on one core the main thread, which parses the next requests,
// needs longer than that to hand over everyone answered by the last commit, so 32 connections
// settled into groups of ~18 (1 to 32) and each create paid for the commits of the small ones.
//
// The gate waits while the main thread is still at work, as the members it will hand over are on
// their way: it returns as soon as every member the last commit answered is back (they are what
// the load is made of), when the main thread has been quiet for QUIET_MS (nobody else is coming),
// or after HOLD_MS at most (a main thread busy with reads does not hold writes longer). It blocks
// the writer thread meanwhile (Atomics.wait), which is what lets the main thread have the core;
// when the writer's commits wait for an fsync on another thread (src/db/wal-sync.ts), it waits in
// the thread's event loop instead (holdAsync, Atomics.waitAsync), where that fsync's end is heard.
//
// The main thread's side is three Int32 of shared memory (WriterSignals): its activity (bumped at
// every request it starts, and when it is handed the results of a commit), the writes it has
// posted to the writer (calls and forwarded requests), and whether it is writing answers now (set
// when results arrive, cleared when that turn is over). Only a post wakes the gate early; the
// activity is only looked at, so that requests on the main thread cost no wake-up of the writer.

/** The slots of WriterThreadData.signals. */
export const SIGNAL = {
  /** Requests started on the main thread, and results it was handed (any change: it is at work). */
  activity: 0,
  /** Writes posted to the writer thread (calls and forwarded requests), in all. */
  posted: 1,
  /** 1 while the main thread is writing the answers of a commit's results. */
  answering: 2,
} as const;
export const SIGNAL_SLOTS = 3;

/** The main thread quiet this long: no more members are coming. */
export const QUIET_MS = 0.25;
/** The longest a group waits for more members. */
export const HOLD_MS = 4;

export interface GateClock {
  now(): number;
  /** Atomics.wait on `slot` while it holds `value`, at most `ms`. */
  wait(signals: Int32Array, slot: number, value: number, ms: number): void;
  /** The same without blocking the thread: its event loop goes on meanwhile (Atomics.waitAsync). */
  waitAsync(signals: Int32Array, slot: number, value: number, ms: number): Promise<void>;
}

/** Atomics.waitAsync (ES2024; in Node since 16), which the ES2023 lib does not declare. */
type WaitAsync = (typed: Int32Array, index: number, value: number, ms: number) => { async: false; value: string } | { async: true; value: Promise<string> };

const realClock: GateClock = {
  now: () => performance.now(),
  wait: (signals, slot, value, ms) => void Atomics.wait(signals, slot, value, ms),
  waitAsync: (signals, slot, value, ms) => {
    const r = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync(signals, slot, value, ms);
    return r.async ? r.value.then(() => undefined) : Promise.resolve();
  },
};

/** Where a hold stands (GroupGate.step). */
interface Holding {
  /** Members waiting in the writer's queue (those read from messages during an async hold included). */
  queued: () => number;
  expected: number;
  start: number;
  seen: number;
  quietSince: number;
}

export class GroupGate {
  /** Writes read from the main thread's messages so far (the other end of SIGNAL.posted). */
  private received = 0;

  constructor(
    private readonly signals: Int32Array,
    private readonly maxGroup: number,
    /** Posts the results already settled: the members they answer cannot come back before. */
    private readonly beforeHold: () => void,
    private readonly clock: GateClock = realClock,
  ) {}

  /** The writer thread read `n` writes from the main thread's messages. */
  receivedWrites(n: number): void {
    // Int32 arithmetic, as SIGNAL.posted wraps after 2^31 posts.
    this.received = (this.received + n) | 0;
  }

  /**
   * Blocks until the next group is worth committing: `queued` members wait here, and the last
   * group, of `lastGroup` members, was answered just now (see the file's header).
   */
  hold(queued: number, lastGroup: number): void {
    const holding = this.begin(() => queued, lastGroup);
    for (let wait = this.step(holding); wait; wait = this.step(holding)) this.clock.wait(this.signals, SIGNAL.posted, wait.posted, wait.ms);
  }

  /**
   * hold() without blocking the thread: for a writer whose commits are made durable by an fsync
   * on another thread (src/db/wal-sync.ts), whose completion must be heard meanwhile, as its
   * members are answered then. The thread waits in its event loop instead, which leaves the
   * core to the main thread as well.
   */
  async holdAsync(queued: () => number, lastGroup: number): Promise<void> {
    const holding = this.begin(queued, lastGroup);
    for (let wait = this.step(holding); wait; wait = this.step(holding)) await this.clock.waitAsync(this.signals, SIGNAL.posted, wait.posted, wait.ms);
  }

  private begin(queued: () => number, lastGroup: number): Holding {
    this.beforeHold();
    const start = this.clock.now();
    return { queued, expected: Math.min(this.maxGroup, queued() + lastGroup), start, seen: Atomics.load(this.signals, SIGNAL.activity), quietSince: start };
  }

  /** What to wait for next (a change of SIGNAL.posted from `posted`, at most `ms`), or undefined: the group is gathered. */
  private step(h: Holding): { posted: number; ms: number } | undefined {
    const { signals, clock } = this;
    const posted = Atomics.load(signals, SIGNAL.posted);
    // Posted but not read yet: they join in the turn before the flush.
    if (h.queued() + ((posted - this.received) | 0) >= h.expected) return undefined;
    const now = clock.now();
    if (now - h.start >= HOLD_MS) return undefined;
    const activity = Atomics.load(signals, SIGNAL.activity);
    if (activity !== h.seen || Atomics.load(signals, SIGNAL.answering) === 1) {
      h.seen = activity;
      h.quietSince = now;
    } else if (now - h.quietSince >= QUIET_MS) return undefined;
    return { posted, ms: Math.min(QUIET_MS, HOLD_MS - (now - h.start)) };
  }
}
