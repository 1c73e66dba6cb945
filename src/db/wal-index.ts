// The WAL index of a WAL database: the -shm file beside it, whose header SQLite rewrites on every
// commit (https://sqlite.org/walformat.html). Read with plain reads by src/db/commit-watch.ts (has
// another connection committed?) and src/db/checkpointer-worker.ts (how many frames were written?).
// Only on Linux and macOS, where a plain read and SQLite's shared mapping see the same page cache.
import fs from 'node:fs';
import os from 'node:os';
import type { WalPosition } from './checkpoint-policy';

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

/**
 * The WAL index header's mxFrame and salts, read from the -shm file as src/db/commit-watch.ts
 * reads it (a plain read sees SQLite's shared mapping on Linux and macOS; the header is in native
 * byte order: https://sqlite.org/walformat.html); undefined elsewhere or when the file cannot be
 * opened (the checkpointer's passes then come every everyMs only). A torn read costs the
 * checkpointer at most one pass too many or too few; settledWalPosition() is for a caller that
 * must not be misled.
 */
export function walIndexReader(fd: number | undefined): (() => WalPosition | undefined) | undefined {
  if (fd === undefined) return undefined;
  const header = Buffer.alloc(40);
  const u32 = os.endianness() === 'LE' ? (at: number) => header.readUInt32LE(at) : (at: number) => header.readUInt32BE(at);
  return () => {
    try {
      if (fs.readSync(fd, header, 0, 40, 0) < 40) return undefined;
    } catch {
      return undefined;
    }
    return { frames: u32(16), salt1: u32(32), salt2: u32(36) };
  };
}

/** The WAL index header: two copies of 48 bytes (https://sqlite.org/walformat.html). */
const INDEX_HEADER_BYTES = 48;

/**
 * Reads the start of the WAL index into `into` (at least both header copies) as SQLite last wrote
 * the header whole: SQLite writes its two copies one after the other, so a read is taken only when
 * both agree. False if they do not settle, or the file cannot be read.
 */
export function readSettledIndex(fd: number, into: Buffer): boolean {
  for (let tries = 0; tries < 20; tries++) {
    try {
      if (fs.readSync(fd, into, 0, into.length, 0) < into.length) return false;
    } catch {
      return false;
    }
    if (into.compare(into, 0, INDEX_HEADER_BYTES, INDEX_HEADER_BYTES, 2 * INDEX_HEADER_BYTES) === 0) return true;
  }
  return false;
}

/**
 * The WAL index header's mxFrame and salts as SQLite last wrote them whole (readSettledIndex). The
 * salts are read as the WAL header holds them, big-endian (the index has a copy of those bytes), so
 * that a WAL that started over has salt1 + 1 (walRestartHdr in sqlite3.c). Undefined if the header
 * does not settle, or the file cannot be read.
 */
export function settledWalPosition(fd: number): WalPosition | undefined {
  const header = Buffer.alloc(2 * INDEX_HEADER_BYTES);
  if (!readSettledIndex(fd, header)) return undefined;
  const frames = os.endianness() === 'LE' ? header.readUInt32LE(16) : header.readUInt32BE(16);
  return { frames, salt1: header.readUInt32BE(32), salt2: header.readUInt32BE(36) };
}
