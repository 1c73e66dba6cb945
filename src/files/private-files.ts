// Files reclib creates hold people's notes and secrets: the database (and through it its -wal and
// -shm, which SQLite creates with the database file's mode), backups, master secrets and exports
// are created 0600 and the folders reclib creates 0700, whatever the umask (a umask of 000 must
// not make a library world-readable; a umask can only take bits away, so a chmod after creation
// also puts back an owner bit an odd umask such as 0277 removed). Existing files and folders keep
// the mode their owner gave them.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { writeAllSync } from './write-all';

export const FILE_MODE = 0o600;
export const DIR_MODE = 0o700;

/** Creates `dir` and any missing parents with mode 0700; existing ones are left as they are. */
export function makePrivateDir(dir: string): void {
  const missing: string[] = [];
  for (let d = path.resolve(dir); !fs.existsSync(d); d = path.dirname(d)) {
    missing.unshift(d);
    if (path.dirname(d) === d) break;
  }
  for (const d of missing) {
    try {
      fs.mkdirSync(d, { mode: DIR_MODE });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      continue; // made meanwhile by another process: theirs, mode included
    }
    fs.chmodSync(d, DIR_MODE);
  }
}

/**
 * Creates a new file (never an existing one: EEXIST) with mode 0600 and returns its descriptor.
 * When the mode cannot be set (a file system that refuses chmod: EPERM), the file it made goes
 * again: no empty file stays behind (a temporary one, or a backup's name that a retry would find taken).
 */
export function createPrivateFile(file: string): number {
  const fd = fs.openSync(file, 'wx', FILE_MODE);
  try {
    fs.fchmodSync(fd, FILE_MODE);
  } catch (e) {
    fs.closeSync(fd);
    fs.rmSync(file, { force: true });
    throw e;
  }
  return fd;
}

/**
 * Writes `data` to `file` as a whole or not at all: a private temporary file beside it, flushed,
 * then renamed over `file` (or, with `overwrite: false`, linked, which fails with EEXIST if `file`
 * exists), and the folder flushed. A reader never sees it half-written, a power loss leaves the
 * old or the new content. `durable: false` skips the two flushes (an export's many notes: a
 * rerun rewrites whatever a power loss took).
 */
export function writeFileAtomic(file: string, data: string | Uint8Array, options: { overwrite: boolean; durable?: boolean }): void {
  const durable = options.durable ?? true;
  const temp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const fd = createPrivateFile(temp);
  // The temporary file goes whatever fails (a full disk included); once renamed it is no longer there.
  try {
    try {
      writeAllSync(fd, typeof data === 'string' ? Buffer.from(data) : data, file);
      if (durable) fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    if (options.overwrite) fs.renameSync(temp, file);
    else fs.linkSync(temp, file);
    if (durable) syncDirectory(path.dirname(path.resolve(file)));
  } finally {
    fs.rmSync(temp, { force: true });
  }
}

/** Makes a new directory entry durable (Linux, macOS); a platform that cannot open directories skips it. */
export function syncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch {
    // e.g. Windows: directories cannot be opened; the entry is flushed with the file system.
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/**
 * Why `file` cannot be created or written, in words a person can act on, or undefined when
 * nothing is visibly wrong: "parent /srv/x is a file, not a folder", "folder /srv is not writable".
 */
export function pathProblem(file: string): string | undefined {
  try {
    return problemOf(path.resolve(file));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EACCES') throw e;
    return `a folder on the way to it is not accessible to this user (${(e as Error).message})`;
  }
}

function problemOf(abs: string): string | undefined {
  const stat = statOrUndefined(abs);
  if (stat?.isDirectory()) return 'it is a folder, not a file';
  if (stat) return access(abs, fs.constants.R_OK | fs.constants.W_OK) ? undefined : 'the file is not readable and writable by this user';
  // The nearest existing ancestor: a file there makes the path impossible, a folder must let us create in it.
  for (let d = path.dirname(abs); ; d = path.dirname(d)) {
    const s = statOrUndefined(d);
    if (s) {
      if (!s.isDirectory()) return `parent ${d} is a file, not a folder`;
      return access(d, fs.constants.W_OK | fs.constants.X_OK) ? undefined : `folder ${d} is not writable`;
    }
    if (path.dirname(d) === d) return undefined;
  }
}

function statOrUndefined(p: string): fs.Stats | undefined {
  try {
    return fs.statSync(p);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOTDIR') return undefined; // a parent is a file: found on the way up
    if (code === 'ENOENT') return undefined;
    throw e;
  }
}

function access(p: string, mode: number): boolean {
  try {
    fs.accessSync(p, mode);
    return true;
  } catch {
    return false;
  }
}
