// FTS segment merging while `reclib serve` is idle.
//
// Inside each write FTS5's automerge (8, schema.sql) already merges as it goes, at a pace set by
// the amount written, so the index never falls behind however long writes go on. It leaves up to
// 7 segments on each level (up to 15 small ones: a small write adds too few pages to start a
// merge before FTS5's crisis merge at 16), ~21 at a million recordings, and every edit, delete
// and search looks its words up in each. This worker merges further once the server has been
// quiet for QUIET_MS, in small 'merge' slices (RecordingStore.mergeSlice): first a merge that
// automerge started (at a million recordings the top level's merge rewrites ~600 MB), which would
// otherwise go on inside later writes, then any level of four or more segments (usermerge 4, schema
// 7; schema.sql says why not two), and any level of two or more at least two levels below the
// largest segment (the fold, src/store/fts-structure.ts), so a library at rest keeps the largest
// segment, at most 3 on the level below it and one, sometimes two, on each level further down.
// After a long quiet spell with nothing left to merge it compacts the whole index into one
// segment, at most once a week (COMPACT_QUIET_MS says why).
//
// Quiet means the event loop was busy at most QUIET_UTILIZATION (5%) of the time: over the whole
// QUIET_MS before the first slice, and in the short gap before each next one, so work in that gap
// (a write; in process, requests too) ends the series. A slice runs on the event loop and FTS5
// bounds it by pages only between terms, so one that copies a common word's doclist can hold the
// loop for ~100 ms at a million recordings; in process a request that arrives during a slice
// waits for it. A look that comes much later than asked for (the loop was blocked, or the process
// was suspended) does not count as quiet: nothing was observed. On `reclib serve` this runs on
// the writer thread, whose loop stays quiet while the main thread answers reads (which do not
// wait for a slice: they share the machine with it): the main thread's requests
// (Core.requestsElsewhere) count as work too, beyond a light rate (QUIET_REQUESTS_PER_S, in
// bursts of up to QUIET_REQUEST_BURST), so merges step aside for traffic but a poller that reads
// does not keep them off. Requests are counted, not weighed: 20 expensive searches a second
// would still pass for quiet.
//
// Why not merge inside the writes (a 64-page slice after every 64 index writes, a transaction of
// its own inside the burst): creates at 1M recordings, 3 rounds each on one machine, ran at
// 911-1,219/s with those slices and 1,051-1,367/s without them.
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import type { Core } from '../context';
import type { Worker } from '../worker';
import type { RecordingStore } from '../store/recording-store';

/** How long the server must have been quiet before the first slice. */
export const QUIET_MS = 2_000;
/** Pages per slice (FTS5 finishes the term it is copying first, see above). */
export const SLICE_PAGES = 16;
/** Look for quiet this often; after a slice that did work, look again after a short gap. */
export const CHECK_EVERY_MS = 100;
const AGAIN_AFTER_MS = 10;
/** A look this much later than CHECK_EVERY_MS saw nothing (blocked loop, suspended process). */
const LATE_LOOK_MS = 5 * CHECK_EVERY_MS;
/** Event-loop utilization up to which the time since the last look counts as quiet. */
export const QUIET_UTILIZATION = 0.05;
/**
 * Requests a second the main thread may answer while the server still counts as quiet (on
 * `reclib serve`, where this runs on the writer thread), counted as a token bucket that refills at
 * this rate up to QUIET_REQUEST_BURST: a look that finds more requests than the bucket holds ends
 * the quiet spell (and a series of slices). Without it any request between two looks was work, so
 * a dashboard or a home-automation poller asking once a second kept every 2 s spell from being
 * quiet, and the index was never merged or compacted while it ran. Such a request is a fraction of
 * a millisecond of the main thread; the bench's lightest load is ~140 a second. The count is of
 * requests started and of the writer's answers written (writer-thread.ts), so a write counts twice.
 */
export const QUIET_REQUESTS_PER_S = 20;
/** Requests at once within QUIET_REQUESTS_PER_S: a dashboard's refresh of a few endpoints. */
export const QUIET_REQUEST_BURST = 5;
/**
 * Compaction at rest: after this long quiet (and with no merge left to do), the whole index is
 * merged into one segment on a level of its own, in slices of COMPACT_PAGES, at most once per
 * COMPACT_EVERY_MS and only if text was indexed since the last. Why: FTS5 puts a merge's output one
 * level up, beside whatever is there, so the largest segments share a level with the small ones
 * that bursts of writes promote to it, and once that level holds 8 (automerge) the merge inside
 * the writes takes them all: the whole index, 64 × levels pages at a time. At 1M recordings a burst
 * of creates left 19 segments with such a merge in progress, and edits' p50 went from 15-19 to 27.6
 * ms (bench/results-notes.md, 2026-11-26 evening). On an index compacted first, the same 60,000
 * creates left the largest segment alone on its level and 17 small ones below it, and edits (in
 * process) took 12.6 ms p50, 25 ms p99 against 13.8 and 41 on the seeded 3 segments. The cost: the
 * whole index rewritten (~300,000 pages, ~600 MB of WAL and ~6 s of CPU at 1M) in quiet time.
 */
export const COMPACT_QUIET_MS = 60_000;
/**
 * A week: each compaction adds a level to FTS5's structure (it moves every segment to a new top
 * level; FTS5 caps them at 64 and never removes one), and FTS5's merge work inside a write is 64
 * pages × levels per 64 pages written, so frequent compactions would make those steps larger. The
 * first is a week after the start, not at every start. Only its first slice is a compaction's
 * ('merge' with a negative count); the next ones go on with it as ordinary merges
 * (RecordingStore.continueCompaction says why: one compaction, one level).
 */
export const COMPACT_EVERY_MS = 7 * 24 * 3600_000;
export const COMPACT_PAGES = 64;

export interface IdleSignals {
  now(): number;
  /** Share of the time since the previous call that the event loop was busy (0-1). */
  utilization(): number;
}

function eventLoopSignals(): IdleSignals {
  let mark: EventLoopUtilization = performance.eventLoopUtilization();
  return {
    now: () => performance.now(),
    utilization: () => {
      const u = performance.eventLoopUtilization(mark).utilization;
      mark = performance.eventLoopUtilization();
      return u;
    },
  };
}

export interface MergerOptions {
  signals?: IdleSignals;
  /** Quiet time before the first slice (tests shorten it). */
  quietMs?: number;
  /** Quiet time before compaction (tests shorten it). */
  compactQuietMs?: number;
  /** A count of requests answered on another thread (default: Core.requestsElsewhere); beyond QUIET_REQUESTS_PER_S, work. */
  requestsElsewhere?: () => number;
}

export class IndexMerger implements Worker {
  /** Merge work may be waiting (unknown at start: a merge may be in progress in the file). */
  private pending = true;
  /** Since when the event loop has been quiet at every look (undefined: not quiet at the last look). */
  private quietSince: number | undefined;
  private lastLookAt: number;
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private readonly signals: IdleSignals;
  private readonly quietMs: number;
  private readonly requestsElsewhere: (() => number) | undefined;
  private seenElsewhere = 0;
  /** Requests the main thread may still answer in a quiet spell (QUIET_REQUESTS_PER_S), as of tokensAt. */
  private tokens = QUIET_REQUEST_BURST;
  private tokensAt = 0;
  private readonly compactQuietMs: number;
  /** When the last compaction began (signals' clock); the start counts as one (see COMPACT_EVERY_MS). */
  private compactedAt: number;
  /** Text was indexed since the last compaction began. */
  private writtenSinceCompaction = false;
  /** A compaction is under way: it goes on at every quiet spell until it is done. */
  private compacting = false;

  constructor(
    private readonly core: Core,
    private readonly store: RecordingStore,
    options: MergerOptions = {},
  ) {
    this.signals = options.signals ?? eventLoopSignals();
    this.quietMs = options.quietMs ?? QUIET_MS;
    this.compactQuietMs = options.compactQuietMs ?? COMPACT_QUIET_MS;
    this.requestsElsewhere = options.requestsElsewhere ?? core.requestsElsewhere;
    this.lastLookAt = this.signals.now();
    this.compactedAt = this.lastLookAt;
    this.fillBucket();
  }

  /** Text was indexed: merges may be due once the server is quiet. */
  noteWrite(): void {
    this.pending = true;
    this.writtenSinceCompaction = true;
  }

  start(): void {
    this.running = true;
    this.startLook();
    this.fillBucket();
    this.quietSince = undefined;
    this.later(CHECK_EVERY_MS);
  }

  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /**
   * One look: merges a slice if work may be waiting and the server has been quiet long enough.
   * Returns whether a slice ran and did work. The timer calls it; tests call it directly.
   */
  tick(): boolean {
    const now = this.signals.now();
    const calmElsewhere = this.elsewhereCalm(now);
    const quiet = this.signals.utilization() <= QUIET_UTILIZATION && now - this.lastLookAt <= LATE_LOOK_MS && calmElsewhere;
    this.quietSince = quiet ? (this.quietSince ?? this.lastLookAt) : undefined;
    this.lastLookAt = now;
    if (this.quietSince === undefined) return false;
    const quietFor = now - this.quietSince;
    let worked: boolean | undefined;
    if (this.compacting || this.pending) {
      if (quietFor < this.quietMs) return false;
      // A compaction under way is finished first (an ordinary slice would go on with it anyway:
      // FTS5 continues a merge in progress before it starts another).
      worked = this.compacting ? this.maintain(() => this.store.continueCompaction(COMPACT_PAGES)) : this.slice();
      if (worked !== undefined) {
        if (this.compacting) this.compacting = worked;
        else this.pending = worked;
      }
    } else if (this.compactionDue(now) && quietFor >= this.compactQuietMs) {
      worked = this.compactSlice();
      // Begun (or nothing to do): not due again for COMPACT_EVERY_MS, nor before new text.
      if (worked !== undefined) {
        this.compacting = worked;
        this.compactedAt = now;
        this.writtenSinceCompaction = false;
      }
    } else return false;
    // A failed slice (busy database) leaves the work pending and waits for a whole quiet spell.
    if (worked === undefined) this.quietSince = undefined;
    // The slice itself is not load: the next look measures only the gap after it.
    this.startLook();
    return worked === true;
  }

  private compactionDue(now: number): boolean {
    return this.writtenSinceCompaction && now - this.compactedAt >= COMPACT_EVERY_MS;
  }

  /** A full bucket, counting requests elsewhere from now on (at the start). */
  private fillBucket(): void {
    this.seenElsewhere = this.requestsElsewhere?.() ?? 0;
    this.tokens = QUIET_REQUEST_BURST;
    this.tokensAt = this.lastLookAt;
  }

  /**
   * The requests answered elsewhere since the previous look, slices included, fit in the bucket
   * (QUIET_REQUESTS_PER_S); true where nothing else answers requests. The count is an Int32 that
   * wraps (writer-thread.ts). An overdrawn bucket starts again empty.
   */
  private elsewhereCalm(now: number): boolean {
    if (!this.requestsElsewhere) return true;
    const count = this.requestsElsewhere();
    // Never negative, whatever the count did (it wraps; a reset would read as a credit).
    const answered = Math.max(0, (count - this.seenElsewhere) | 0);
    this.seenElsewhere = count;
    // Capped after the requests are taken, so a long look (a slice of hundreds of ms) refills for
    // its whole length before they are.
    this.tokens = Math.min(QUIET_REQUEST_BURST, this.tokens + (QUIET_REQUESTS_PER_S * Math.max(0, now - this.tokensAt)) / 1000 - answered);
    this.tokensAt = now;
    if (this.tokens >= 0) return true;
    this.tokens = 0;
    return false;
  }

  /**
   * The next look measures the event loop from now on (a slice is not load). Requests answered
   * elsewhere meanwhile still count: they are traffic the slice shared the machine with.
   */
  private startLook(): void {
    this.signals.utilization();
    this.lastLookAt = this.signals.now();
  }

  /**
   * One bounded merge slice in a transaction of its own: whether FTS5 did any work, or undefined
   * when it could not run. It never waits for the write lock (Writer.writeNow): another process
   * writing means the server is not idle, and waiting would block the event loop.
   */
  slice(pages = SLICE_PAGES): boolean | undefined {
    return this.maintain(() => this.store.mergeSlice(pages));
  }

  /** One slice of compaction (see COMPACT_QUIET_MS), as slice() runs one of merging. */
  compactSlice(pages = COMPACT_PAGES): boolean | undefined {
    return this.maintain(() => this.store.compactSlice(pages));
  }

  private maintain(work: () => boolean): boolean | undefined {
    // Maintenance waits while writes fail for lack of space: it would only take what room is left.
    if (this.core.writer.health.status) return undefined;
    try {
      return this.core.writer.writeNow(work);
    } catch {
      // Maintenance only: a busy, failing or closed database skips this slice.
      return undefined;
    }
  }

  private later(ms: number): void {
    this.timer = setTimeout(() => {
      if (!this.running) return;
      this.later(this.tick() ? AGAIN_AFTER_MS : CHECK_EVERY_MS);
    }, ms);
    this.timer.unref();
  }
}
