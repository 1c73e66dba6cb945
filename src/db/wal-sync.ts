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
// every acknowledgment would leave them.
import fs from 'node:fs';
import type { CommitSync } from './writer';

export class WalSync implements CommitSync {
  private fd: number | undefined;
  private ino = -1;

  /** `database`: the path the connection opened (better-sqlite3's db.name); its WAL is `${database}-wal`. */
  constructor(private readonly database: string) {}

  /**
   * The WAL file's descriptor, opened again if the file at the path is another one: SQLite
   * deletes the WAL when the last connection closes (the main thread's and the checkpointer's stay
   * open while this one does; this is for safety, not expected). An fsync of any descriptor of a
   * file flushes that file.
   */
  private wal(): number {
    const { ino } = fs.statSync(`${this.database}-wal`);
    if (this.fd !== undefined && ino === this.ino) return this.fd;
    this.close();
    const fd = fs.openSync(`${this.database}-wal`, 'r');
    this.fd = fd;
    this.ino = fs.fstatSync(fd).ino;
    return fd;
  }

  flush(done: (error?: unknown) => void): void {
    let fd: number;
    try {
      fd = this.wal();
    } catch (e) {
      queueMicrotask(() => done(e));
      return;
    }
    fs.fdatasync(fd, (e) => done(e ?? undefined));
  }

  flushNow(): void {
    fs.fdatasyncSync(this.wal());
  }

  close(): void {
    if (this.fd === undefined) return;
    try {
      fs.closeSync(this.fd);
    } catch {
      // already closed
    }
    this.fd = undefined;
  }
}
