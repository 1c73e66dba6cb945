// The writer thread's entry (started by src/writer-thread.ts; built as dist/writer-thread-worker.mjs).
// It listens before it loads the app (src/writer-thread-app.ts), so that a stop right after the
// start ends the thread at once instead of after the load, and so that no request handed over in
// between is lost: those wait here and are answered once the app is up.
import { parentPort, workerData } from 'node:worker_threads';
import type { ToWriter, WriterThreadData } from './writer-thread';

const port = parentPort;
if (!port) throw new Error('writer-thread-worker runs as a worker thread');
let handle: ((m: ToWriter) => void) | undefined;
const early: ToWriter[] = [];
port.on('message', (m: ToWriter) => {
  if (handle) handle(m);
  else if (m.type === 'close') process.exit(0); // nothing is open yet
  else early.push(m);
});
const { startWriter } = await import('./writer-thread-app');
handle = startWriter(port, workerData as WriterThreadData);
for (const m of early.splice(0)) handle(m);
