// The one id and secret generator. Ids are a prefix plus base62 randomness, so they match the
// spec's path-id pattern ^[A-Za-z0-9][A-Za-z0-9._:-]*$ and say what they name (rec_, key_, ...).
import { createHash, randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** base62 text of `chars` characters from uniformly random bytes (rejection sampling, no bias). */
export function randomBase62(chars: number): string {
  let out = '';
  while (out.length < chars) {
    for (const b of randomBytes(chars * 2)) {
      if (b < 248) out += ALPHABET[b % 62];
      if (out.length === chars) break;
    }
  }
  return out;
}

export type IdPrefix = 'acc' | 'key' | 'int' | 'ses' | 'rec' | 'wh' | 'dlv' | 'manual' | 'req' | 'map';

export const newId = (prefix: IdPrefix): string => `${prefix}_${randomBase62(20)}`;

/** A credential secret: prefix + 43 base62 chars (> 256 bits). */
export const newSecret = (prefix: 'rlk' | 'rls'): string => `${prefix}_${randomBase62(43)}`;

export const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');
