// The answer of a recordings page (v1 and v2 listings and search). A page holds at most about
// PAGE_BYTES of JSON (recording-search.ts); a small one is written in one piece like any answer,
// a large one is streamed one recording at a time: each is read (a large listing leaves its rows
// to be read here, `later`) and turned into JSON only when the client has taken the one before
// (the node adapter waits for 'drain' between chunks) and after a turn of the event loop. So four
// clients reading 4 MB pages at once hold neither the loop (measured: reading a 4 MB page took
// ~24 ms and its JSON.stringify 18-60 ms on the 2-core VM) nor a copy of each page, and a client
// that stops reading stops the reading and rendering of its page.
import type { Context } from 'hono';
import type { RecordingRow } from '../services/recording-model';
import { LAZY_FROM_BYTES } from '../services/recording-search';
import type { LazyPage } from '../services/recordings';
import type { AppEnv } from './env';
import { jsonAnswer, requestId } from './router';


const textLength = (row: RecordingRow) => row.title.length + row.transcript.length + row.summary.length;

// Every streamed page of the process takes its turn here: one recording (read, JSON, UTF-8: up to
// ~10 ms for 1.5 MB) per turn of the event loop, whichever page it belongs to. With a turn per page
// instead, three pages being written made each turn three recordings long, and a request that
// arrived meanwhile waited for all three (bench:pages: 100-250 ms on /healthz).
const turns: Array<() => void> = [];
let turning = false;
function nextTurn(): void {
  turns.shift()?.();
  if (turns.length > 0) setImmediate(nextTurn);
  else turning = false;
}
function inTurn(job: () => void): void {
  turns.push(job);
  if (!turning) {
    turning = true;
    setImmediate(nextTurn);
  }
}

/** `{ "recordings": [...], "nextCursor": … }` for a route declared with `directAnswer`. */
export function recordingsPage(c: Context<AppEnv>, page: LazyPage, toJson: (row: RecordingRow) => unknown): Response {
  const { rows, later, load, nextCursor } = page;
  let text = 0;
  for (const row of rows) text += textLength(row);
  // Smaller pages (the common case, and the fast path) are written in one piece.
  if (later.length === 0 && text < LAZY_FROM_BYTES) return jsonAnswer(c, { recordings: rows.map(toJson), nextCursor });

  // The rows in hand, then the ones still to read; a row deleted meanwhile is left out.
  const pending: Array<RecordingRow | number | undefined> = [...rows, ...later];
  const encoder = new TextEncoder();
  let next = 0;
  let written = 0;
  const body = new ReadableStream<Uint8Array>(
    {
      pull: (controller) =>
        new Promise<void>((resolve) =>
          inTurn(() => {
            let row: RecordingRow | undefined;
            while (row === undefined && next < pending.length) {
              const item = pending[next];
              pending[next++] = undefined; // written: its text need not stay in memory
              row = typeof item === 'number' ? load(item) : item;
            }
            if (row) {
              controller.enqueue(encoder.encode(`${written++ === 0 ? '{"recordings":[' : ','}${JSON.stringify(toJson(row))}`));
            } else {
              controller.enqueue(encoder.encode(`${written === 0 ? '{"recordings":[' : ''}],"nextCursor":${JSON.stringify(nextCursor)}}`));
              controller.close();
            }
            resolve();
          }),
        ),
      cancel: () => {
        pending.length = 0;
      },
    },
    { highWaterMark: 0 },
  );
  return new Response(body, {
    status: 200,
    headers: { 'content-type': 'application/json', 'x-request-id': requestId(c), ...c.get('answerHeaders') },
  });
}
