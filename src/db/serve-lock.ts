// One `reclib serve` per database file. A second server on the same file would work on the same
// data but keep rate limits, event streams and a delivery scheduler of its own, and a person who
// started it by mistake (a second container, a service and a terminal) would not know. So a server
// holds a lock for as long as it runs, and a second one is refused at its start, before it listens.
//
// The lock is SQLite's own on a small companion file, FILE.serve-lock (an empty SQLite database,
// mode 0600): opened with locking_mode=EXCLUSIVE, an exclusive transaction takes the file's
// exclusive lock and the connection keeps it until it is closed. These are POSIX record
// locks, which the kernel drops when the process ends however it ends, so after a `kill -9` the next
// start goes ahead: no pid file to go stale, no port guessing (src/db/restore.ts locks the database
// itself the same way). The database file is not used for this because every connection to it
// (the CLI's, a backup's, Litestream's) must stay possible while the server runs.
import fs from 'node:fs';
import path from 'node:path';
import { createPrivateFile, makePrivateDir, pathProblem } from '../files/private-files';
import { openSqlite } from './sqlite';

/**
 * The lock file of database `db`: beside the database file itself. A `--db` that is a symlink (or a
 * chain of them) names the file it points to, as it does for SQLite, which opens the target and puts
 * its -wal and -shm beside it: otherwise a server started through the link and one started through
 * the file would hold two different locks on one database. (A hard link, another name of the same
 * file, is not seen: it cannot be told from a path.)
 */
export function serveLockFile(db: string): string {
  let file = path.resolve(db);
  try {
    return `${fs.realpathSync(file)}.serve-lock`;
  } catch {
    // Not there yet; or a link to a file not there yet (SQLite creates the target): followed by hand.
  }
  for (let hops = 0; hops < 100; hops++) {
    let target: string;
    try {
      target = fs.readlinkSync(file);
    } catch {
      break; // not a symlink
    }
    // Relative to the folder the link is really in (a `..` in it goes up from there).
    file = path.resolve(realFolder(path.dirname(file)), target);
  }
  return `${file}.serve-lock`;
}

function realFolder(dir: string): string {
  try {
    return fs.realpathSync(dir);
  } catch {
    return dir;
  }
}

/** How long a start waits for the lock before it is refused (see holdServeLock). */
const LOCK_WAIT_MS = 250;

/** Thrown when another process (or another server in this one) serves the database. */
export class ServeLockedError extends Error {
  readonly code = 'RECLIB_SERVE_LOCKED';
}

export interface ServeLock {
  release(): void;
  /** Why no lock is held though the database is a file (a read-only folder): the server runs without it and says so. */
  unavailable?: string;
}

/**
 * Takes the serve lock of database file `db`; release() gives it back (at the server's close).
 * Nothing is taken for :memory:, or when the path cannot hold a database (opening it says why).
 * Where the lock file cannot be written (the database on a read-only folder, which the server
 * serves, refusing writes with 503), the server runs without the lock rather than not at all.
 */
export function holdServeLock(db: string): ServeLock {
  const release = () => {};
  if (db === ':memory:' || pathProblem(db) !== undefined) return { release };
  const file = serveLockFile(db);
  let conn: ReturnType<typeof openSqlite> | undefined;
  try {
    makePrivateDir(path.dirname(file));
    try {
      fs.closeSync(createPrivateFile(file));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    // A short busy timeout, not none: two servers starting at the same instant both read the file
    // (a shared lock each) before asking for the exclusive one, and with no wait each could be
    // refused because of the other; with one, SQLite fails one of them at once and the other waits
    // for it to let go. A server that holds the lock holds it for good, so the wait ends in a refusal.
    conn = openSqlite(file, { timeout: LOCK_WAIT_MS });
    conn.pragma('locking_mode = EXCLUSIVE');
    conn.exec('BEGIN EXCLUSIVE; COMMIT');
  } catch (e) {
    conn?.close();
    if ((e as { code?: string }).code === 'SQLITE_BUSY') {
      throw new ServeLockedError(
        `another reclib serve is serving ${path.resolve(db)} (it holds ${file}); run one server per database file, or give this one another --db`,
      );
    }
    return { release, unavailable: `${file}: ${(e as Error).message}` };
  }
  const held = conn;
  return { release: () => held.close() };
}
