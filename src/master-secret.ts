// The master secret signs nothing itself: webhook subscription secrets are derived from it, so
// rotating it (deleting the file) invalidates every subscription at once, as the spec says.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export function loadMasterSecret(file: string): Buffer {
  if (file.startsWith(':memory:')) return randomBytes(32);
  fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  createOnce(file, randomBytes(32).toString('base64') + '\n');
  const text = fs.readFileSync(file, 'utf8').trim();
  const secret = Buffer.from(text, 'base64');
  if (secret.length < 32) throw new Error(`master secret file ${file} does not hold a base64 secret of at least 32 bytes`);
  return secret;
}

/**
 * Creates `file` with `text` unless it exists, so that a server and a CLI starting together agree
 * on one secret. The text is written to a private temporary file first and then linked into place
 * (link() fails if the name exists): nobody can read the file half-written, and a crash leaves at
 * most the temporary file, never an empty secret that would keep the server from starting. On a
 * file system without hard links, an exclusive create ('wx') and a write do it instead.
 */
function createOnce(file: string, text: string): void {
  if (fs.existsSync(file)) return;
  const temp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  fs.writeFileSync(temp, text, { mode: 0o600, flag: 'wx' });
  try {
    fs.linkSync(temp, file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'EEXIST') {
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS' && code !== 'EXDEV') throw e;
      try {
        fs.writeFileSync(file, text, { mode: 0o600, flag: 'wx' });
      } catch (e2) {
        if ((e2 as NodeJS.ErrnoException).code !== 'EEXIST') throw e2;
      }
    }
  } finally {
    fs.rmSync(temp, { force: true });
  }
}
