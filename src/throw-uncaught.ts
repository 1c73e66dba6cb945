// For an entry's top-level promise (bin/reclib.ts, src/writer-thread-worker.ts): a failure nothing
// caught ends the process or thread as an uncaught error (exit 1, or the thread's 'error' for its
// starter), as a rejected top-level await did. Thrown on the next tick rather than left a rejection,
// which --unhandled-rejections=warn or none would only report, with exit 0 or a thread waiting forever.
export function throwUncaught(err: unknown): void {
  process.nextTick(() => {
    throw err;
  });
}
