// The master secret signs nothing itself: webhook subscription secrets are derived from it, so
// rotating it (deleting the file) invalidates every subscription at once (docs/decisions.md §6, §18).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { makePrivateDir, writeFileAtomic } from './files/private-files';

export function loadMasterSecret(file: string): Buffer {
  if (file.startsWith(':memory:')) return randomBytes(32);
  makePrivateDir(path.dirname(path.resolve(file)));
  createOnce(file, randomBytes(32).toString('base64') + '\n');
  return readMasterSecret(file);
}

/** Reads an existing master secret file (restore checks a backup's with it too). */
export function readMasterSecret(file: string): Buffer {
  const text = fs.readFileSync(file, 'utf8').trim();
  const secret = Buffer.from(text, 'base64');
  if (secret.length < 32) throw new Error(`master secret file ${file} does not hold a base64 secret of at least 32 bytes`);
  return secret;
}

/** A temporary file of createOnce() this old was left by a process that died mid-way. */
const STALE_TEMP_MS = 60_000;

/**
 * Creates `file` with `text` unless it exists, so that a server and a CLI starting together agree
 * on one secret. The text is written to a private temporary file and flushed to disk first, then
 * linked into place (link() fails if the name exists) and the directory flushed: nobody can read
 * the file half-written, and neither a crash nor a power loss leaves an empty secret that would
 * keep the server from starting. On a file system without hard links, an exclusive create ('wx')
 * and a write do it instead.
 */
function createOnce(file: string, text: string): void {
  removeStaleTemps(file);
  if (fs.existsSync(file)) return;
  try {
    writeFileAtomic(file, text, { overwrite: false });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return; // another process made it first: theirs is the secret
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS' && code !== 'EXDEV') throw e;
    try {
      fs.writeFileSync(file, text, { mode: 0o600, flag: 'wx' });
    } catch (e2) {
      if ((e2 as NodeJS.ErrnoException).code !== 'EEXIST') throw e2;
    }
  }
}

/** Temporary copies of the secret that a process dying between write and cleanup left behind. */
function removeStaleTemps(file: string): void {
  const dir = path.dirname(path.resolve(file));
  const prefix = `${path.basename(file)}.`;
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix) || !/^\d+\.[0-9a-f]{12}\.tmp$/.test(name.slice(prefix.length))) continue;
    const temp = path.join(dir, name);
    try {
      // Only old ones: a young one may belong to a process starting right now.
      if (Date.now() - fs.statSync(temp).mtimeMs > STALE_TEMP_MS) fs.rmSync(temp, { force: true });
    } catch {
      // Gone already, or not ours to remove: leave it.
    }
  }
}
