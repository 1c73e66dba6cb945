// `reclib restore --from FILE`: puts a backup (FILE and FILE.secret, from `reclib backup`) in the
// place of the database and its master secret, keeping the old ones beside them.
//
// How it knows no server uses the database: SQLite's own file lock. Every connection to a WAL
// database holds a shared lock on the database file for as long as it is open (SQLite's last
// connection relies on that to know it may delete the WAL). Restore opens the file with
// locking_mode=EXCLUSIVE and no busy timeout and asks for an exclusive lock: it is refused while
// anything has the file open (a running `reclib serve`, its checkpointer, a CLI command, a
// replicator such as Litestream, the sqlite3 shell). These are POSIX record locks, which the kernel
// drops when their process ends however it ends, so after a `kill -9` of the server restore goes
// ahead (and its first read recovers what the dead server left in the WAL). No pid file to go
// stale, no port guessing: a server on another port or under another user is seen all the same.
//
// The lock is held until the restored content is in place: a server starting meanwhile waits for
// it (busy_timeout) and then reads the restored database, never the old one. That is why the
// content is written into the existing file rather than renamed over it: a waiting server has the
// old file open, and would otherwise end up serving a file no longer at its path. Closing another
// descriptor of the database file drops the process's locks on it (POSIX), so the file is written
// through one descriptor, flushed, and closed only at the very end, and the kept copy of the old
// database is made by SQLite's backup API from the locked connection itself.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { createPrivateFile, makePrivateDir, pathProblem, syncDirectory, writeFileAtomic } from '../files/private-files';
import { writeAllSync } from '../files/write-all';
import { readMasterSecret } from '../master-secret';
import { BackupError, fsyncFile, integrityProblems } from './backup';
import { SCHEMA_VERSION } from './migrate';
import { SQLITE_HEADER } from './open';
import { ForeignDatabaseError, ownership, RECLIB_NOTE } from './ownership';
import { openSqlite } from './sqlite';

export class RestoreError extends Error {
  constructor(
    readonly code: 'database_in_use' | 'invalid_backup' | 'restore_failed',
    message: string,
  ) {
    super(message);
  }
}

export interface RestoreResult {
  database: string;
  secretFile: string;
  /** Where the database and secret that were replaced now are (none when there was no database). */
  kept: { database: string | null; secretFile: string | null } | null;
}

export async function restoreDatabase(input: { from: string; db: string; secretFile: string; now: number }): Promise<RestoreResult> {
  const from = path.resolve(input.from);
  const db = path.resolve(input.db);
  const secretFile = path.resolve(input.secretFile);
  const secretText = checkBackupFiles(from);
  const problem = pathProblem(db);
  if (problem) throw new RestoreError('restore_failed', `database file ${db}: ${problem}`);
  makePrivateDir(path.dirname(db));
  // The backup is copied beside the database and checked there: what is checked is exactly what goes in.
  const staged = `${db}.restore-${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  fs.closeSync(createPrivateFile(staged));
  try {
    fs.copyFileSync(from, staged);
    checkStagedCopy(staged, from);
    if (fs.existsSync(db) && fs.existsSync(inProgress(db))) return finishInterrupted(db, staged, secretFile, secretText);
    if (!fs.existsSync(db)) {
      // A WAL or journal left at the path by a database moved away (after a crash, say) would be
      // replayed into the restored file by the first connection: corruption, silent until read.
      // It belongs to that database, so it is not deleted here: the person decides.
      for (const side of [`${db}-wal`, `${db}-journal`]) {
        if (fs.existsSync(side) && fs.statSync(side).size > 0) {
          throw new RestoreError('restore_failed', `${side} exists without ${db}: it holds changes of the database that was there (moved away?), and SQLite would apply them to the restored file; put it beside that database (as <its name>${side.slice(db.length)}) or delete it, then run restore again`);
        }
      }
      removeSideFiles(db);
      // A secret left without its database is kept too: it may be the one that matters.
      const keptSecret = keepSecret(secretFile, `${db}.before-restore-${input.now}.secret`);
      writeFileAtomic(secretFile, secretText, { overwrite: true });
      fs.linkSync(staged, db); // fails if a database appeared meanwhile: then nothing is replaced
      syncDirectory(path.dirname(db));
      // Left by a restore cut off into a file since deleted: the database there now is whole.
      fs.rmSync(inProgress(db), { force: true });
      return { database: db, secretFile, kept: keptSecret ? { database: null, secretFile: keptSecret } : null };
    }
    return await replaceInPlace(db, staged, secretFile, secretText, input.now);
  } finally {
    fs.rmSync(staged, { force: true });
  }
}

/** The backup and its secret exist, and the secret is one; returns the secret file's text. */
function checkBackupFiles(from: string): string {
  if (!fs.existsSync(from)) throw new RestoreError('invalid_backup', `backup file ${from} does not exist`);
  if (fs.existsSync(`${from}-wal`) && fs.statSync(`${from}-wal`).size > 0) {
    throw new RestoreError('invalid_backup', `${from}-wal exists beside the backup: ${from} is a database in use (or a copy missing what its WAL holds); make a backup with reclib backup`);
  }
  const secret = `${from}.secret`;
  if (!fs.existsSync(secret)) {
    throw new RestoreError('invalid_backup', `${secret} is missing: without the backup's master secret every webhook consumer would reject the restored server's signatures (reclib backup writes it beside the backup)`);
  }
  try {
    return readMasterSecret(secret).toString('base64') + '\n';
  } catch (e) {
    throw new RestoreError('invalid_backup', (e as Error).message);
  }
}

/** Integrity, ownership and schema version of the staged copy; leaves it a standalone rollback-journal file. */
function checkStagedCopy(staged: string, from: string): void {
  let copy: Database.Database | undefined;
  try {
    copy = openSqlite(staged);
    const owner = ownership(copy);
    if (owner === 'empty') throw new RestoreError('invalid_backup', `backup file ${from} is an empty database, not a reclib backup`);
    const version = copy.pragma('user_version', { simple: true }) as number;
    if (version > SCHEMA_VERSION) throw new RestoreError('invalid_backup', `backup file ${from} has schema version ${version}, newer than this reclib (${SCHEMA_VERSION}); upgrade reclib first`);
    const broken = integrityProblems(copy);
    if (broken) throw new RestoreError('invalid_backup', `backup file ${from} failed its integrity check: ${broken}`);
    copy.pragma('journal_mode = DELETE');
  } catch (e) {
    if (e instanceof RestoreError) throw e;
    if (e instanceof ForeignDatabaseError) throw new RestoreError('invalid_backup', `backup file ${from}: ${e.message}`);
    throw new RestoreError('invalid_backup', `backup file ${from} is not a usable database: ${(e as Error).message}`);
  } finally {
    copy?.close();
  }
  fsyncFile(staged);
}

/**
 * Beside the database while a restore writes into it: the kept database's path. A restore cut off
 * there (a crash, a kill) leaves the file a prefix of the backup, which no command can open; the
 * next restore, finding this, writes the backup in again without reading the file or keeping it.
 */
const inProgress = (db: string) => `${db}.restore-in-progress`;

async function replaceInPlace(db: string, staged: string, secretFile: string, secretText: string, now: number): Promise<RestoreResult> {
  const marker = inProgress(db);
  const lock = openSqlite(db);
  let fd: number | undefined;
  try {
    lock.pragma('busy_timeout = 0');
    lock.pragma('locking_mode = EXCLUSIVE');
    try {
      lock.exec('BEGIN EXCLUSIVE');
    } catch (e) {
      if ((e as { code?: string }).code?.startsWith('SQLITE_BUSY')) {
        throw new RestoreError('database_in_use', `database file ${db} is in use (a running reclib serve, a CLI command, or a replicator such as Litestream has it open); stop it and run restore again`);
      }
      throw e;
    }
    try {
      ownership(lock); // a file that is not reclib's is not ours to replace
    } finally {
      lock.exec('COMMIT');
    }
    // Everything the old database holds into the one file (a killed server's WAL included).
    lock.pragma('journal_mode = DELETE');

    const kept = `${db}.before-restore-${now}`;
    fs.closeSync(createPrivateFile(kept));
    await lock.backup(kept, { progress: () => 0x7fffffff });
    fsyncFile(kept);
    // Beside the kept database under the name serve would look for: `--db KEPT` finds it.
    const keptSecret = keepSecret(secretFile, `${kept}.secret`);
    // The old secret also stays beside the secret file, under another name (a link: nothing to
    // write, and the same file system, which a --master-secret-file elsewhere need not share with
    // the database), so that putting it back is a rename.
    const oldSecret = keptSecret === null ? null : holdOldSecret(secretFile);
    // From here a failure (a full disk) puts back what was changed: the old database and secret.
    try {
      writeFileAtomic(marker, `${kept}\n`, { overwrite: true });
      writeFileAtomic(secretFile, secretText, { overwrite: true });
      removeSideFiles(db);
      fd = fs.openSync(db, 'r+');
      fs.ftruncateSync(fd, 0);
      copyInto(staged, fd, db);
      fs.fsyncSync(fd);
    } catch (e) {
      // Once open, the file counts as truncated (ftruncate is the next step).
      const back = putBack({ fd, db, kept, secretFile, oldSecret });
      // Put back whole: no longer in progress. Left incomplete: the next restore must write it again.
      if (isWholeDatabase(db)) fs.rmSync(marker, { force: true });
      throw new RestoreError('restore_failed', `restore into ${db} failed: ${(e as Error).message}; ${back}`);
    }
    fs.rmSync(marker, { force: true });
    if (oldSecret !== null) fs.rmSync(oldSecret, { force: true });
    syncDirectory(path.dirname(db));
    return { database: db, secretFile, kept: { database: kept, secretFile: keptSecret } };
  } catch (e) {
    if (e instanceof RestoreError || e instanceof BackupError) throw e;
    if (e instanceof ForeignDatabaseError) throw new RestoreError('restore_failed', `database file ${db}: ${e.message}; restore leaves it alone`);
    throw new RestoreError('restore_failed', `restore into ${db} failed: ${(e as Error).message}`);
  } finally {
    // Closing this descriptor releases the lock (POSIX): only now may a waiting server read.
    if (fd !== undefined) fs.closeSync(fd);
    lock.close();
  }
}

/**
 * The second run of a restore that was cut off while writing the database (inProgress): the file
 * holds part of the backup, which SQLite will not even lock ("malformed"), and no reclib command
 * opens it while the marker is there (openDatabase). So the staged copy takes its place by a
 * rename, without reading it, and the database from before stays where the first run kept it.
 */
function finishInterrupted(db: string, staged: string, secretFile: string, secretText: string): RestoreResult {
  const marker = inProgress(db);
  const kept = fs.readFileSync(marker, 'utf8').trim();
  writeFileAtomic(secretFile, secretText, { overwrite: true });
  removeSideFiles(db);
  fs.renameSync(staged, db);
  syncDirectory(path.dirname(db));
  fs.rmSync(marker, { force: true });
  syncDirectory(path.dirname(db));
  const keptSecret = fs.existsSync(`${kept}.secret`) ? `${kept}.secret` : null;
  return { database: db, secretFile, kept: { database: fs.existsSync(kept) ? kept : null, secretFile: keptSecret } };
}

/** The files SQLite keeps beside a database: a new database at the path must not meet the old one's. */
function removeSideFiles(db: string): void {
  for (const side of [`${db}-wal`, `${db}-shm`, `${db}-journal`]) fs.rmSync(side, { force: true });
}

/** Whether the file starts as an SQLite database does (a restore's putBack wrote it back whole), not with the incomplete note. */
function isWholeDatabase(file: string): boolean {
  try {
    const fd = fs.openSync(file, 'r');
    try {
      const head = Buffer.alloc(SQLITE_HEADER.length);
      return fs.readSync(fd, head, 0, head.length, 0) === head.length && head.equals(SQLITE_HEADER);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return false;
  }
}

/** What an incomplete database file is left holding: no database, so nothing opens it as a new, empty library. */
const incomplete = (kept: string) => `${RECLIB_NOTE}this file is incomplete: a restore failed while writing it. The database from before the restore is ${kept}.\n`;

/**
 * After a restore failed halfway (a full disk): the kept database back in its place (it fits: the
 * same bytes were there before) and the old secret with it, each told apart. `fd`: the database
 * file, when it had been truncated (else it is as it was). `oldSecret`: the old secret's second
 * name beside the secret file (holdOldSecret), null when there was none.
 */
export function putBack(o: { fd: number | undefined; db: string; kept: string; secretFile: string; oldSecret: string | null }): string {
  const said: string[] = [];
  if (o.fd === undefined) said.push('the database was not changed');
  else {
    let src: number | undefined;
    try {
      src = fs.openSync(o.kept, 'r'); // first: a copy that cannot be read must not cost what is there
      fs.ftruncateSync(o.fd, 0);
      copyFrom(src, o.fd, o.db);
      fs.fsyncSync(o.fd);
      said.push('the database is as it was');
    } catch (again) {
      try {
        fs.ftruncateSync(o.fd, 0);
        writeAllSync(o.fd, Buffer.from(incomplete(o.kept)), o.db, 0);
        fs.fsyncSync(o.fd);
      } catch {
        // Nothing more can be done here; the message says what to do.
      }
      said.push(`putting the old database back failed too (${(again as Error).message}): ${o.db} is incomplete; copy ${o.kept} over it before starting reclib`);
    } finally {
      if (src !== undefined) fs.closeSync(src);
    }
  }
  if (o.oldSecret === null) {
    try {
      fs.rmSync(o.secretFile, { force: true });
      said.push('the backup\'s secret written for it is removed (there was none before)');
    } catch (e) {
      said.push(`remove ${o.secretFile}: it is the backup's secret, and there was none before (${(e as Error).message})`);
    }
  } else {
    try {
      fs.renameSync(o.oldSecret, o.secretFile);
      said.push('its secret is as it was');
    } catch (e) {
      said.push(`the old secret could not be put back (${(e as Error).message}): it is ${o.oldSecret}; move it over ${o.secretFile}`);
    }
  }
  syncDirectory(path.dirname(o.secretFile));
  return `${said.join('; ')} (the old database is also kept at ${o.kept})`;
}

/** A second name for the current secret file beside it (a hard link; a copy where links are not offered). */
function holdOldSecret(secretFile: string): string {
  const held = `${secretFile}.${process.pid}.before-restore`;
  fs.rmSync(held, { force: true });
  try {
    fs.linkSync(secretFile, held);
  } catch {
    fs.copyFileSync(secretFile, held);
  }
  return held;
}

/** Copies the current master secret to `to` (never over an existing file); null when there is none. */
function keepSecret(secretFile: string, to: string): string | null {
  if (!fs.existsSync(secretFile)) return null;
  writeFileAtomic(to, fs.readFileSync(secretFile), { overwrite: false });
  return to;
}

function copyInto(source: string, fd: number, target: string): void {
  const src = fs.openSync(source, 'r');
  try {
    copyFrom(src, fd, target);
  } finally {
    fs.closeSync(src);
  }
}

/** Every byte of the open file `src` into `fd` (the file `target`) from its start. */
function copyFrom(src: number, fd: number, target: string): void {
  const buf = Buffer.alloc(1 << 20);
  for (let pos = 0; ; ) {
    const n = fs.readSync(src, buf, 0, buf.length, pos);
    if (n === 0) break;
    writeAllSync(fd, buf.subarray(0, n), target, pos);
    pos += n;
  }
}
