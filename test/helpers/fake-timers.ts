// Repeating timers driven by hand (src/timers.ts): advance(ms) fires every interval that falls due.
import type { Timers } from '../../src/timers';

interface Interval {
  ms: number;
  fn: () => void;
  next: number;
}

export class FakeTimers implements Timers {
  private now = 0;
  private readonly intervals = new Set<Interval>();

  every(ms: number, fn: () => void): () => void {
    const t: Interval = { ms, fn, next: this.now + ms };
    this.intervals.add(t);
    return () => this.intervals.delete(t);
  }

  /** Moves time on by `ms`, firing each due interval in time order. */
  advance(ms: number): void {
    const end = this.now + ms;
    for (;;) {
      let due: Interval | undefined;
      for (const t of this.intervals) if (t.next <= end && (!due || t.next < due.next)) due = t;
      if (!due) break;
      this.now = due.next;
      due.next += due.ms;
      due.fn();
    }
    this.now = end;
  }

  /** Intervals still running. */
  get active(): number {
    return this.intervals.size;
  }
}
