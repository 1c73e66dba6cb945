// What reclib does when its own stdout or stderr cannot be written: the reader of a pipe went
// away (EPIPE: `reclib keys list | head -1`, `reclib serve | head`), or they go to a file on a
// full or failing disk (ENOSPC, EIO). Node reports each failed write as an 'error' event on
// process.stdout or process.stderr, and an 'error' nobody listens for ends the process with a
// stack trace: a server whose log pipe closed, or whose log disk filled up, stopped answering.
//
// - A one-shot command whose stdout fails ends with exit 1 (what it printed was not all read):
//   quietly on EPIPE, as Unix tools end when their reader has gone, with a message on stderr for
//   any other failure. A failing stderr is written to no more; the command goes on.
// - `serve` keeps serving (keepServing()): a stream that failed is written to no more, its lines
//   dropped, after a warning on the other stream if that one still works.
import { writeFailureReason } from '../files/write-all';
import { report } from './output';

type StreamName = 'stdout' | 'stderr';

const failed: Record<StreamName, boolean> = { stdout: false, stderr: false };
let serving: { warnOnStdout: boolean } | undefined;
let installed = false;

/** Whether `stream` has not failed: a writer skips a broken stream (each failed write would cost a system call and an error). */
export const writable = (stream: NodeJS.WriteStream): boolean => !failed[stream === process.stdout ? 'stdout' : 'stderr'];

/** Listens for failures of stdout and stderr (once per process); one-shot commands' behaviour until keepServing(). */
export function handleOutputErrors(): void {
  if (installed) return;
  installed = true;
  // Listeners stay for good: a stream that failed emits 'error' again at every later write.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => onFailure('stdout', e));
  process.stderr.on('error', (e: NodeJS.ErrnoException) => onFailure('stderr', e));
}

/**
 * `serve`: output that cannot be written never stops the server. `warnOnStdout`: whether a failing
 * stderr may be reported on stdout (not with serve --json, whose stdout holds one JSON object).
 */
export function keepServing(options: { warnOnStdout: boolean }): void {
  serving = options;
  handleOutputErrors();
}

function onFailure(name: StreamName, e: NodeJS.ErrnoException): void {
  if (failed[name]) return;
  failed[name] = true;
  const reason = e.code === 'EPIPE' ? 'its reader has gone (EPIPE)' : writeFailureReason(e);
  if (serving === undefined) {
    if (name === 'stderr') return;
    if (e.code === 'EPIPE') process.exit(1);
    report('output_failed', `cannot write to stdout: ${reason}`, 1);
  }
  const other: StreamName = name === 'stdout' ? 'stderr' : 'stdout';
  if (failed[other] || (other === 'stdout' && !serving.warnOnStdout)) return;
  process[other].write(`reclib: cannot write to ${name}: ${reason}; its lines are dropped from now on, the server goes on serving\n`);
}
