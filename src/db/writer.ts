// The write path. Every write of every service runs through Writer.write(), as one
// BEGIN IMMEDIATE transaction: a deferred transaction that reads and then writes fails at once
// with SQLITE_BUSY_SNAPSHOT when another connection (the CLI) committed in between, while
// IMMEDIATE takes the write lock up front and waits busy_timeout for it.
//
// Group commit (writeGrouped): most of a small write's cost is its COMMIT (the WAL frames of every
// page it touched, the FTS index's structure pages included, and now and then a checkpoint), and
// concurrent HTTP requests touch the same pages. So requests that arrive together are queued and
// committed in ONE transaction on the next macrotask: a request that fails rolls back only its
// own writes and rejects only its own promise, exactly as if it had run alone. (The group runs
// first without savepoints; only a group in which some member failed after changing rows runs
// again with a SAVEPOINT per member, see flush().) So a member must be safe to run twice: its
// effects outside the database are onCommit hooks, or caches that a rollback cannot mislead
// (search-terms.ts).
// Synchronous callers (CLI, scheduler, seeding) keep write().
//
// On the server's writer thread with --durability full, a CommitSync makes commits durable
// instead of SQLite's COMMIT (src/db/wal-sync.ts): a group is answered, and its onCommit hooks
// run, once the WAL's fsync that began after it returned, while the next group commits.
//
// beforeCommit hooks run last inside every transaction (after fn, or after every member of a
// group, outside their savepoints): work that is cheaper once per transaction than once per row,
// such as writing the rows noted in recordings_fts_pending to the FTS index in one statement.
//
// `now` is the transaction's time, read from the clock once when the transaction has its lock (as
// benbjohnson/wtf's tx.now): every row one change writes (the recording, its events, their
// deliveries) carries the same time, and so does every member of a group.
import { systemClock, type Clock } from '../clock';
import { BUSY_TIMEOUT_MS, type Db } from './open';
import { WriteHealth, writeFailureOf } from './write-health';

/** At most this many requests share one transaction (bounds the time the event loop is held). */
export const MAX_GROUP = 64;
/** Group size from which the next group waits GROUP_DELAY_MS for more members (see schedule()). */
export const GROUP_DELAY_AFTER = 4;
export const GROUP_DELAY_MS = 1;
/** A group counts as "the last one" for the delay only if it was flushed this recently. */
const BUSY_WINDOW_MS = 100;

interface Queued {
  fn: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Decides, under concurrent writes, when a group has gathered its members (the writer thread's
 * GroupGate, src/group-gate.ts). hold() may block this thread until more are worth waiting
 * for no longer; the members that arrived meanwhile join once their messages are read.
 */
export interface GroupHold {
  hold(queued: number, lastGroup: number): void;
  /** The same, waiting in the event loop instead of blocking it (a writer with a CommitSync, whose fsyncs end there). */
  holdAsync(queued: () => number, lastGroup: number): Promise<void>;
}

type Outcome = { ok: true; value: unknown; hooks: Array<() => void> } | { ok: false; error: unknown };

/**
 * Makes commits durable after the fact, for a connection that runs synchronous=NORMAL where FULL
 * was asked for (src/db/wal-sync.ts): flush() fsyncs the WAL off this thread and calls `done`
 * once it did; flushNow() fsyncs it before it returns.
 */
export interface CommitSync {
  flush(done: (error?: unknown) => void): void;
  flushNow(): void;
}

export class Writer {
  private afterCommit: Array<() => void> = [];
  private readonly preCommit: Array<() => void> = [];
  private readonly everyCommit: Array<() => void> = [];
  private depth = 0;
  private queue: Queued[] = [];
  private scheduled = false;
  /** Members answered by the last settled group, and when: they are the next group's likely members. */
  private lastGroupSize = 0;
  private lastFlushAt = 0;
  private sync: CommitSync | undefined;
  /** Settlements of committed groups waiting for the next fsync of the WAL (syncCommitsWith)... */
  private unsynced: Array<(error?: unknown) => void> = [];
  /** ...and those waiting for the one on its way. */
  private syncing: Array<(error?: unknown) => void> | undefined;
  private txNow: number | undefined;
  private gate: GroupHold | undefined;
  /** stopGroups(): no group starts any more. */
  private stopped = false;
  /**
   * The WAL's fsync failed (syncCommitsWith): until recovered() has put every commit in the
   * database file, no commit is known to be on the disk, so none is answered as if it were.
   */
  private syncFailure: unknown;

  /** A full disk or read-only file: every write fails the same way until one succeeds again. */
  readonly health = new WriteHealth();
  /** Rows changed by this connection's completed statements (sqlite3_total_changes): a grouped member that failed changed none if it has not moved. */
  private readonly totalChanges: () => number;

  constructor(
    readonly db: Db,
    /** The wait before a group under concurrent writes (tests lengthen it to stay deterministic). */
    private readonly groupDelayMs = GROUP_DELAY_MS,
    private readonly clock: Clock = systemClock,
  ) {
    const stmt = db.prepare<[], number>('SELECT total_changes()').pluck();
    this.totalChanges = () => stmt.get()!;
  }

  /** The current transaction's time (Unix ms), the same for every call within it; outside one, the clock's. */
  get now(): number {
    return this.txNow ?? this.clock.now();
  }

  /** Runs fn in one immediate transaction (nested calls join the outer one). No await inside. */
  write<T>(fn: () => T): T {
    if (this.depth > 0) return fn();
    const lost = this.recovered();
    if (lost !== undefined) throw this.health.refused(lost);
    const hooks: Array<() => void> = [];
    this.afterCommit = hooks;
    this.depth++;
    let result: T;
    try {
      result = this.db
        .transaction(() => {
          this.txNow = this.clock.now();
          const value = fn();
          this.runPreCommit();
          return value;
        })
        .immediate();
    } catch (error) {
      throw this.health.refused(error);
    } finally {
      this.depth--;
      this.afterCommit = [];
      this.txNow = undefined;
    }
    // Durable before it returns, as FULL's commit is (the groups' fsync may still be on its way).
    if (this.sync) {
      try {
        this.sync.flushNow();
      } catch (error) {
        this.syncFailure = error;
        throw this.health.refused(error, { committed: true });
      }
    }
    this.health.succeeded();
    this.announceCommit();
    for (const hook of hooks) hook();
    return result;
  }

  /**
   * Runs fn like write(), but fails at once with SQLITE_BUSY instead of waiting busy_timeout when
   * another connection holds the write lock: for optional work (index maintenance) that must not
   * block the event loop. Inside a transaction it joins it, as write() does.
   */
  writeNow<T>(fn: () => T): T {
    if (this.depth > 0) return fn();
    this.db.pragma('busy_timeout = 0');
    try {
      return this.write(fn);
    } finally {
      if (this.db.open) this.db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
  }

  /**
   * Runs fn like write(), but committed together with the other grouped writes queued before the
   * next macrotask (up to MAX_GROUP), as if each had its own savepoint. Resolves after the commit and
   * after fn's onCommit hooks ran; rejects with fn's error (only fn's writes are rolled back) or
   * with the error of a failed BEGIN/COMMIT (then nothing of the group was saved).
   * For request handlers; not inside a transaction (use write() there, which joins it).
   */
  writeGrouped<T>(fn: () => T): Promise<T> {
    if (this.depth > 0) throw new Error('writeGrouped() inside a transaction: use write(), which joins it');
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, resolve: resolve as (value: unknown) => void, reject });
      this.schedule();
    });
  }

  /**
   * Registers work that runs inside every transaction just before COMMIT (at startup, once per
   * hook). An error from it rolls the whole transaction back (the whole group, for grouped writes).
   */
  beforeCommit(hook: () => void): void {
    this.preCommit.push(hook);
  }

  private runPreCommit(): void {
    for (const hook of this.preCommit) hook();
  }

  /**
   * Registers work that runs after every commit of this connection (at startup, once per hook):
   * the writer thread tells the main thread that the file changed (src/writer-thread-worker.ts).
   */
  afterEachCommit(hook: () => void): void {
    this.everyCommit.push(hook);
  }

  private announceCommit(): void {
    for (const hook of this.everyCommit) hook();
  }

  /**
   * Under concurrent writes, `gate` decides how long the next group waits for more members instead
   * of the fixed groupDelayMs (see schedule()).
   */
  holdGroupsWith(gate: GroupHold): void {
    this.gate = gate;
  }

  /** Schedules work (e.g. waking the delivery scheduler) for after the current commit. */
  onCommit(hook: () => void): void {
    if (this.depth === 0) hook();
    else this.afterCommit.push(hook);
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // setImmediate, not a microtask: it runs after the poll phase, so every request whose bytes
    // arrived in this turn of the event loop has been parsed and queued its write by then.
    // Under concurrent writes (the last group had GROUP_DELAY_AFTER or more members), wait
    // GROUP_DELAY_MS first, as PostgreSQL's commit_delay does: the clients answered by the last
    // commit send their next writes within that time, and joining them halves the commits and
    // the FTS segments (32 connections otherwise settle into two alternating groups of ~16). A
    // lone writer never waits, nor does the first write after a quiet spell. On the writer
    // thread a gate decides instead (src/group-gate.ts): the main thread, on the same core, needs
    // longer than 1 ms to hand over the members a commit answered.
    const busy = this.lastGroupSize >= GROUP_DELAY_AFTER && performance.now() - this.lastFlushAt < BUSY_WINDOW_MS;
    const gate = this.gate;
    if (!busy) setImmediate(() => this.flush());
    else if (!gate) setTimeout(() => this.flush(), this.groupDelayMs);
    // The gate may block this thread while the members it waits for are on their way; they join
    // when their messages are read, in the turn before the flush. With a CommitSync it waits in
    // the event loop instead, where the fsync of the group before ends and its members are answered.
    else if (this.sync)
      setImmediate(() => void gate.holdAsync(() => this.queue.length, this.lastGroupSize).then(() => setImmediate(() => this.flush())));
    else
      setImmediate(() => {
        gate.hold(this.queue.length, this.lastGroupSize);
        setImmediate(() => this.flush());
      });
  }

  private flush(): void {
    this.scheduled = false;
    if (this.stopped) return;
    const batch = this.queue.splice(0, MAX_GROUP);
    // Without a sync of our own, the batch is answered as soon as it committed, right below.
    if (!this.sync) this.answered(batch.length);
    if (this.queue.length > 0) this.schedule();
    // After a failed fsync nothing more is committed until the commits before are durable again:
    // the batch is refused unsaved, as a full disk refuses it.
    const lost = this.recovered();
    if (lost !== undefined) {
      this.answered(batch.length);
      for (const member of batch) member.reject(this.health.refused(lost));
      return;
    }
    // First without a savepoint per member, as write() runs the writes that join it: a savepoint
    // makes SQLite copy every page a member changes (the same few leaves, again for each member),
    // and SAVEPOINT/RELEASE are statements of their own. Measured in process at 100,000
    // recordings, 32 creates a transaction: 214 µs a create with a savepoint each, 180 without. A
    // member refused before it changed a row is just rejected. If one fails after changing rows,
    // all is rolled back and the group runs again (at a new time), each member in a savepoint,
    // so the others commit without it, as if they had had savepoints from the start.
    if (!this.commit(batch, false)) this.commit(batch, true);
  }

  /**
   * Runs the batch in one transaction and settles every member. Without savepoints, the error of a
   * member that had changed rows rolls the whole transaction back and settles nobody: returns
   * false, for a run with them.
   */
  private commit(batch: Queued[], savepoints: boolean): boolean {
    const outcomes: Outcome[] = [];
    let failure: { error: unknown } | undefined;
    this.depth++;
    try {
      this.db.transaction(() => {
        this.txNow = this.clock.now();
        for (const member of batch) {
          const hooks: Array<() => void> = [];
          this.afterCommit = hooks;
          const outcome = savepoints ? this.runInSavepoint(member, hooks) : this.runPlain(member, hooks);
          outcomes.push(outcome);
          // Some errors (SQLITE_FULL, I/O errors) make SQLite roll back the whole transaction: the
          // members before this one lost their writes too, and the next must not run in
          // autocommit mode.
          if (!outcome.ok && !this.db.inTransaction) throw outcome.error;
        }
        this.runPreCommit();
      }).immediate();
    } catch (error) {
      if (error instanceof MemberFailed) return false;
      failure = { error: this.health.refused(error) };
    } finally {
      this.depth--;
      this.afterCommit = [];
      this.txNow = undefined;
    }
    if (failure) {
      // Nothing of the group was saved. BEGIN failed (no member ran; e.g. busy beyond
      // busy_timeout): all are rejected with its error. COMMIT failed, or SQLite rolled back in the
      // middle: the members that ran are rejected (with their own error if they had one) and
      // those that never ran are queued again for the next group.
      const ran = outcomes.length === 0 ? batch.length : outcomes.length;
      this.queue.unshift(...batch.slice(ran));
      if (this.queue.length > 0) this.schedule();
      for (let i = 0; i < ran; i++) {
        const o = outcomes[i];
        batch[i]!.reject(o && !o.ok ? this.health.refused(o.error) : failure.error);
      }
      return true;
    }
    // A group whose members all failed committed nothing: no sign that writes work again.
    const committed = outcomes.some((o) => o.ok);
    const settle = (syncError?: unknown): void => {
      if (this.sync) this.answered(batch.length);
      if (committed && syncError === undefined) {
        this.health.succeeded();
        this.announceCommit();
      }
      outcomes.forEach((o, i) => {
        const member = batch[i]!;
        if (!o.ok) return member.reject(this.health.refused(o.error));
        // Committed, but not known to be on the disk: refused, saying so. (A retry finds a create
        // by its Idempotency-Key.)
        if (syncError !== undefined) return member.reject(this.health.refused(syncError, { committed: true }));
        try {
          for (const hook of o.hooks) hook();
        } catch (error) {
          // Like write(), whose caller sees a hook's error after the commit.
          return member.reject(error);
        }
        member.resolve(o.value);
      });
    };
    // A group that committed nothing still waits for the fsync of the commits it read (a 410 for
    // a recording whose delete is on its way to the disk must not come before that delete's 204).
    if (this.sync && (committed || this.syncing !== undefined || this.unsynced.length > 0)) this.whenDurable(settle, committed);
    else settle();
    return true;
  }

  /**
   * Commits are made durable by `sync` instead of inside COMMIT (src/db/wal-sync.ts, for a
   * connection set to synchronous=NORMAL): a grouped write's promise settles, and its onCommit
   * hooks run, once the WAL was flushed after its group; write() flushes before it returns.
   */
  syncCommitsWith(sync: CommitSync): void {
    this.sync = sync;
  }

  /**
   * Settles after the next fsync of the WAL; one fsync at a time, each for every group committed
   * before it started. A group that committed nothing needs no fsync of its own: it settles with
   * the one that covers the last commit before it.
   */
  private whenDurable(settle: (error?: unknown) => void, committed = true): void {
    if (!committed && this.unsynced.length === 0 && this.syncing) {
      this.syncing.push(settle);
      return;
    }
    this.unsynced.push(settle);
    if (!this.syncing) this.flushWal();
  }

  private flushWal(): void {
    const waiting = this.unsynced;
    this.unsynced = [];
    this.syncing = waiting;
    this.sync!.flush((error) => {
      // settleNow() answered them meanwhile.
      if (this.syncing !== waiting) return;
      this.syncing = undefined;
      const failure = this.durable(error);
      for (const settle of waiting) settle(failure);
      if (this.unsynced.length > 0) this.flushWal();
    });
  }

  /**
   * What an fsync's result means for the commits it covered: its error (from then on every
   * commit waits for recovered()), or, after an earlier failure, whatever recovered() says; a
   * later fsync that succeeds proves nothing then.
   */
  private durable(error: unknown): unknown {
    if (error === undefined) return this.recovered();
    this.syncFailure = error;
    return error;
  }

  /**
   * After a failed fsync of the WAL: undefined once every commit is durable again, else the error
   * to refuse with. A later fsync cannot tell: Linux reports a failed writeback once and marks its
   * pages clean, so the WAL on the disk may lack a commit that readers see, and a power cut would
   * then lose every commit after it too (recovery stops at the first frame whose checksum fails).
   * A TRUNCATE checkpoint copies every commit into the database file, fsyncs that file, and starts
   * the WAL over; until one completes (readers of older snapshots can keep it from finishing,
   * busy_timeout), every write is refused before it is made, as on a full disk. Nothing to do
   * while fsyncs work.
   */
  private recovered(): unknown {
    if (this.syncFailure === undefined) return undefined;
    try {
      const [row] = this.db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>;
      if (row?.busy !== 0) return this.syncFailure;
    } catch (error) {
      // A storage error of its own (another I/O error, a full disk) is the better answer.
      return writeFailureOf(error) ? error : this.syncFailure;
    }
    this.syncFailure = undefined;
    return undefined;
  }

  /**
   * No group starts any more (a closing writer thread): what is queued stays unanswered, as if
   * the thread had ended first, rather than committing without being answered.
   */
  stopGroups(): void {
    this.stopped = true;
  }

  /** Flushes the WAL now and settles every group waiting for it, the one whose fsync is on its way included (a closing writer). */
  settleNow(): void {
    const waiting = [...(this.syncing ?? []), ...this.unsynced];
    this.syncing = undefined;
    this.unsynced = [];
    if (waiting.length === 0) return;
    let error: unknown;
    try {
      this.sync!.flushNow();
    } catch (e) {
      error = e;
    }
    const failure = this.durable(error);
    for (const settle of waiting) settle(failure);
  }

  /** `n` members were just answered: the next group waits for them under concurrent writes (schedule()). */
  private answered(n: number): void {
    this.lastGroupSize = n;
    this.lastFlushAt = performance.now();
  }

  /** A member in a savepoint of its own: on error it is rolled back to there (its writes only). */
  private runInSavepoint(member: Queued, hooks: Array<() => void>): Outcome {
    try {
      // A transaction function called inside a transaction runs as a SAVEPOINT.
      return { ok: true, value: this.db.transaction(member.fn)(), hooks };
    } catch (error) {
      return { ok: false, error };
    }
  }

  /**
   * A member without a savepoint. Refused before it changed a row (a 404, 409 or 412 is decided by
   * reading), there is nothing to roll back and the others go on; otherwise MemberFailed rolls the
   * whole group back for a run with savepoints.
   */
  private runPlain(member: Queued, hooks: Array<() => void>): Outcome {
    const changesBefore = this.totalChanges();
    let value: unknown;
    try {
      value = member.fn();
    } catch (error) {
      if (!this.db.inTransaction || this.totalChanges() !== changesBefore) throw new MemberFailed('a grouped write failed');
      return { ok: false, error };
    }
    // As better-sqlite3 refuses in a transaction function: its awaits would write outside.
    if (isThenable(value)) throw new MemberFailed('a grouped write returned a promise');
    // SQLite ended the transaction under the member without an error reaching it: the next member
    // must not run in autocommit mode. The run with savepoints tells who.
    if (!this.db.inTransaction) throw new MemberFailed('the transaction ended inside a grouped write');
    return { ok: true, value, hooks };
  }
}

/** A member failed in a group run without savepoints: the whole transaction is rolled back. */
class MemberFailed extends Error {}

const isThenable = (value: unknown): boolean =>
  typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
