// Durable commits without holding the writer (docs/decisions.md §11). With synchronous=FULL,
// SQLite fsyncs the WAL inside every COMMIT, and the writer thread waits for the disk there
// (2.75 ms p50 per group at 1M recordings), doing nothing. In WAL mode, FULL is NORMAL plus that
// one fsync of the WAL after each commit (https://sqlite.org/pragma.html#pragma_synchronous):
// NORMAL already syncs the WAL before each checkpoint and the database after it. So the writer
// thread's connection runs NORMAL, and this file makes the fsync FULL would have made: after a
// group commits, fdatasync of the WAL file on libuv's thread pool, and the group's members are
// answered (and their onCommit hooks run: webhooks, event streams) only once it returned. Meanwhile
// the writer commits the next group, whose fsync follows. An acknowledged write is on the disk,
// as with FULL; what changes is that a read on another connection may see a commit a few
// milliseconds before it is (as InnoDB's readers may), never its writer's client.
// test/db/power-loss.test.ts checks it as it checks FULL: rebuilds the files as a power cut at
// every acknowledgment would leave them. A failed fsync: Writer.recovered() (src/db/writer.ts).
import fs from 'node:fs';
import type { CommitSync } from './writer';

/**
 * The error SQLite's own COMMIT would have raised for the same failed fsync under FULL: its code
 * makes the write a 503 with Retry-After (src/db/write-health.ts), not a 500.
 */
export function walSyncError(cause: unknown): Error {
  const errno = (cause as { code?: unknown } | null)?.code;
  const code = errno === 'ENOSPC' || errno === 'EDQUOT' ? 'SQLITE_FULL' : 'SQLITE_IOERR_FSYNC';
  return Object.assign(new Error(`the fsync of the WAL failed: ${(cause as Error)?.message ?? String(cause)}`, { cause }), { code });
}

/**
 * One descriptor of the WAL file, opened again if the file at the path is another one: SQLite
 * deletes the WAL when the last connection closes (the main thread's and the checkpointer's stay
 * open while this one does; this is for safety, not expected). An fsync of any descriptor of a
 * file flushes that file. A descriptor replaced while an fsync on the thread pool still uses it
 * is closed when that fsync returns, never before: its number could meanwhile name another file.
 */
class WalDescriptor {
  private fd: number | undefined;
  private ino = -1;
  private inUse: number | undefined;

  constructor(private readonly path: string) {}

  get(): number {
    const { ino } = fs.statSync(this.path);
    if (this.fd !== undefined && ino === this.ino) return this.fd;
    this.close();
    const fd = fs.openSync(this.path, 'r');
    this.fd = fd;
    this.ino = fs.fstatSync(fd).ino;
    return fd;
  }

  /** fdatasync on the thread pool. */
  flush(done: (error?: unknown) => void): void {
    let fd: number;
    try {
      fd = this.get();
    } catch (e) {
      queueMicrotask(() => done(e));
      return;
    }
    this.inUse = fd;
    fs.fdatasync(fd, (e) => {
      this.inUse = undefined;
      if (fd !== this.fd) closeQuietly(fd);
      done(e ?? undefined);
    });
  }

  close(): void {
    if (this.fd !== undefined && this.fd !== this.inUse) closeQuietly(this.fd);
    this.fd = undefined;
  }
}

function closeQuietly(fd: number): void {
  try {
    fs.closeSync(fd);
  } catch {
    // already closed
  }
}

export class WalSync implements CommitSync {
  // Two descriptors, one for each way of flushing: Linux reports a failed writeback once per open
  // file, to the first fsync through it, and marks the pages clean. Were flushNow() to share the
  // pool's descriptor, an error the pool's fsync heard would make flushNow() report success for
  // a WAL that lacks a commit before its own (and the reverse).
  private readonly pooled: WalDescriptor;
  private readonly direct: WalDescriptor;

  /** `database`: the path the connection opened (better-sqlite3's db.name); its WAL is `${database}-wal`. */
  constructor(database: string) {
    this.pooled = new WalDescriptor(`${database}-wal`);
    this.direct = new WalDescriptor(`${database}-wal`);
  }

  flush(done: (error?: unknown) => void): void {
    this.pooled.flush((e) => done(e === undefined ? undefined : walSyncError(e)));
  }

  flushNow(): void {
    try {
      fs.fdatasyncSync(this.direct.get());
    } catch (e) {
      throw walSyncError(e);
    }
  }

  close(): void {
    this.pooled.close();
    this.direct.close();
  }
}
