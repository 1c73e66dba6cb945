// The checkpointer's worker thread (started by src/db/checkpointer.ts, which says why it exists).
// It has its own connection to the database file and, every `everyMs` or once `passFrames` frames
// were written (checkpoint-policy.ts passDue), copies committed WAL frames into the database file
// with a PASSIVE checkpoint; after a delete (an 'erase' message) and once at start-up it truncates
// the WAL instead, so that deleted text leaves the WAL file too.
//
// A module of its own, built by esbuild as dist/checkpointer-worker.mjs beside the bundle, and run
// from source through tsx in tests. It imports nothing of reclib at run time but the few lines of
// checkpoint-policy.ts (when to truncate; types apart, which esbuild drops), wal-index.ts (opening
// the -shm file) and sqlite.ts (opening the connection, with better-sqlite3's JavaScript, most of
// the file), so it loads fast.
import fs from 'node:fs';
import os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { framesSince, passDue, TruncationPlan, type WalPosition } from './checkpoint-policy';
import { PageScrubber, walOfOneFrame } from './page-scrub';
import { openSqlite } from './sqlite';
import { openWalIndex } from './wal-index';

/** What the server passes at start. */
export interface CheckpointerWorkerData {
  file: string;
  /** A passive pass at least this often while the WAL changes. */
  everyMs: number;
  /** And sooner, once this many frames were added since the last pass (looked for every pollMs). */
  passFrames: number;
  pollMs: number;
  /** Checkpoint passes in a row that may fail before the worker gives up (by throwing). */
  maxFailures: number;
  /** A WAL file larger than this is truncated at the next quiet pass (the server's writers do not cut it back, see checkpointer.ts). */
  sizeLimit: number;
  erase: {
    /** From an 'erase' message (or start-up) to the truncation, if the writers are quiet then. */
    delayMs: number;
    /** From an 'erase' message to the truncation at the latest, quiet or not. */
    maxDelayMs: number;
    /** How long a truncation may wait for the write lock and for readers. */
    waitMs: number;
    maxBackoffMs: number;
  };
}

/** What the server may send: a delete committed, or the server stops. */
export type CheckpointerCommand = 'erase' | 'stop';

/** What one checkpoint pass reports to the server (tests listen for it). */
export interface CheckpointReport {
  /** Frames in the WAL, and how many of them are now in the database file. */
  log: number;
  checkpointed: number;
  /** The pass truncated the WAL (an erasure): to zero bytes, or to the one frame of the commit that made it start over. */
  truncated?: true;
  /** Pages whose unallocated space is still to be scrubbed (page-scrub.ts), when a slice ran. */
  scrubBacklog?: number;
  /** Whole-file scrubs begun because frames were copied before this thread saw them. */
  scrubMissed?: number;
}

interface CheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
}

function run(port: NonNullable<typeof parentPort>, data: CheckpointerWorkerData): void {
  const db = openSqlite(data.file);
  const busyTimeout = db.pragma('busy_timeout', { simple: true }) as number;
  const report = (r: CheckpointReport) => port.postMessage(r);
  const checkpoint = (mode: 'PASSIVE' | 'TRUNCATE') => (db.pragma(`wal_checkpoint(${mode})`) as CheckpointResult[])[0]!;
  const walSize = () => {
    try {
      return fs.statSync(`${data.file}-wal`).size;
    } catch {
      return 0;
    }
  };
  let timer: NodeJS.Timeout;
  let last = -1;
  let failures = 0;
  // Quiet: the last pass found no frame the one before had not (no commit in between) and every
  // frame in the database file, so a truncation has nothing to copy and holds the writers up only
  // for the truncation itself.
  let lastLog = -1;
  let quiet = false;
  const plan = new TruncationPlan({ ...data.erase, sizeLimit: data.sizeLimit }, Date.now());
  const shm = openWalIndex(data.file);
  const walIndex = walIndexReader(shm);
  const scrubber = PageScrubber.open(data.file, shm);
  const scrub = scrubber && new Scrub(scrubber, openSqlite(data.file), db, data.erase.waitMs, data.sizeLimit, walSize);
  // Pass timing on the monotonic clock (a wall clock set back must not hold passes, and with them
  // the truncations, up); the truncation plan keeps wall-clock times, as the server's messages do.
  let lastPassAt = performance.now();
  // Frames in the WAL at start count as new: a WAL left large by the last run gets a pass at once.
  let atPass: WalPosition = { frames: 0, salt1: -1, salt2: -1 };
  let seen: WalPosition | undefined;
  let movedAt = lastPassAt;

  /** A TRUNCATE checkpoint; whether it emptied the WAL file. */
  const truncateCheckpoint = (): boolean => {
    db.pragma(`busy_timeout = ${data.erase.waitMs}`);
    try {
      return checkpoint('TRUNCATE').busy === 0;
    } catch {
      // SQLITE_BUSY or a transient I/O error: tried again later.
      return false;
    } finally {
      db.pragma(`busy_timeout = ${busyTimeout}`);
    }
  };

  const truncate = (): boolean => {
    const ok = scrub ? scrub.truncate() : truncateCheckpoint();
    if (ok) {
      last = -1;
      lastLog = -1;
      quiet = false;
      report({ log: 0, checkpointed: 0, truncated: true, ...scrub?.figures() });
    }
    return ok;
  };

  const pass = () => {
    const t = Date.now();
    lastPassAt = performance.now();
    atPass = walIndex?.() ?? atPass;
    try {
      scrub?.scrubber.collect();
      const r = checkpoint('PASSIVE');
      scrub?.scrubber.checkpointed(r);
      failures = 0;
      if (r.checkpointed !== last && r.log > 0) report({ log: r.log, checkpointed: r.checkpointed });
      last = r.checkpointed;
      quiet = r.log === lastLog && r.checkpointed === r.log;
      lastLog = r.log;
    } catch (e) {
      // Busy or a transient I/O error: the next pass tries again. Failing every time, the worker
      // ends (uncaught), and the server takes its usual autocheckpoint back.
      if (++failures >= data.maxFailures) throw e;
      quiet = false;
    }
    const truncation = plan.next(t, quiet, walSize);
    if (truncation) plan.done(truncation, truncate(), Date.now());
    else if (scrub?.due(quiet)) {
      if (scrub.slice(quiet)) report({ log: 0, checkpointed: 0, ...scrub.figures() });
    }
  };

  // While the WAL moves (and for everyMs after it last did), looks every pollMs whether a pass is
  // due; otherwise (or when the WAL index cannot be read) passes every everyMs, as it always did.
  const tick = (slow: boolean) => {
    const now = walIndex?.();
    const t = performance.now();
    if (now && (!seen || now.frames !== seen.frames || now.salt1 !== seen.salt1 || now.salt2 !== seen.salt2)) movedAt = t;
    seen = now;
    if (slow || passDue(t, lastPassAt, data.everyMs, now && framesSince(atPass, now), data.passFrames)) pass();
    const nextSlow = !now || t - movedAt >= data.everyMs;
    timer = setTimeout(() => tick(nextSlow), nextSlow ? data.everyMs : data.pollMs);
  };

  port.on('message', (m: CheckpointerCommand) => {
    if (m === 'erase') {
      scrub?.urgent();
      return plan.eraseSoon(Date.now());
    }
    if (m !== 'stop') return;
    clearTimeout(timer);
    scrub?.close();
    db.close();
    port.close();
  });
  timer = setTimeout(() => tick(false), data.pollMs);
}

/** Bytes of pages a slice reads while writes come (it holds the write lock meanwhile: ~1 ms), and while the writers are quiet. */
const SCRUB_BUSY_BYTES = 1024 * 1024;
const SCRUB_QUIET_BYTES = 16 * 1024 * 1024;

/**
 * The SQL side of scrubbing (page-scrub.ts does the file side): a second connection, `locker`,
 * takes the write lock around each slice, so that no commit adds frames and no checkpoint writes
 * a page meanwhile, and then commits a change of nothing (user_version set to itself), so that
 * every other connection sees the WAL changed and drops the pages it had cached, stale bytes
 * included: a writer that kept a stale copy of a scrubbed page would write it back with its next
 * change of that page.
 *
 * It also truncates the WAL for an erasure, in place of a TRUNCATE checkpoint: that checkpoint
 * copies frames committed after the last collect() and then empties the WAL, so they could never
 * be collected. Instead, with the write lock held, the frames are collected and all copied
 * (PASSIVE); then a transaction begun on a WAL with every frame copied makes it start over at its
 * commit, and `journal_size_limit = 0` cuts the file to that commit's one frame.
 */
class Scrub {
  private isUrgent = false;
  private readonly pageSize: number;

  constructor(
    readonly scrubber: PageScrubber,
    private readonly locker: ReturnType<typeof openSqlite>,
    private readonly db: ReturnType<typeof openSqlite>,
    waitMs: number,
    private readonly sizeLimit: number,
    private readonly walSize: () => number,
  ) {
    locker.pragma(`busy_timeout = ${waitMs}`);
    locker.pragma('journal_size_limit = -1');
    this.pageSize = locker.pragma('page_size', { simple: true }) as number;
  }

  /** A delete committed: its text may be in a page's unallocated space, so slices run at every pass until none is left. */
  urgent(): void {
    this.isUrgent = true;
  }

  /** Whether a slice is due at this pass: after a delete until the backlog is gone, and at quiet passes. */
  due(quiet: boolean): boolean {
    if (this.scrubber.backlog === 0) {
      this.isUrgent = false;
      return false;
    }
    return quiet || this.isUrgent;
  }

  figures(): Pick<CheckpointReport, 'scrubBacklog' | 'scrubMissed'> {
    return { scrubBacklog: this.scrubber.backlog, scrubMissed: this.scrubber.missed };
  }

  /** Runs `fn` holding the write lock; undefined if the lock could not be had within waitMs. */
  private underWriteLock<T>(fn: () => T): T | undefined {
    try {
      this.locker.exec('BEGIN IMMEDIATE');
    } catch {
      return undefined;
    }
    try {
      return fn();
    } finally {
      if (this.locker.inTransaction) this.locker.exec('COMMIT');
    }
  }

  /** A commit of nothing: the WAL changes, so other connections drop their cached pages. */
  private touch(): void {
    this.locker.pragma(`user_version = ${this.locker.pragma('user_version', { simple: true }) as number}`);
  }

  /**
   * One slice (a bigger one when the writers are quiet); whether it ran. If every frame was
   * copied, the commit makes the WAL start over, and cuts the file back as the server's writers
   * would (at a quiet pass, to that commit's one frame, as an erasure does).
   */
  slice(quiet: boolean): boolean {
    return (
      this.underWriteLock(() => {
        const changed = this.scrubber.slice((quiet ? SCRUB_QUIET_BYTES : SCRUB_BUSY_BYTES) / this.pageSize);
        if (changed) this.commitTouch(quiet ? 0 : this.sizeLimit);
        return changed !== undefined;
      }) ?? false
    );
  }

  /** The touch, committed with the WAL's size limit set for it (the limit applies only if the commit makes the WAL start over). */
  private commitTouch(sizeLimit: number): void {
    this.locker.pragma(`journal_size_limit = ${sizeLimit}`);
    try {
      this.touch();
      this.locker.exec('COMMIT');
    } finally {
      this.locker.pragma('journal_size_limit = -1');
    }
  }

  /** The erasure's truncation (see above), with a slice on the way; whether the WAL is now cut back. */
  truncate(): boolean {
    try {
      const copied = this.underWriteLock(() => {
        this.scrubber.collect();
        const r = (this.db.pragma('wal_checkpoint(PASSIVE)') as CheckpointResult[])[0]!;
        this.scrubber.checkpointed(r);
        return r.checkpointed === r.log;
      });
      // A reader of an older snapshot holds frames back: tried again later.
      if (!copied) return false;
      return (
        this.underWriteLock(() => {
          const state = this.scrubber.collect();
          // A writer came in between the two locks: its frames are not copied yet.
          if (!state || state.backfilled !== state.mxFrame) return false;
          this.scrubber.slice(SCRUB_QUIET_BYTES / this.pageSize);
          this.scrubber.endsHere();
          this.commitTouch(0);
          // Not cut back if a reader was using the WAL at the commit: it did not start over.
          return this.walSize() <= walOfOneFrame(this.pageSize);
        }) ?? false
      );
    } catch {
      // A transient I/O error: tried again later.
      if (this.locker.inTransaction) this.locker.exec('ROLLBACK');
      return false;
    }
  }

  close(): void {
    this.locker.close();
    this.scrubber.close();
  }
}

/**
 * The WAL index header's mxFrame and salts, read from the -shm file as src/db/commit-watch.ts
 * reads it (a plain read sees SQLite's shared mapping on Linux and macOS; the header is in native
 * byte order: https://sqlite.org/walformat.html); undefined elsewhere or when the file cannot be
 * opened, and then passes come every everyMs only. A torn read costs at most one pass too many
 * or too few.
 */
function walIndexReader(fd: number | undefined): (() => WalPosition | undefined) | undefined {
  if (fd === undefined) return undefined;
  const header = Buffer.alloc(40);
  const u32 = os.endianness() === 'LE' ? (at: number) => header.readUInt32LE(at) : (at: number) => header.readUInt32BE(at);
  return () => {
    try {
      if (fs.readSync(fd, header, 0, 40, 0) < 40) return undefined;
    } catch {
      return undefined;
    }
    return { frames: u32(16), salt1: u32(32), salt2: u32(36) };
  };
}

if (!parentPort) throw new Error('checkpointer-worker runs as a worker thread, started by src/db/checkpointer.ts');
run(parentPort, workerData as CheckpointerWorkerData);
