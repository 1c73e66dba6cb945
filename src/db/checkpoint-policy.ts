// When the checkpointer worker truncates the WAL (src/db/checkpointer.ts says why), apart from the
// worker so that it can be tested with any clock: the worker itself runs on a real one.
//
// A truncation holds new writers up while it waits for the lock and for readers (at most waitMs)
// and while it copies what is left and fsyncs, so it is done after a quiet pass: no commit since
// the pass before, and every frame already in the database file, so nothing is left to copy. Two
// reasons to truncate: an erasure (a delete's text leaves the WAL file), due delayMs after the
// delete and done at a quiet pass, or at maxDelayMs whatever the writers do; and a shrink (the file
// grew past sizeLimit), at a quiet pass only. One that fails (a reader such as Litestream holds
// the WAL) is tried again after a backoff that doubles up to maxBackoffMs, quiet or not for an
// erasure, at a quiet pass for a shrink.

export interface TruncationTimes {
  /** From a delete (or start-up) to its erasure, if the writers are quiet then. */
  delayMs: number;
  /** From a delete to its erasure at the latest. */
  maxDelayMs: number;
  maxBackoffMs: number;
  /** A WAL file larger than this is shrunk at a quiet pass. */
  sizeLimit: number;
}

export type Truncation = 'erase' | 'shrink';

export class TruncationPlan {
  /** The erasure: when due if quiet, when due at the latest (null: nothing to erase). */
  private eraseAt: number | null;
  private eraseBy: number;
  private eraseBackoff: number;
  private shrinkAt = 0;
  private shrinkBackoff: number;

  /** Starts with an erasure due: a delete whose process died before its erasure ran. */
  constructor(
    private readonly t: TruncationTimes,
    now: number,
  ) {
    this.eraseAt = now + t.delayMs;
    this.eraseBy = now + t.maxDelayMs;
    this.eraseBackoff = this.shrinkBackoff = t.delayMs;
  }

  /** A delete committed: erase its text from the WAL (a series of deletes shares one; a pending retry keeps its time). */
  eraseSoon(now: number): void {
    if (this.eraseAt !== null) return;
    this.eraseAt = now + this.t.delayMs;
    this.eraseBy = now + this.t.maxDelayMs;
  }

  /** After a passive pass: the truncation to do now, if any (`walSize` is read only when it matters). */
  next(now: number, quiet: boolean, walSize: () => number): Truncation | null {
    if (this.eraseAt !== null && now >= this.eraseAt && (quiet || now >= this.eraseBy)) return 'erase';
    if (quiet && now >= this.shrinkAt && walSize() > this.t.sizeLimit) return 'shrink';
    return null;
  }

  /** The outcome of the truncation next() asked for. An erasure is also done by a successful shrink. */
  done(kind: Truncation, ok: boolean, now: number): void {
    if (ok) {
      this.eraseAt = null;
      this.eraseBackoff = this.shrinkBackoff = this.t.delayMs;
    } else if (kind === 'erase') {
      this.eraseBackoff = Math.min(this.eraseBackoff * 2, this.t.maxBackoffMs);
      this.eraseAt = now + this.eraseBackoff;
      this.eraseBy = Math.max(this.eraseBy, this.eraseAt);
    } else {
      this.shrinkAt = now + this.shrinkBackoff;
      this.shrinkBackoff = Math.min(this.shrinkBackoff * 2, this.t.maxBackoffMs);
    }
  }
}

/**
 * When the next passive pass is due: `everyMs` after the last one, or as soon as `passFrames`
 * frames were added to the WAL since it (`framesSince`; undefined when the WAL index cannot be
 * read). A pass copies what was written since the one before and then fsyncs the database file,
 * and the writer's next commit fsyncs the WAL behind that: the more a pass copies, the longer that
 * commit waits. Edits at 1M recordings write ~2 MB of WAL each; with passes every 1,000 / 100 / 25
 * ms, deletes (one connection) had a p99 of 76-119 / 48-49 / 38-40 ms (two runs each, 2026-11-26).
 * A fixed 25 ms cost imports (random pages, many rewritten between passes) 8% of their rate; a
 * bound on frames per pass copies often only while that much is written.
 */
export function passDue(now: number, lastPassAt: number, everyMs: number, framesSince: number | undefined, passFrames: number): boolean {
  return now - lastPassAt >= everyMs || (framesSince !== undefined && framesSince >= passFrames);
}

/** Where the WAL is: its frames (the WAL index's mxFrame) and its salts, which change whenever it starts over. */
export interface WalPosition {
  frames: number;
  salt1: number;
  salt2: number;
}

/**
 * Frames written from `before` to `now`: all of `now`'s when the WAL started over in between (a
 * writer's restart, or a truncation), which the salts tell even once the new WAL has grown past
 * the old count.
 */
export function framesSince(before: WalPosition, now: WalPosition): number {
  if (now.salt1 !== before.salt1 || now.salt2 !== before.salt2 || now.frames < before.frames) return now.frames;
  return now.frames - before.frames;
}
