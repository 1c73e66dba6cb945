// `reclib backup`: an online, consistent copy of the database plus its master secret. Without the
// secret a restored library would derive new webhook secrets and every consumer would reject its
// deliveries, so FILE.secret is written beside FILE. Neither file is ever overwritten.
import fs from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { createPrivateFile, makePrivateDir, pathProblem, syncDirectory, writeFileAtomic } from '../files/private-files';
import type { Db } from './open';
import { openSqlite } from './sqlite';

export interface BackupResult {
  file: string;
  secretFile: string;
  pages: number;
  bytes: number;
}

export class BackupError extends Error {
  constructor(
    readonly code: 'file_exists' | 'backup_failed' | 'invalid_backup',
    message: string,
  ) {
    super(message);
  }
}

/** `PRAGMA integrity_check` of a database file that is not in use: 'ok' or what SQLite found. */
export function integrityProblems(db: Database.Database): string | undefined {
  const rows = db.pragma('integrity_check', { simple: false }) as Array<{ integrity_check: string }>;
  const found = rows.map((r) => r.integrity_check).filter((m) => m !== 'ok');
  return found.length === 0 ? undefined : found.slice(0, 5).join('; ');
}

/** Flushes a file's content to disk. */
export function fsyncFile(file: string): void {
  const fd = fs.openSync(file, 'r+');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * A failure writing the copy as the person reads it: naming the backup file, not the database
 * (SQLite's "database or disk is full" read as if the library itself were full), without Node's
 * raw "ENOENT: …, open '…'".
 */
export function backupFailure(file: string, e: unknown): unknown {
  if (e instanceof BackupError) return e;
  const { code, message } = e as { code?: unknown; message?: unknown };
  if (code === 'SQLITE_FULL' || code === 'ENOSPC') {
    return new BackupError('backup_failed', `backup file ${file}: no space left on the device it is on; nothing was kept`);
  }
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code) && typeof message === 'string') {
    const what = /^E[A-Z]+: ([^,]+)/.exec(message)?.[1] ?? message;
    return new BackupError('backup_failed', `backup file ${file}: ${what} (${code}); nothing was kept`);
  }
  return e;
}

export async function backupDatabase(db: Db, to: string, masterSecret: Buffer): Promise<BackupResult> {
  const file = path.resolve(to);
  try {
    return await copyInto(db, file, masterSecret);
  } catch (e) {
    throw backupFailure(file, e);
  }
}

async function copyInto(db: Db, file: string, masterSecret: Buffer): Promise<BackupResult> {
  const secretFile = `${file}.secret`;
  for (const f of [file, secretFile]) if (fs.existsSync(f)) throw new BackupError('file_exists', `${f} already exists; a backup never overwrites: choose a new file`);
  const problem = pathProblem(file);
  if (problem) throw new BackupError('backup_failed', `backup file ${file}: ${problem}`);
  makePrivateDir(path.dirname(file));
  // Created empty and private first (SQLite would make it 0644); 'wx' also loses a race with
  // another backup to the same name instead of writing into its file.
  fs.closeSync(createPrivateFile(file));
  let secretWritten = false;
  try {
    writeFileAtomic(secretFile, masterSecret.toString('base64') + '\n', { overwrite: false });
    secretWritten = true;
    // SQLite's online backup API. A write by another connection (the server) between two steps
    // restarts the copy, so under steady writes small steps could restart forever: after the
    // first step copy every remaining page in one step, inside one read snapshot. WAL readers do
    // not block writers, so the server keeps writing meanwhile.
    const result = await db.backup(file, { progress: () => 0x7fffffff });
    const copy = openSqlite(file);
    try {
      // A standalone file: rollback journal, so the copy is one file that needs no -wal beside it.
      copy.pragma('journal_mode = DELETE');
      const broken = integrityProblems(copy);
      if (broken) throw new BackupError('backup_failed', `the copy ${file} failed its integrity check (${broken}); the database itself may be damaged`);
    } finally {
      copy.close();
    }
    fsyncFile(file);
    syncDirectory(path.dirname(file));
    return { file, secretFile, pages: result.totalPages, bytes: fs.statSync(file).size };
  } catch (e) {
    // Nothing half-made stays behind under the backup's name.
    fs.rmSync(file, { force: true });
    fs.rmSync(`${file}-journal`, { force: true });
    if (secretWritten) fs.rmSync(secretFile, { force: true });
    throw e;
  }
}
