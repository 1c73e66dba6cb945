// The Node HTTP server around the Hono app. Some requests never reach Hono: Node's parser refuses
// malformed request lines and headers (an unknown method, a bad header name, a bad chunk, headers
// over 16 KB), and the adapter refuses an invalid Host or a backslash in the path. By default
// both answer a bare 400/431 with no body and no X-Request-Id; here they get the same error
// envelope and request id as every other answer (docs/decisions.md §4). Node would also close a CONNECT
// without a word and answer a bare 417 to an Expect other than 100-continue: CONNECT gets the
// envelope too, and an unknown expectation is ignored (RFC 9110 §10.1.1 allows either), so the
// request is served as if the header were absent.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { getRequestListener } from '@hono/node-server';
import { errorStatus, type ErrorCode } from '../errors';
import { newId } from '../ids';

type Fetch = (request: Request) => Response | Promise<Response>;

const REASONS: Record<number, string> = { 400: 'Bad Request', 413: 'Payload Too Large' };

/** What a parser error says about the request, in the client's terms. */
function describe(code: string | undefined): [ErrorCode, string] {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return ['payload_too_large', 'the request line and headers are too large (at most 16 KB in all)'];
    case 'HPE_INVALID_METHOD':
      return ['invalid_request', 'unknown HTTP method: use GET, POST, PUT, PATCH or DELETE'];
    case 'HPE_INVALID_HEADER_TOKEN':
      return ['invalid_request', 'a header name or value holds characters HTTP does not allow'];
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return ['invalid_request', 'Content-Length header is not valid'];
    case 'HPE_INVALID_CHUNK_SIZE':
    case 'HPE_INVALID_TRANSFER_ENCODING':
      return ['invalid_request', 'Transfer-Encoding: the chunked body is malformed'];
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return ['invalid_request', 'the request was not received completely in time'];
    default:
      return ['invalid_request', 'malformed HTTP request (request line or headers)'];
  }
}

const envelope = (code: ErrorCode, message: string) => JSON.stringify({ error: { code, message } });

function onClientError(err: Error & { code?: string }, socket: Socket): void {
  // Only answer when nothing was written yet (Node's own rule); a reset socket gets nothing.
  if (err.code === 'ECONNRESET' || !socket.writable || socket.bytesWritten > 0) {
    socket.destroy();
    return;
  }
  answerOnSocket(socket, ...describe(err.code));
}

/** Writes an error answer straight to the socket and closes it (no ServerResponse exists here). */
function answerOnSocket(socket: Duplex, code: ErrorCode, message: string): void {
  const status = errorStatus[code];
  const body = envelope(code, message);
  socket.end(
    `HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-Id: ${newId('req')}\r\nConnection: close\r\n\r\n${body}`,
    // Node sockets allow half-open connections: without this, a client that never closes its side
    // would keep the connection (and a graceful shutdown) waiting.
    () => socket.destroy(),
  );
}

function errorAnswer(message: string): Response {
  return new Response(envelope('invalid_request', message), {
    status: 400,
    headers: { 'content-type': 'application/json', 'x-request-id': newId('req') },
  });
}

/** The adapter's reasons (RequestError, or URL's "Invalid URL" for a Host it cannot parse) in the client's terms. */
function adapterMessage(reason: string): string {
  if (/backslash/i.test(reason)) return 'the request path must not contain a backslash';
  if (/host/i.test(reason)) return 'Host header is not valid';
  return 'the Host header and request path do not form a valid URL';
}

/** How long a connection may take, or sit idle (Config's settings of the same names). */
export interface ConnectionTimeouts {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  idleTimeoutMs: number;
}

/**
 * The adapter (@hono/node-server) is loaded at the first request that needs it, or this long after
 * listening: with it come undici's WHATWG classes, which it reads when it loads (~20% of a start's
 * CPU), while a starting server's first answers (/healthz) are given without it (direct-routes.ts).
 */
const ADAPTER_LOAD_DELAY_MS = 250;

/**
 * How often Node looks for requests past headersTimeout/requestTimeout. Its default of 30 s let a
 * half-sent request live up to 60 + 30 s (~86 s seen); checked every second, it goes on time.
 */
const TIMEOUT_CHECK_MS = 1_000;

/**
 * An http.Server (not yet listening) that serves `fetch`; `hostname` stands in for a missing Host
 * on HTTP/1.0. Connections are bounded in time: the headers within headersTimeoutMs, the whole
 * request within requestTimeoutMs (both answered 400 with the envelope, see describe()), an idle
 * kept-alive connection closed after keepAliveTimeoutMs, and a connection on which nothing moves
 * either way for idleTimeoutMs closed: such as a client that stopped reading a large answer, which
 * would otherwise keep the answer's unsent bytes in memory for good. `observe` sees every request
 * that reaches a response before it is answered (the request log, metrics and graceful close hook
 * in here, not as Hono middleware: see router.ts).
 */
export function createNodeServer(
  fetch: Fetch,
  hostname: string,
  timeouts: ConnectionTimeouts,
  observe?: (req: IncomingMessage, res: ServerResponse) => void,
  /** Answers a request before the app, or takes it to answer or hand over later (src/http/direct-routes.ts), and says so; or returns false. */
  direct?: (req: IncomingMessage, res: ServerResponse, toApp: () => void) => boolean,
  /** Loads the adapter (tests stand in a failing load). */
  loadAdapter: () => Promise<Pick<typeof import('@hono/node-server'), 'getRequestListener'>> = () => import('@hono/node-server'),
): Server {
  type Listener = ReturnType<typeof getRequestListener>;
  let listener: Listener | undefined;
  let loading: Promise<Listener> | undefined;
  const loadListener = () =>
    (loading ??= loadAdapter().then(
      ({ getRequestListener }) =>
        (listener = getRequestListener(fetch, {
          hostname,
          // Thrown before the app runs: an invalid Host header, a backslash in the path, a bad absolute URL.
          errorHandler: (e) => errorAnswer(adapterMessage(e instanceof Error ? e.message : '')),
        })),
      (e: unknown) => {
        // The module failed to load or evaluate (from the sources: a file that cannot be read):
        // the next request tries again.
        loading = undefined;
        throw e;
      },
    ));
  /** The answer while the adapter cannot be loaded: a 503 in the envelope, never an unhandled rejection. */
  const cannotLoad = (res: ServerResponse, e: unknown) => {
    if (res.headersSent) return void res.destroy();
    const why = e instanceof Error && e.message ? e.message.split('\n')[0]!.slice(0, 200) : 'unknown reason';
    const body = envelope('unavailable', `the server could not load its HTTP layer (${why}); its install may be incomplete`);
    res.writeHead(503, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-request-id': newId('req'), 'retry-after': '1' });
    res.end(body);
  };
  // Node would answer a Host-less HTTP/1.1 request itself (bare 400); this does it with the envelope.
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    observe?.(req, res);
    if (req.httpVersion === '1.1' && !req.headers.host) {
      const body = envelope('invalid_request', 'Host header is required (HTTP/1.1)');
      res.writeHead(400, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-request-id': newId('req'), connection: 'close' });
      res.end(body);
      return;
    }
    if (!direct?.(req, res, () => toApp(req, res))) toApp(req, res);
  };
  const toApp = (req: IncomingMessage, res: ServerResponse) => {
    if (listener) void listener(req, res);
    else loadListener().then((l) => void l(req, res), (e: unknown) => cannotLoad(res, e));
  };
  const server = createServer(
    {
      requireHostHeader: false,
      headersTimeout: timeouts.headersTimeoutMs,
      requestTimeout: timeouts.requestTimeoutMs,
      keepAliveTimeout: timeouts.keepAliveTimeoutMs,
      connectionsCheckingInterval: TIMEOUT_CHECK_MS,
    },
    onRequest,
  );
  // Inactivity in either direction; Node then destroys the socket (no 'timeout' listener here).
  server.timeout = timeouts.idleTimeoutMs;
  // A client that half-closes after sending a complete request still gets its answer: by default
  // Node aborts the request and ends the socket when the client's side ends.
  // (httpAllowHalfOpen is a Server property Node reads in socketOnEnd, not in its typings.)
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  // A failure here is answered by the first request that needs the adapter (cannotLoad).
  server.once('listening', () => setTimeout(() => loadListener().catch(() => {}), ADAPTER_LOAD_DELAY_MS).unref());
  server.on('clientError', onClientError);
  server.on('checkExpectation', onRequest);
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => socket.destroy());
    answerOnSocket(socket, 'invalid_request', 'CONNECT is not supported (this is not a proxy): use GET, POST, PUT, PATCH or DELETE');
  });
  return server;
}
