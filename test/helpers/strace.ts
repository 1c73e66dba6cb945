// The system calls of a `strace -f` trace, each whole. With -f every line starts with the thread's
// id, and a call that another thread's call interrupted is split in two lines ("<unfinished ...>",
// then "<... name resumed>"); strace also pads before " = ". Used by test/db/power-loss.test.ts and
// test/e2e/durable-acks.test.ts. A trace without -f (no thread ids) reads the same way.

export interface StraceCall {
  /** The thread's id ('' without -f). */
  tid: string;
  /** The whole call, as strace would print it unsplit ("name(args) = result"). */
  text: string;
  /** The lines where it began and where it returned. */
  began: number;
  returned: number;
}

/**
 * The calls in the order they returned; `unfinished`: those still on their way when the trace
 * ended (a thread's call cut by the process's exit); `firstTid`: the first line's thread, the
 * traced program's main thread.
 */
export function straceCalls(trace: string): { calls: StraceCall[]; unfinished: StraceCall[]; firstTid: string | undefined } {
  const calls: StraceCall[] = [];
  const open = new Map<string, { text: string; began: number }>();
  let firstTid: string | undefined;
  trace.split('\n').forEach((raw, i) => {
    const threaded = /^(\d+) +(.*)$/.exec(raw);
    const tid = threaded?.[1] ?? '';
    const line = threaded?.[2] ?? raw;
    if (line === '') return;
    firstTid ??= tid;
    if (line.endsWith(' <unfinished ...>')) {
      open.set(tid, { text: line.slice(0, -' <unfinished ...>'.length), began: i });
      return;
    }
    const resumed = /^<\.\.\. \w+ resumed>(.*)$/.exec(line);
    const start = resumed ? open.get(tid) : undefined;
    if (resumed && !start) throw new Error(`a resumed call without its start: ${line.slice(0, 120)}`);
    if (start) open.delete(tid);
    calls.push(start ? { tid, text: start.text + resumed![1]!, began: start.began, returned: i } : { tid, text: line, began: i, returned: i });
  });
  const unfinished = [...open].map(([tid, { text, began }]) => ({ tid, text, began, returned: -1 }));
  return { calls, unfinished, firstTid };
}
