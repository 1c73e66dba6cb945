// Writes answered by the writer thread (src/writer-thread.ts, docs/architecture.md "The writer and
// its threads"). On `reclib serve`, the main thread authenticates a write, applies the rate limit
// and checks the permission, then hands the request as it came (method, URL, headers, body bytes)
// to the writer thread, whose own copy of the app answers it on its own connection; the answer
// comes back as bytes. An expensive write (an edit that rewrites index entries at a million
// recordings) then holds that thread's event loop, not the one that answers reads, /healthz and
// event streams. The writer thread's app does everything again except the rate limit (it has none:
// the request was counted here, and so was a sign-in's attempt against its account: a route's
// forwardedBudget), so its answers, errors included, are exactly the in-process ones.
import type { Context } from 'hono';
import { AppError } from '../errors';
import type { AppEnv, WriteForwarder } from './env';
import { nodeRequest } from './node-request';

/** Headers about this connection, not the request: the body is handed over whole, already read. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'te', 'trailer', 'upgrade', 'expect', 'proxy-connection']);

function requestHeaders(c: Context<AppEnv>, id: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const raw = nodeRequest(c)?.rawHeaders;
  if (raw) {
    for (let i = 0; i + 1 < raw.length; i += 2) out.push([raw[i]!.toLowerCase(), raw[i + 1]!]);
  } else {
    for (const pair of c.req.raw.headers) out.push(pair);
  }
  // The id this thread gave the request (the one its log line carries) is the answer's too.
  return [...out.filter(([name]) => !HOP_BY_HOP.has(name) && name !== 'x-request-id'), ['x-request-id', id]];
}

/** Answers an admitted write through the writer thread, with `body` (read by the caller; none for a route without one), adding this thread's rate-limit headers. */
export async function forwardWrite(c: Context<AppEnv>, writes: WriteForwarder, requestId: string, body: Buffer | undefined): Promise<Response> {
  const answer = await writes.forward({
    method: c.req.method,
    url: c.req.url,
    headers: requestHeaders(c, requestId),
    // A copy: the bytes are moved to the other thread, and a small Buffer shares its memory with others.
    body: body && body.length > 0 ? new Uint8Array(body) : undefined,
  });
  const headers = new Headers(answer.headers);
  for (const [name, value] of Object.entries(c.get('answerHeaders') ?? {})) headers.set(name, value);
  return new Response(answer.status === 204 || answer.status === 304 ? null : answer.body, { status: answer.status, headers });
}

/** The refusal of a write because the writer thread is gone (it is restarted) or the server is stopping: it counts against no rate limit (router.ts). */
export class WriterUnavailable extends AppError {}

/**
 * The answer when the writer thread is gone (it is restarted), too busy or the server is stopping.
 * `maybeSaved`: the thread ended with the write in its hands, which may have committed it.
 */
export const writerUnavailable = (why: string, { maybeSaved = false }: { maybeSaved?: boolean } = {}) =>
  new WriterUnavailable(
    'unavailable',
    maybeSaved
      ? `${why}; this write may or may not have been saved: retry shortly (the same Idempotency-Key finds a create that was; read the recording to see whether an edit or a delete was made)`
      : `${why}; nothing was saved by this request: retry shortly (the same Idempotency-Key is safe)`,
    { 'Retry-After': '1' },
  );
