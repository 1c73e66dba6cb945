// One webhook delivery attempt over node:http(s). Not fetch: the `lookup` hook is what lets the
// connection use exactly the address the destination guard approved. Never throws: every failure
// is an attempt outcome for the delivery record.
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { AppError } from '../errors';
import {
  type AllowList,
  type Resolver,
  checkWebhookTarget,
  DestinationBlockedError,
  guardedLookup,
} from './destination-guard';

export interface SendWebhookOptions {
  url: string;
  body: string;
  headers: Record<string, string>;
  /** One deadline for connect, response headers and reading the response body. */
  timeoutMs: number;
  allow: AllowList;
  /** DNS resolver for hostnames; tests inject fakes. */
  resolver?: Resolver;
}

export interface SendWebhookResult {
  /** Any 2xx answer within the deadline (its body is read to the end, to the read cap or to the deadline). */
  ok: boolean;
  statusCode: number | null;
  /** Why the attempt failed; never contains the body, headers or secrets. Null when ok. */
  error: string | null;
  durationMs: number;
}

/** Receivers' answers are read only to free the connection politely; more than this is dropped. */
const MAX_RESPONSE_BYTES = 64 * 1024;

const FRIENDLY_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'DNS lookup failed',
};

function describeError(err: unknown): string {
  // AppError here is checkWebhookTarget's "url: ..." and DestinationBlockedError the lookup's refusal:
  // both messages are written for subscribers.
  if (err instanceof AppError || err instanceof DestinationBlockedError) return err.message;
  if (!(err instanceof Error)) return 'request failed';
  const code = 'code' in err && typeof err.code === 'string' ? err.code : undefined;
  const friendly = code ? FRIENDLY_ERRORS[code] : undefined;
  if (friendly) return friendly;
  return `request failed: ${code ? `${code} ` : ''}${err.message}`.slice(0, 300);
}

function describeStatus(statusCode: number | null): string | null {
  if (statusCode === null) return 'no response';
  if (statusCode >= 200 && statusCode < 300) return null;
  if (statusCode >= 300 && statusCode < 400) return `redirect (status ${statusCode}) not followed`;
  return `status ${statusCode}`;
}

/** POSTs `body` to `url` once. Resolves with the outcome; never rejects. */
export function sendWebhook(opts: SendWebhookOptions): Promise<SendWebhookResult> {
  const started = performance.now();
  return new Promise((resolve) => {
    let settled = false;
    let statusCode: number | null = null;
    let request: http.ClientRequest | undefined;

    const finish = (error: string | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      request?.destroy();
      // Any 2xx acknowledges (the interface's rule), also one whose body then stalls or breaks off:
      // counted a failure, it was sent again, up to every attempt, and ended as failed.
      const acknowledged = statusCode !== null && statusCode >= 200 && statusCode < 300;
      const failure = acknowledged ? null : (error ?? describeStatus(statusCode));
      const durationMs = Math.round(performance.now() - started);
      resolve({ ok: failure === null, statusCode, error: failure, durationMs });
    };
    const deadline = setTimeout(() => finish(`timed out after ${opts.timeoutMs} ms`), opts.timeoutMs);

    try {
      // Same rules as at creation: an IP literal is judged here, before any socket exists, because
      // node skips `lookup` for literals. Hostnames are judged by guardedLookup at connect time
      // (with http or another port: only if they resolve into a listed range).
      const { url, rangeOnly } = checkWebhookTarget(opts.url, opts.allow);
      // node:https (and tls with it) at the first delivery over https, not at every start (test/e2e/start-modules.test.ts).
      const transport = url.protocol === 'https:' ? process.getBuiltinModule('node:https') : http;
      request = transport.request(
        url,
        {
          method: 'POST',
          // A fresh connection each time: a pooled socket could have been opened by some other
          // request without the guard.
          agent: false,
          lookup: guardedLookup(opts.allow, opts.resolver, rangeOnly),
          headers: {
            'user-agent': 'reclib-webhooks',
            ...opts.headers,
            'content-length': String(Buffer.byteLength(opts.body, 'utf8')),
          },
        },
        (response) => {
          statusCode = response.statusCode ?? null;
          let received = 0;
          response.on('data', (chunk: Buffer) => {
            received += chunk.length;
            if (received >= MAX_RESPONSE_BYTES) finish(null);
          });
          response.on('end', () => finish(null));
          response.on('error', (err) => finish(describeError(err)));
          response.on('close', () => finish(response.complete ? null : 'connection closed before the response ended'));
        },
      );
      request.on('error', (err) => finish(describeError(err)));
      request.end(opts.body);
    } catch (err) {
      finish(describeError(err));
    }
  });
}
