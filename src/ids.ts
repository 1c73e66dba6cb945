// The one id and secret generator. Ids are a prefix plus base62 randomness, so they match the
// path-id pattern (docs/decisions.md §20) ^[A-Za-z0-9][A-Za-z0-9._:-]*$ and say what they name (rec_, key_, ...).
import { hash, randomBytes } from 'node:crypto';

/** What a path or reference id (device, external, source, audio) may look like; 1-256 characters of it. */
export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * A reader of CSPRNG bytes fetched `chunk` at a time, each byte used once. Ids share one reader
 * with a 4 KB pool: one randomBytes() call per id (a syscall and a Buffer) cost ~3 µs, paid on
 * every request for its X-Request-Id. Each secret gets a fresh reader, so no secret byte ever
 * sits in a shared pool.
 */
function byteSource(chunk: number): () => number {
  let bytes = Buffer.alloc(0);
  let at = 0;
  return () => {
    if (at >= bytes.length) {
      bytes = randomBytes(chunk);
      at = 0;
    }
    return bytes[at++]!;
  };
}

const idByte = byteSource(4096);

/** base62 text of `chars` characters from uniformly random bytes (rejection sampling, no bias). */
export function randomBase62(chars: number, nextByte: () => number = idByte): string {
  let out = '';
  while (out.length < chars) {
    const b = nextByte();
    if (b < 248) out += ALPHABET[b % 62];
  }
  return out;
}

export type IdPrefix = 'acc' | 'key' | 'int' | 'ses' | 'rec' | 'wh' | 'dlv' | 'manual' | 'test' | 'req' | 'map';

export const newId = (prefix: IdPrefix): string => `${prefix}_${randomBase62(20)}`;

/** base62 of a non-negative integer, left-padded with '0' to `chars` (the alphabet is in ASCII order). */
function base62Fixed(n: number, chars: number): string {
  let out = '';
  for (let i = 0; i < chars; i++) {
    out = ALPHABET[n % 62]! + out;
    n = Math.floor(n / 62);
  }
  return out;
}

/**
 * An id of the same shape as newId() (prefix + 20 base62 characters) whose first 8 characters are
 * the creation time in ms (62^8 ms is ~6,900 years), followed by 12 random ones (71 bits per
 * millisecond). New ids then sort after older ones, so the unique index on them grows at its
 * right edge: with random ids every create wrote into a random leaf of that index, a disk read
 * per create once the index outgrew the cache (1M recordings). Used for recordings. Their ids
 * now tell anyone who sees one (a webhook receiver, say) when it was created, to the millisecond;
 * no id is a credential (every lookup is scoped to the caller's account), and updatedAt and
 * recordedAt already say about as much.
 */
export const newTimeOrderedId = (prefix: IdPrefix, now: number): string => `${prefix}_${base62Fixed(Math.max(0, Math.floor(now)), 8)}${randomBase62(12)}`;

/** A credential secret: prefix + 43 base62 chars (> 256 bits). */
export const newSecret = (prefix: 'rlk' | 'rls'): string => `${prefix}_${randomBase62(43, byteSource(64))}`;

/** One-shot crypto.hash (Node ≥ 20.12): a third of createHash()'s cost; it runs on every authenticated request. */
export const sha256Hex = (text: string): string => hash('sha256', text, 'hex');
