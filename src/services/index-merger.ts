// FTS segment merging while `reclib serve` is idle.
//
// Inside each write FTS5's automerge (8, schema.sql) already merges as it goes, at a pace set by
// the amount written, so the index never falls behind however long writes go on. What is left is
// pre-paying that work: a merge that automerge started (at a million recordings, the top level's
// merge rewrites ~2 GB) goes on inside later writes, which then also read its cold pages. This
// worker runs the same merges in small 'merge' slices (usermerge 8: the levels automerge would
// merge, never more) once no text was indexed for IDLE_AFTER_MS and the event loop was mostly
// idle since the last look, so a burst of creates starts from a settled index. It stops at the
// first sign of load and between slices the event loop serves whatever arrived.
//
// It replaced a 64-page slice after every 64 index writes (a transaction of its own inside the
// burst): at 1M recordings creates went from 911-1,219/s to 1,051-1,367/s without it (3 rounds).
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import type { Core } from '../context';
import type { Worker } from '../server';
import type { RecordingStore } from '../store/recording-store';

/** Quiet time after the last index write before merging starts. */
export const IDLE_AFTER_MS = 250;
/** Pages per slice: a few ms even when the pages must be read from disk. */
export const SLICE_PAGES = 16;
/** Look for idleness this often; after a slice that did work, look again sooner. */
const CHECK_EVERY_MS = 100;
const AGAIN_AFTER_MS = 2;
/** Event-loop utilization since the last look above which the server counts as busy. */
export const BUSY_UTILIZATION = 0.25;

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

export class IndexMerger implements Worker {
  /** Merge work may be waiting (unknown at start: a merge may be in progress in the file). */
  private pending = true;
  private lastWriteAt = Number.NEGATIVE_INFINITY;
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(
    private readonly core: Core,
    private readonly store: RecordingStore,
    private readonly signals: IdleSignals = eventLoopSignals(),
  ) {}

  /** Text was indexed: merges may be due once the server is quiet. */
  noteWrite(): void {
    this.pending = true;
    this.lastWriteAt = this.signals.now();
  }

  start(): void {
    this.running = true;
    this.signals.utilization();
    this.later(CHECK_EVERY_MS);
  }

  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /**
   * One look: merges a slice if work may be waiting and the server is idle. Returns whether a
   * slice ran and did work. The timer calls it; tests call it directly.
   */
  tick(): boolean {
    const busy = this.signals.utilization() > BUSY_UTILIZATION;
    if (!this.pending || busy || this.signals.now() - this.lastWriteAt < IDLE_AFTER_MS) return false;
    const worked = this.slice();
    this.pending = worked;
    // The slice itself is not load: the next look measures only what came after it.
    this.signals.utilization();
    return worked;
  }

  /** One bounded merge slice in a transaction of its own; whether FTS5 did any work. */
  slice(pages = SLICE_PAGES): boolean {
    try {
      return this.core.writer.write(() => this.store.mergeSlice(pages));
    } catch {
      // Maintenance only: a busy or failing database skips this slice; the next look tries again.
      return false;
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
