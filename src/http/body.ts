// Reading a JSON request body with the spec's size limit. A body over the limit is refused as
// soon as the limit is crossed, whether it announced a Content-Length or came chunked: the rest
// is never read into memory.
import type { Context } from 'hono';
import { AppError, invalid } from '../errors';

export const MAX_JSON_BYTES = 1_500_000;

const tooLarge = () => new AppError('payload_too_large', `request body is larger than ${MAX_JSON_BYTES} bytes`);

/** Returns undefined for an absent/empty body, else the parsed JSON value. */
export async function readJsonBody(c: Context): Promise<unknown> {
  const raw = c.req.raw;
  const declared = raw.headers.get('content-length');
  if (declared !== null && Number(declared) > MAX_JSON_BYTES) throw tooLarge();
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
  if (size === 0) return undefined;
  const type = raw.headers.get('content-type') ?? '';
  if (type && !/^application\/([\w.+-]+\+)?json\b/i.test(type)) throw invalid('Content-Type must be application/json');
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks, size));
  } catch {
    throw invalid('request body is not valid UTF-8');
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw invalid(`request body is not valid JSON: ${(e as Error).message}`);
  }
}
