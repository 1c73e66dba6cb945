// The WAL index of a WAL database: the -shm file beside it, whose header SQLite rewrites on every
// commit (https://sqlite.org/walformat.html). Read with plain reads by src/db/commit-watch.ts (has
// another connection committed?) and src/db/checkpointer-worker.ts (how many frames were written?).
// Only on Linux and macOS, where a plain read and SQLite's shared mapping see the same page cache.
import fs from 'node:fs';

/**
 * A read-only descriptor of `dbFile`'s -shm file, or undefined (another platform, or no such
 * file). The -shm beside the REAL database file: SQLite resolves symlinks, and a stale "<link>-shm"
 * beside a symlink would never change. Never closed, on purpose: closing any descriptor of a file
 * drops every POSIX lock the process holds on it, SQLite's own locks on the -shm included. So one
 * per opener for the life of the process.
 */
export function openWalIndex(dbFile: string): number | undefined {
  if (process.platform !== 'linux' && process.platform !== 'darwin') return undefined;
  try {
    return fs.openSync(`${fs.realpathSync(dbFile)}-shm`, 'r');
  } catch {
    return undefined;
  }
}
