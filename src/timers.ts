// Repeating timers, injectable like the clock: the event stream's pings and its check for other
// processes' commits run on these, so tests fire them by hand instead of waiting 15 s.

export interface Timers {
  /** Calls fn every `ms` until cleared; never keeps the process alive by itself. */
  every(ms: number, fn: () => void): () => void;
}

export const systemTimers: Timers = {
  every(ms, fn) {
    const handle = setInterval(fn, ms);
    handle.unref();
    return () => clearInterval(handle);
  },
};
