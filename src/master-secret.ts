// The master secret signs nothing itself: webhook subscription secrets are derived from it, so
// rotating it (deleting the file) invalidates every subscription at once, as the spec says.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export function loadMasterSecret(file: string): Buffer {
  if (file.startsWith(':memory:')) return randomBytes(32);
  fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  try {
    // 'wx': create only if absent, so a server and a CLI starting together agree on one secret.
    fs.writeFileSync(file, randomBytes(32).toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  const text = fs.readFileSync(file, 'utf8').trim();
  const secret = Buffer.from(text, 'base64');
  if (secret.length < 32) throw new Error(`master secret file ${file} does not hold a base64 secret of at least 32 bytes`);
  return secret;
}
