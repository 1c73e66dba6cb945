// The checkpointer's worker thread (started by src/db/checkpointer.ts, which says why it exists).
// It has its own connection to the database file and, every `everyMs` or once `passFrames` frames
// were written (checkpoint-policy.ts passDue), copies committed WAL frames into the database file
// with a PASSIVE checkpoint; after a delete (an 'erase' message) and once at start-up it cuts the
// WAL back instead, so that deleted text leaves the WAL file too. It also zeroes what SQLite leaves
// of moved rows in pages' unused space (Scrub below, page-scrub.ts), in slices between passes.
//
// A module of its own, built by esbuild as dist/checkpointer-worker.mjs beside the bundle, and run
// from source through tsx in tests. It imports nothing of reclib at run time but the few lines of
// checkpoint-policy.ts (when to truncate; types apart, which esbuild drops), wal-index.ts (opening
// the -shm file) and sqlite.ts (opening the connection, with better-sqlite3's JavaScript, most of
// the file), so it loads fast.
import fs from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { framesSince, passDue, TruncationPlan, type WalPosition } from './checkpoint-policy';
import { PageScrubber, Scrub, type ScrubbedFile } from './page-scrub';
import { openSqlite } from './sqlite';
import { openWalIndex, walIndexReader } from './wal-index';

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
  /** The file as the last run's stop left it, every page scrubbed (src/db/scrub-mark.ts): no whole-file pass if it still has that stamp. */
  scrubbed?: ScrubbedFile;
}

/**
 * How the run's last pass ended ('finish'): with every page of the file scrubbed, the WAL at the
 * one frame of its own commit (`wal`: the server's close checks that nothing committed since),
 * and when a whole-file pass last went through the file; or not clean.
 */
export type Finished = { clean: false } | CleanEnd;
export type CleanEnd = { clean: true; wal: WalPosition; wholePassAt: number };

/**
 * What the server may send: a delete committed; the server stops; or the writers have closed and
 * this is the run's last pass ('finish': everything copied, the WAL cut back, the pages its frames
 * named scrubbed; reported with `finished`).
 */
export type CheckpointerCommand = 'erase' | 'stop' | 'finish';

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
  /** The answer to 'finish', the worker's last report. */
  finished?: Finished;
}

interface CheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
}

function run(port: NonNullable<typeof parentPort>, data: CheckpointerWorkerData): void {
  const db = openSqlite(data.file);
  // It never commits, so this is only said for clarity: its checkpoints are the passes below.
  db.pragma('wal_autocheckpoint = 0');
  const busyTimeout = db.pragma('busy_timeout', { simple: true }) as number;
  // The WAL is beside the real file (SQLite resolves symlinks).
  const walFile = `${realPath(data.file)}-wal`;
  const report = (r: CheckpointReport) => port.postMessage(r);
  const checkpoint = (mode: 'PASSIVE' | 'TRUNCATE') => (db.pragma(`wal_checkpoint(${mode})`) as CheckpointResult[])[0]!;
  const walSize = () => {
    try {
      return fs.statSync(walFile).size;
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
  // No scrubbing where the file cannot be opened for it (read-only, say): the WAL is then cut
  // with TRUNCATE, as before scrubbing existed.
  const scrub = ((): Scrub | undefined => {
    try {
      const scrubber = PageScrubber.open(data.file, shm, data.scrubbed);
      return scrubber && new Scrub(scrubber, openSqlite(data.file), db, data.erase.waitMs, walSize);
    } catch {
      return undefined;
    }
  })();
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

  const figures = () => {
    try {
      return scrub?.figures() ?? {};
    } catch {
      return {};
    }
  };

  const truncate = (): boolean => {
    const ok = scrub ? scrub.truncate(quiet, performance.now()) : truncateCheckpoint();
    if (ok) {
      last = -1;
      lastLog = -1;
      quiet = false;
      report({ log: 0, checkpointed: 0, truncated: true, ...figures() });
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
    else if (scrub) {
      try {
        if (scrub.due(quiet, performance.now()) && scrub.slice(performance.now())) report({ log: 0, checkpointed: 0, ...scrub.figures() });
      } catch {
        // An I/O error reading the files' sizes: gone through again with the whole file.
        scrub.scrubber.scrubAll();
      }
    }
  };

  // While the WAL moves (and for everyMs after it last did), looks every pollMs whether a pass is
  // due; otherwise (or when the WAL index cannot be read) passes every everyMs, as it always did.
  const tick = (slow: boolean) => {
    const now = walIndex?.();
    const t = performance.now();
    const moved = now !== undefined && (!seen || now.frames !== seen.frames || now.salt1 !== seen.salt1 || now.salt2 !== seen.salt2);
    if (moved) movedAt = t;
    seen = now;
    // Collected as the frames come, so that one another connection copies and lets the WAL
    // overwrite (Litestream's checkpoints) is seldom missed (page-scrub.ts).
    if (moved && scrub) {
      try {
        scrub.scrubber.collect();
      } catch {
        scrub.scrubber.scrubAll();
      }
    }
    if (slow || passDue(t, lastPassAt, data.everyMs, now && framesSince(atPass, now), data.passFrames)) pass();
    const nextSlow = !now || t - movedAt >= data.everyMs;
    timer = setTimeout(() => tick(nextSlow), nextSlow ? data.everyMs : data.pollMs);
  };

  /** The run's last pass (see CheckpointerCommand). */
  const finish = (): Finished => {
    try {
      if (!scrub) truncateCheckpoint();
      else {
        const wal = scrub.finish();
        const { wholePassAt } = scrub.scrubber;
        if (wal && wholePassAt !== undefined) return { clean: true, wal, wholePassAt };
      }
    } catch {
      // An I/O error: the next start's whole-file pass covers it.
    }
    return { clean: false };
  };

  port.on('message', (m: CheckpointerCommand) => {
    if (m === 'erase') return plan.eraseSoon(Date.now());
    clearTimeout(timer);
    if (m === 'finish') report({ log: 0, checkpointed: 0, finished: finish() });
    scrub?.close();
    db.close();
    port.close();
  });
  timer = setTimeout(() => tick(false), data.pollMs);
}

function realPath(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return file;
  }
}

if (!parentPort) throw new Error('checkpointer-worker runs as a worker thread, started by src/db/checkpointer.ts');
run(parentPort, workerData as CheckpointerWorkerData);
