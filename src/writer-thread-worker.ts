// The writer thread's entry (started by src/writer-thread.ts; built as dist/writer-thread-worker.program.cjs,
// which dist/writer-thread-worker.mjs runs with V8's code cache: bin/load-program.ts).
// It listens before it loads the app (src/writer-thread-app.ts), so that a stop right after the
// start ends the thread at once instead of after the load, and so that no request handed over in
// between is lost: those wait here and are answered once the app is up.
import fs from 'node:fs';
import os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { throwUncaught } from './throw-uncaught';
import type { ToWriter, WriterThreadData } from './writer-thread';

/**
 * When both threads want the same core (one core, or a busy machine), the scheduler prefers the
 * main thread: reads, /healthz and streams are answered in milliseconds, while a write's own wait
 * is what it costs anyway. On Linux a nice value is per thread (/proc/thread-self names this one).
 */
const WRITER_NICE = 5;
try {
  const tid = Number(fs.readlinkSync('/proc/thread-self').split('/').pop());
  if (Number.isInteger(tid) && tid > 0) os.setPriority(tid, Math.max(os.getPriority(tid), WRITER_NICE));
} catch {
  // Not Linux, or not allowed: both threads keep the same priority.
}

const port = parentPort;
if (!port) throw new Error('writer-thread-worker runs as a worker thread');
let handle: ((m: ToWriter) => void) | undefined;
const early: ToWriter[] = [];
port.on('message', (m: ToWriter) => {
  if (handle) handle(m);
  else if (m.type === 'close') process.exit(0); // nothing is open yet
  else early.push(m);
});
import('./writer-thread-app')
  .then(({ startWriter }) => {
    handle = startWriter(port, workerData as WriterThreadData);
    for (const m of early.splice(0)) handle(m);
  })
  // A load or start that fails ends the thread with an error, which its starter hears.
  .catch(throwUncaught);
