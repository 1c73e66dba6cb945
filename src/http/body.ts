// Reading a JSON request body with the size limit of docs/decisions.md §20. A body over the limit is refused as
// soon as the limit is crossed, whether it announced a Content-Length or came chunked: the rest
// is never read into memory.
import type { Context } from 'hono';
import { AppError, invalid } from '../errors';
import { nodeRequest, readNodeBody, requestHeader } from './node-request';

export const MAX_JSON_BYTES = 1_500_000;

export const tooLarge = () => new AppError('payload_too_large', `request body is larger than ${MAX_JSON_BYTES} bytes`);

/** The body's bytes (undefined or empty: none), refused as 413 as soon as they pass MAX_JSON_BYTES. */
export async function readBodyBytes(c: Context): Promise<Buffer | undefined> {
  const declared = requestHeader(c, 'content-length');
  if (declared !== undefined && Number(declared) > MAX_JSON_BYTES) throw tooLarge();
  // A write handed to the writer thread: its bytes, read by the main thread (src/writer-thread-app.ts).
  const forwarded = (c.env as { forwardedBody?: Uint8Array | null } | undefined)?.forwardedBody;
  if (forwarded !== undefined) {
    if (forwarded !== null && forwarded.byteLength > MAX_JSON_BYTES) throw tooLarge();
    return forwarded === null ? undefined : Buffer.from(forwarded.buffer, forwarded.byteOffset, forwarded.byteLength);
  }
  // On the node server, straight from the socket stream (see node-request.ts); else the WHATWG body.
  const incoming = nodeRequest(c);
  return incoming ? await readNodeBody(incoming, MAX_JSON_BYTES, tooLarge) : await readWebBody(c.req.raw);
}

/** Returns undefined for an absent/empty body, else the parsed JSON value. */
export async function readJsonBody(c: Context): Promise<unknown> {
  return jsonBody(await readBodyBytes(c), requestHeader(c, 'content-type'));
}

/** One decoder for every body (decode() without { stream } keeps no state between calls). */
const UTF8 = new TextDecoder('utf-8', { fatal: true });
/** A \u escape of a UTF-16 surrogate (paired or not) somewhere in a JSON text. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/** A Content-Type a JSON body may come with (none at all is taken as JSON too). */
export const JSON_TYPE = /^application\/([\w.+-]+\+)?json\b/i;

/** The JSON value of a body's bytes sent with Content-Type `type`: undefined when there are none; 400 when they are not JSON. */
export function jsonBody(bytes: Buffer | undefined, type: string | undefined): unknown {
  if (bytes === undefined || bytes.length === 0) return undefined;
  if (type && !JSON_TYPE.test(type)) throw invalid('Content-Type must be application/json');
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw invalid('request body is not valid UTF-8');
  }
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (e) {
    throw invalid(`request body is not valid JSON: ${(e as Error).message}`);
  }
  // Valid UTF-8 holds no lone surrogate: one can only come from a \u escape in the text. Most
  // bodies have none, and then the walk (an object per value: ~2 KB of garbage a create) is skipped.
  const lone = SURROGATE_ESCAPE.test(text) ? loneSurrogateAt(value) : undefined;
  if (lone) throw invalid(`${lone}: holds a lone UTF-16 surrogate (an escape such as \\ud800 without its pair); text must be valid Unicode`);
  return value;
}

/** The body of a WHATWG Request (app.request() in tests), refused as soon as it exceeds the limit. */
async function readWebBody(raw: Request): Promise<Buffer | undefined> {
  if (!raw.body) return undefined;
  const reader = raw.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_JSON_BYTES) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size);
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * JSON may escape half of a surrogate pair ("\ud800"), which no UTF-8 text can hold: SQLite would
 * keep bytes that read back as something else than the answer to the write said. Finds the first
 * such string or key ("body.audio[0].fileId"); iterative, since a body may nest deeper than the stack.
 */
interface Step {
  up: Step | undefined;
  part: string;
}
const pathOf = (step: Step): string => {
  const parts: string[] = [];
  for (let s: Step | undefined = step; s; s = s.up) parts.push(s.part);
  const path = parts.reverse().join('');
  return path.length > 200 ? `${path.slice(0, 200)}…` : path;
};

function loneSurrogateAt(root: unknown): string | undefined {
  // Paths are built only for the answer: a deep body would make eager path strings quadratic.
  const stack: Array<[unknown, Step]> = [[root, { up: undefined, part: 'body' }]];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const [value, step] = item;
    if (typeof value === 'string') {
      if (LONE_SURROGATE.test(value)) return pathOf(step);
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push([value[i], { up: step, part: `[${i}]` }]);
    } else if (value !== null && typeof value === 'object') {
      const entries = Object.entries(value);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, v] = entries[i] as [string, unknown];
        if (LONE_SURROGATE.test(key)) return `${pathOf(step)} (a field name)`;
        stack.push([v, { up: step, part: `.${key}` }]);
      }
    }
  }
  return undefined;
}
