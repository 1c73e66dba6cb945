// Reading the request straight from Node's IncomingMessage when the app runs on the node server.
// @hono/node-server builds the WHATWG Request lazily: the first c.req.header() copies every header
// into a Headers object (~3 µs), and the first access to the body wraps the socket stream in a
// Request and a ReadableStream (~80 µs of a ~550 µs create). These helpers give the same values
// without either. Tests through app.request() have no Node request and take the WHATWG path.
import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import { invalid } from '../errors';

/** The Node request behind c, on the node server (the adapter passes it as env.incoming). */
export const nodeRequest = (c: Context): IncomingMessage | undefined => (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;

/**
 * A request header as Headers.get() gives it (a repeated header joined with ", "), read from
 * Node's raw header list (Node's own `headers` object would keep only the first Authorization).
 * `name` in lower case.
 */
export function requestHeader(c: Context, name: string): string | undefined {
  const req = nodeRequest(c);
  return req === undefined ? c.req.header(name) : rawRequestHeader(req, name);
}

/** requestHeader() of a Node request. */
export function rawRequestHeader(req: IncomingMessage, name: string): string | undefined {
  const raw = req.rawHeaders;
  let value: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const key = raw[i]!;
    if (key.length === name.length && key.toLowerCase() === name) value = value === undefined ? raw[i + 1]! : `${value}, ${raw[i + 1]!}`;
  }
  return value;
}

const PREREAD = Symbol('reclib.preread');
type Preread = IncomingMessage & { [PREREAD]?: Promise<Buffer> };

/**
 * Reads the body of `incoming` now (readNodeBody), and keeps the outcome for whoever reads it
 * next: the app, when src/http/direct-routes.ts hands it a request whose body it has read.
 */
export function readNodeBodyEarly(incoming: IncomingMessage, max: number, tooLarge: () => Error): Promise<Buffer> {
  const read = readNodeBody(incoming, max, tooLarge);
  (incoming as Preread)[PREREAD] = read;
  return read;
}

const REFUSED = Symbol('reclib.writeRefused');
type Refused = IncomingMessage & { [REFUSED]?: { error: unknown } };

/**
 * The write of a request that src/http/direct-routes.ts ran and the writer refused, before it hands
 * the request to the app: the app's route answers with this error instead of running it again.
 */
export function keepWriteRefusal(incoming: IncomingMessage, error: unknown): void {
  (incoming as Refused)[REFUSED] = { error };
}

/** keepWriteRefusal()'s error for c's request, if any. */
export const writeRefusal = (c: Context): { error: unknown } | undefined => (nodeRequest(c) as Refused | undefined)?.[REFUSED];

/**
 * The body bytes of a Node request, refusing with `tooLarge()` as soon as more than `max` bytes
 * arrived (the rest is left unread; the adapter drains or closes the connection after the answer).
 */
export function readNodeBody(incoming: IncomingMessage, max: number, tooLarge: () => Error): Promise<Buffer> {
  // Read before the app saw the request (readNodeBodyEarly): the same bytes, or the same error.
  const early = (incoming as Preread)[PREREAD];
  if (early) return early;
  // Already read to its end (nothing to wait for: 'end' will not come again).
  if (incoming.readableEnded) return Promise.resolve(Buffer.alloc(0));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (error: Error | undefined) => {
      incoming.off('data', onData).off('end', onEnd).off('error', onClose).off('close', onClose);
      if (error) reject(error);
      else resolve(Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        incoming.pause();
        finish(tooLarge());
      } else chunks.push(chunk);
    };
    const onEnd = () => finish(undefined);
    // The client went away (an abort is 'error' ECONNRESET, then 'close'): its fault, not ours, so
    // a 400 that nobody will read, and no "internal error" in the log.
    const onClose = () => finish(invalid('the client closed the connection before the request body was complete'));
    incoming.on('data', onData).once('end', onEnd).once('error', onClose).once('close', onClose);
  });
}
