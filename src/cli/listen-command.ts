// `reclib listen --url URL --forward-to URL [--events a,b]` (docs/decisions.md §10): test a webhook
// consumer on a laptop without a public HTTPS address. It follows the server's live event stream
// (GET /api/v2/events/stream, key from RECLIB_API_KEY) and POSTs each event to --forward-to,
// signed by the same module as real deliveries (Service-Signature and the Standard Webhooks
// headers) with a secret made at start and printed once. The body is the feed item, which is the
// default webhook payload. One line per forward; a dropped stream is resumed after the last event
// id with growing pauses (nothing missed, nothing forwarded twice); Ctrl-C or SIGTERM exits 0.
// Forwards go one at a time in feed order, and the stream is not read meanwhile (the server holds
// what comes in the meantime), so a slow consumer slows the stream instead of piling up here.
import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { ConfigError } from '../config';
import { signDelivery } from '../delivery/signing';
import { AppError } from '../errors';
import { EVENT_TYPES, PAST_THE_END } from '../services/events';
import { fail } from './output';
import { commaList } from './shared';
import { SseParser, type SseEvent } from './sse-parser';

const STREAM_PATH = '/api/v2/events/stream';
export const FIRST_RETRY_MS = 500;
const MAX_RETRY_MS = 30_000;
const FORWARD_TIMEOUT_MS = 10_000;

export interface ListenOptions {
  /** The stream endpoint (URL + /api/v2/events/stream). */
  stream: URL;
  forwardTo: URL;
  /** Event types to forward; undefined: all. */
  events: ReadonlySet<string> | undefined;
  json: boolean;
  key: string;
}

export interface ListenIo {
  out(line: string): void;
  err(line: string): void;
  /** Aborted by SIGINT/SIGTERM: listen() returns. */
  signal: AbortSignal;
}

function httpUrl(flag: string, value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${flag}: "${value}" is not a URL (e.g. http://127.0.0.1:8080)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`${flag}: must be an http: or https: URL`);
  return url;
}

/** Checks the flags and the environment: every problem here is a usage error (exit 2). */
export function listenOptions(flags: { url: string; forwardTo: string; events?: string; json?: boolean }, env: NodeJS.ProcessEnv): ListenOptions {
  const key = env.RECLIB_API_KEY?.trim();
  if (!key) throw new ConfigError('RECLIB_API_KEY is not set: put an API key (rlk_…) with the events:read permission in it');
  const stream = httpUrl('--url', flags.url);
  const base = stream.pathname.replace(/\/+$/, '');
  stream.pathname = base.endsWith(STREAM_PATH) ? base : `${base}${STREAM_PATH}`;
  let events: Set<string> | undefined;
  if (flags.events !== undefined) {
    events = new Set(commaList(flags.events));
    const unknown = [...events].filter((t) => !(EVENT_TYPES as readonly string[]).includes(t));
    if (events.size === 0 || unknown.length > 0) throw new ConfigError(`--events: ${unknown.join(', ') || 'empty'}; event types are ${EVENT_TYPES.join(', ')}`);
  }
  return { stream, forwardTo: httpUrl('--forward-to', flags.forwardTo), events, json: flags.json === true, key };
}

/** A fresh signing secret in the subscriptions' format: whsec_ + standard base64 of 32 bytes. */
export const newSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });

const reason = (e: unknown): string => {
  const err = e as Error & { cause?: { code?: string; message?: string } };
  return err.cause?.code ?? err.cause?.message ?? err.message;
};

/** POSTs one event to the consumer, signed as a delivery, and prints its line. */
async function forward(o: ListenOptions, io: ListenIo, secret: string, e: SseEvent): Promise<void> {
  let item: { recordingId?: string } = {};
  try {
    item = JSON.parse(e.data) as { recordingId?: string };
  } catch {
    // Not JSON: forwarded as it came; the line shows no recording id.
  }
  const started = performance.now();
  let status: number | null = null;
  let error: string | undefined;
  try {
    const res = await fetch(o.forwardTo, {
      method: 'POST',
      headers: { ...signDelivery(secret, e.id, e.data, Math.floor(Date.now() / 1000)), 'user-agent': 'reclib-listen' },
      body: e.data,
      // As real deliveries: a redirect is the consumer's answer, not a place to go.
      redirect: 'manual',
      signal: AbortSignal.any([io.signal, AbortSignal.timeout(FORWARD_TIMEOUT_MS)]),
    });
    status = res.status;
    await res.arrayBuffer().catch(() => undefined);
  } catch (err) {
    error = reason(err);
  }
  if (io.signal.aborted) return; // stopped mid-forward: no line for a forward we cut short
  const ms = Math.round(performance.now() - started);
  const recordingId = item.recordingId ?? '-';
  if (o.json) io.out(JSON.stringify({ eventId: e.id, type: e.event, recordingId, status, ms, ...(error ? { error } : {}) }));
  else io.out(`${status ?? 'ERR'} ${e.event} ${recordingId} ${ms} ms${error ? ` (${error})` : ''}`);
}

/** Reads one connection's events, forwarding each before reading on; returns when the stream ends. */
async function follow(o: ListenOptions, io: ListenIo, secret: string, body: ReadableStream<Uint8Array>, seen: (id: string) => void): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const ready: SseEvent[] = [];
  const parser = new SseParser((e) => ready.push(e));
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    parser.push(decoder.decode(value, { stream: true }));
    for (const e of ready.splice(0)) {
      if (o.events === undefined || o.events.has(e.event)) await forward(o, io, secret, e);
      if (io.signal.aborted) return;
      seen(e.id);
    }
  }
}

/** Follows the stream until io.signal aborts; throws only for what retrying cannot cure. */
export async function listen(o: ListenOptions, io: ListenIo): Promise<void> {
  const secret = newSecret();
  const which = o.events ? [...o.events].join(', ') : 'all events';
  // Shown once the server has not refused the key: a key it refuses ends the command (exit 1)
  // before a secret is printed for forwards that will never come.
  let announced = false;
  const announce = () => {
    if (announced) return;
    announced = true;
    if (o.json) io.out(JSON.stringify({ secret }));
    else {
      io.out(`Forwarding ${which} from ${o.stream.origin} to ${o.forwardTo.href}`);
      io.out(`Signing secret (shown once; verify the forwarded requests with it): ${secret}`);
    }
  };
  let lastId: string | undefined;
  let delay = FIRST_RETRY_MS;
  while (!io.signal.aborted) {
    try {
      const res = await fetch(o.stream, {
        headers: { authorization: `Bearer ${o.key}`, accept: 'text/event-stream', ...(lastId !== undefined ? { 'last-event-id': lastId } : {}) },
        signal: io.signal,
      });
      if (res.status === 200 && res.body) {
        announce();
        io.err(lastId === undefined ? `connected to ${o.stream.href}; waiting for new events` : `connected; resuming after event ${lastId}`);
        delay = FIRST_RETRY_MS;
        await follow(o, io, secret, res.body, (id) => (lastId = id));
        if (!io.signal.aborted) io.err('the stream ended');
      } else {
        const text = await res.text().catch(() => '');
        let message = text.slice(0, 200);
        try {
          message = (JSON.parse(text) as { error: { message: string } }).error.message;
        } catch {
          // Not our error envelope (a proxy's page): shown as it came.
        }
        // What reconnecting cannot cure (a wrong or revoked key, a missing permission): exit 1.
        if (res.status === 401) throw new AppError('unauthenticated', `the server refused RECLIB_API_KEY (401): ${message}`);
        if (res.status === 403) throw new AppError('forbidden', `the server refused RECLIB_API_KEY (403): ${message}`);
        // Only that refusal (the server's own words): another 400, a proxy's say, keeps the place.
        if (res.status === 400 && lastId !== undefined && message.includes(` ${PAST_THE_END} `)) {
          // The feed is behind the last id forwarded: the server's database was restored from a
          // backup, so its ids are given out again. Resuming after that id would wait for ids it
          // has seen; following from the newest event forwards what comes from now on.
          io.err(`the server refused to resume after event ${lastId} (400): ${message}`);
          io.err('following from its newest event instead: events written between the restore and now were not forwarded');
          lastId = undefined;
          delay = FIRST_RETRY_MS;
          continue;
        }
        if (res.status === 400) throw new AppError('invalid_request', `the server refused the stream (400): ${message}`);
        const retryAfter = Number(res.headers.get('retry-after'));
        if (res.status === 429 && retryAfter > 0) delay = Math.max(delay, retryAfter * 1000);
        io.err(`the server answered ${res.status}: ${message}`);
      }
    } catch (e) {
      if (e instanceof AppError) throw e;
      if (io.signal.aborted) break;
      io.err(`lost the stream (${reason(e)})`);
    }
    if (io.signal.aborted) break;
    // Not connected, but not refused either (a server that is down, a 503): the consumer can be
    // started with the secret meanwhile.
    announce();
    io.err(`reconnecting in ${(delay / 1000).toFixed(1)} s`);
    await pause(delay, io.signal);
    delay = Math.min(delay * 2, MAX_RETRY_MS);
  }
}

export function registerListenCommand(program: Command): void {
  program
    .command('listen')
    .description('forward the live event stream to a local URL, signed as webhook deliveries (test a webhook consumer on your laptop)')
    .requiredOption('--url <url>', "the reclib server's address, e.g. http://127.0.0.1:8080 (key from RECLIB_API_KEY, with events:read)")
    .requiredOption('--forward-to <url>', 'where to POST each event, e.g. http://localhost:3000/webhooks')
    .option('--events <list>', `comma list of event types to forward (default all): ${EVENT_TYPES.join(', ')}`)
    .option('--json', 'first line {"secret": …}, then one JSON object per forward')
    .action(async (flags: { url: string; forwardTo: string; events?: string; json?: boolean }) => {
      try {
        const options = listenOptions(flags, process.env);
        const stop = new AbortController();
        const onSignal = () => stop.abort();
        process.once('SIGINT', onSignal);
        process.once('SIGTERM', onSignal);
        await listen(options, {
          out: (line) => process.stdout.write(`${line}\n`),
          err: (line) => process.stderr.write(`reclib listen: ${line}\n`),
          signal: stop.signal,
        });
        process.exit(0);
      } catch (e) {
        fail(e);
      }
    });
}
