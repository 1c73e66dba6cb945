// Opening the one SQLite file. The server and the admin CLI both come through here, so they use
// the same pragmas and can write the same file at the same time.
import fs from 'node:fs';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { createPrivateFile, makePrivateDir, pathProblem } from '../files/private-files';
import { migrate, PAGE_SIZE } from './migrate';
import { ForeignDatabaseError, ownership, RECLIB_NOTE } from './ownership';
import { openSqlite } from './sqlite';

export type Db = BetterSqlite3.Database;

/** WAL bytes after which a commit checkpoints (see below; `serve` moves this to a worker, src/db/checkpointer.ts). */
export const WAL_AUTOCHECKPOINT_BYTES = 40 * 1024 * 1024;

/** PRAGMA wal_autocheckpoint (a count of pages) for about `bytes` of WAL on this connection's file. */
export const walPages = (db: Db, bytes: number): number => Math.max(1, Math.round(bytes / (db.pragma('page_size', { simple: true }) as number)));

/** The WAL file is cut back to this many bytes when it starts over after a checkpoint (PRAGMA journal_size_limit). */
export const WAL_SIZE_LIMIT = 8 * 1024 * 1024;

/** How long a connection waits for another connection's lock (PRAGMA busy_timeout), in ms. */
export const BUSY_TIMEOUT_MS = 5_000;

/** SQLite page cache per connection, in KiB when negative (PRAGMA cache_size). */
export const CACHE_SIZE = -65_536;
/**
 * `reclib serve` with its writer thread has two connections; together they keep less than
 * CACHE_SIZE, so a second connection does not add another 64 MB to the process (at 1M recordings
 * peak RSS went from ~180 MB to 316 MB with two full caches). Reads (searches walking index pages,
 * rows read by key) get the larger share; writes mostly touch the right edge of each b-tree and
 * the index segments being written. 32 MB, not 48: the first second of gets by id at 1M fills the
 * reader's cache with random rows, and with 48 MB the bench's peak RSS was 236-258 MB (target 250);
 * with 32 MB, 231 MB against 254 in the same sequence, with gets, list pages and searches within
 * the machine's noise (-5% to +4% req/s; bench/results-notes.md, 2026-11-25).
 */
export const READER_CACHE_SIZE = -32_768;
export const WRITER_CACHE_SIZE = -16_384;

/** SQLite's answers about the file itself: these are reported with the file's name. */
const FILE_ERRORS = new Set(['SQLITE_NOTADB', 'SQLITE_CORRUPT', 'SQLITE_CANTOPEN', 'SQLITE_READONLY', 'SQLITE_IOERR', 'SQLITE_PERM']);

export type Durability = 'full' | 'normal';

export interface OpenOptions {
  /** PRAGMA synchronous: FULL (default) or NORMAL, see configure(). */
  durability?: Durability;
  /**
   * Another connection of this process has the file open, and checked its header when it opened
   * it (the server's main thread, for the writer thread's connection): the file as that one
   * found it (fileIdentity). The header is not read again: reading it opens a descriptor of the
   * file and closes it, and closing any descriptor of a file drops every POSIX lock the process
   * holds on it, SQLite's own included (https://sqlite.org/howtocorrupt.html, 2.2). SQLite then
   * believes it still holds its shared lock and never takes it again: the server held no lock on
   * its database, and `reclib restore` replaced the file under the running server
   * (test/db/backup-restore.test.ts). The path is looked at without a descriptor (stat) and
   * refused when another file is there now (renamed over it since): the two connections would
   * read and write different databases.
   */
  openInProcess?: FileIdentity;
}

/** Which file a path named: its device and inode. */
export interface FileIdentity {
  dev: number;
  ino: number;
}

/** The file at `file` now (through links, as SQLite opens it), read without opening a descriptor. */
export function fileIdentity(file: string): FileIdentity {
  const { dev, ino } = fs.statSync(file);
  return { dev, ino };
}

export function openDatabase(file: string, options: OpenOptions = {}): Db {
  const durability = options.durability ?? 'full';
  // A file made just now is empty: only one that was there is looked at before SQLite opens it.
  // One this process has open already is only compared with the one it opened.
  if (options.openInProcess) refuseAnotherFile(file, options.openInProcess);
  // Before anything is made at the path: a deleted half-restored file must not become a new, empty library.
  if (file !== ':memory:' && !options.openInProcess) refuseInterruptedRestore(file);
  const existed = file !== ':memory:' && !options.openInProcess && !prepareFile(file);
  let db: Db | undefined;
  try {
    if (existed) refuseNonSqlite(file);
    db = openSqlite(file);
    configure(db, durability);
    return db;
  } catch (e) {
    db?.close();
    const err = e as Error & { code?: string };
    if (err instanceof ForeignDatabaseError) throw new ForeignDatabaseError(`database file ${path.resolve(file)}: ${err.message}; reclib left it untouched (choose another --db)`);
    // "file is not a database" alone does not say which file (--db, RECLIB_DB or the default).
    if (typeof err.code === 'string' && (FILE_ERRORS.has(err.code) || /^SQLITE_(IOERR|CANTOPEN)_/.test(err.code))) {
      throw Object.assign(new Error(`database file ${path.resolve(file)}: ${err.message}`), { code: err.code });
    }
    throw e;
  }
}

/** A restore cut off while it wrote the file (src/db/restore.ts leaves this beside it meanwhile): what to do, not "malformed". */
function refuseInterruptedRestore(file: string): void {
  const marker = `${file}.restore-in-progress`;
  if (!fs.existsSync(marker)) return;
  const kept = fs.readFileSync(marker, 'utf8').trim();
  throw Object.assign(
    new Error(`database file ${path.resolve(file)}: a reclib restore into it was cut off before it finished, so it holds part of the backup; run the same reclib restore again to finish it (or copy ${kept}, the database from before, over it and delete ${marker})`),
    { code: 'SQLITE_CORRUPT' },
  );
}

/** The first bytes of every SQLite database file. */
export const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

/**
 * A file that holds something and does not start with SQLite's header is refused before SQLite
 * opens it: with a -wal left beside it (a crash), SQLite would rebuild a database over it. A file
 * a failed restore marked (db/restore.ts) is refused with its first line, which says where the
 * old database is.
 */
function refuseNonSqlite(file: string): void {
  const fd = fs.openSync(file, 'r');
  try {
    const head = Buffer.alloc(512);
    const n = fs.readSync(fd, head, 0, head.length, 0);
    if (n === 0 || (n >= SQLITE_HEADER.length && head.subarray(0, SQLITE_HEADER.length).equals(SQLITE_HEADER))) return;
    const text = head.subarray(0, n).toString('utf8');
    const said = text.startsWith(RECLIB_NOTE) ? `: ${text.split('\n')[0]}` : '';
    throw Object.assign(new Error(`file is not a database${said}`), { code: 'SQLITE_NOTADB' });
  } finally {
    fs.closeSync(fd);
  }
}

/** OpenOptions.openInProcess: the file at the path must be the one the other connection opened. */
function refuseAnotherFile(file: string, opened: FileIdentity): void {
  let now: FileIdentity | undefined;
  try {
    now = fileIdentity(file);
  } catch {
    // gone: refused below
  }
  if (now?.dev !== opened.dev || now.ino !== opened.ino) {
    const what = now === undefined ? 'is gone' : 'is another file now';
    throw Object.assign(new Error(`database file ${path.resolve(file)} ${what}, not the one this process opened (moved, deleted or replaced while it ran); restart to open what is there`), { code: 'SQLITE_CANTOPEN' });
  }
}

/**
 * Says what is wrong with a path that cannot hold the database (naming it), and creates a new
 * database file empty with mode 0600 in a folder made 0700 (src/files/private-files.ts): SQLite
 * would create it 0644, and gives the -wal and -shm files the database file's mode. True when it made the file.
 */
function prepareFile(file: string): boolean {
  const abs = path.resolve(file);
  const problem = pathProblem(abs);
  if (problem) throw new Error(`database file ${abs}: ${problem}`);
  makePrivateDir(path.dirname(abs));
  try {
    fs.closeSync(createPrivateFile(abs));
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new Error(`database file ${abs}: ${(e as Error).message}`);
    return false;
  }
}

function configure(db: Db, durability: Durability): void {
  // busy_timeout first: switching to WAL itself needs a lock another process may hold.
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  // Before anything writes (journal_mode = WAL rewrites the header): another application's file
  // is refused untouched.
  ownership(db);
  // A new file gets 16 KB pages (PAGE_SIZE, see migrate.ts); an existing one keeps its own.
  if (db.pragma('page_count', { simple: true }) === 0) db.pragma(`page_size = ${PAGE_SIZE}`);
  db.pragma('journal_mode = WAL');
  db.pragma('foreign_keys = ON');
  // FULL (the default, docs/decisions.md §11): every commit fsyncs the WAL before it returns, so an
  // acknowledged write survives an OS crash or power loss, not only a process crash. Group commit
  // (src/db/writer.ts) makes that one fsync per group of concurrent requests, not per request.
  // NORMAL (--durability normal): a commit is durable against a process crash (kill -9); an OS
  // crash or power loss can drop the last transactions (never corrupt the file). The benchmark
  // reports creates/s in both modes.
  db.pragma(`synchronous = ${durability === 'full' ? 'FULL' : 'NORMAL'}`);
  db.pragma('temp_store = MEMORY');
  // A 64 MB page cache instead of SQLite's 2 MB (allocated only as pages are used): the index
  // interiors, the FTS pages of common terms and the pages recent writes touch stay in the process
  // rather than being read again through the OS, which may have evicted them (at 1M recordings the
  // file is 5 GB). Within the server's memory budget (peak RSS ~180 MB at 1M in the benchmark).
  db.pragma(`cache_size = ${CACHE_SIZE}`);
  // Deleted and overwritten content is zeroed, freed pages included: a deleted recording's text must
  // leave the file (docs/decisions.md §5), not linger in free space. Costs some extra page writes.
  db.pragma('secure_delete = ON');
  // Checkpoint every ~40 MB of WAL (10,000 pages of 4 KB) instead of SQLite's 1,000 pages: a
  // checkpoint copies each page once however often it changed, and the pages every write touches
  // (index interiors, the FTS structure) change in every commit. Measured on creates at 100k
  // recordings with 4 KB pages: 1,580-1,800/s → 2,150-2,190/s.
  db.pragma(`wal_autocheckpoint = ${walPages(db, WAL_AUTOCHECKPOINT_BYTES)}`);
  // A checkpoint lets the WAL start over from its beginning but does not shrink the file: without
  // a limit it keeps the size of its largest burst for good (31.7 MB of a 40 MB disk was WAL when
  // that disk filled). With it, the first write after a checkpoint truncates the file to the limit.
  db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT}`);
  migrate(db);
}
