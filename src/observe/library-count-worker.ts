// The library count's worker thread (started by src/observe/library-count.ts, which says why it
// exists): a read-only connection of its own that answers each 'count' with the number of live
// recordings, so that a scrape of /metrics does not walk a million index entries on the event loop.
// Built by esbuild as dist/library-count-worker.mjs beside the bundle; run through tsx from source.
import { parentPort, workerData } from 'node:worker_threads';
import { openSqlite } from '../db/sqlite';

/** What the server passes at start: the database file and the counting query (store/metrics-store.ts). */
export interface LibraryCountWorkerData {
  file: string;
  sql: string;
}

/** What the server may send. */
export type LibraryCountCommand = 'count' | 'stop';

/** The answer to 'count'. */
export type LibraryCountReply = { n: number } | { error: string };

if (!parentPort) throw new Error('library-count-worker runs as a worker thread, started by src/observe/library-count.ts');
const port = parentPort;
const data = workerData as LibraryCountWorkerData;
const db = openSqlite(data.file, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = 5000');
const count = db.prepare<[], number>(data.sql).pluck();

port.on('message', (m: LibraryCountCommand) => {
  if (m === 'stop') {
    db.close();
    port.close();
    return;
  }
  let reply: LibraryCountReply;
  try {
    reply = { n: count.get() as number };
  } catch (e) {
    reply = { error: e instanceof Error ? e.message : String(e) };
  }
  port.postMessage(reply);
});
