// Whether another connection (the admin CLI) may have committed to the file since the last look,
// for caches that must not outlive such a commit (src/services/principal-cache.ts).
//
// PRAGMA data_version answers exactly that, but it opens and closes a read transaction each time.
// Measured per authenticate at 1M recordings: 2.1 µs with it on every request, 1.6 µs with this
// (the server's CPU profile showed 10 µs against 5.9 µs per get-by-id, but a sampling profiler's
// split of syscall time is not to be trusted). In WAL mode every commit, from any connection,
// rewrites the wal-index header: the first 48 bytes of the -shm file, which SQLite maps shared, so
// a plain read sees it (https://sqlite.org/walformat.html: iChange is incremented and mxFrame
// moves on each transaction). So the header is read first (one pread, ~1 µs) and data_version is
// asked only when the header differs from the one seen last time: after some commit, ours or not.
//
// Order matters: the header is read BEFORE data_version. A commit landing between the two is then
// either in the data_version read, or after the stored header, so the next look sees the header
// differ. A torn read of a header being rewritten also differs, and falls back to data_version.
//
// The -shm file is opened by wal-index.ts (beside the real file, only on Linux and macOS, never
// closed: it says why); elsewhere data_version every time.
//
// Kept on purpose (docs/architecture.md, "Speed tricks"): the header is SQLite's shared-memory
// format, which every SQLite since 3.7.0 shares with every other on the same file, not an API.
// test/db/commit-watch.test.ts pins the fields and offsets this relies on, so an upgrade of
// better-sqlite3 that changed them fails there by name. Measured again on a loaded 2-core
// machine: data_version 7.5-11.5 µs a call, this 3.2-6.5 µs.
import fs from 'node:fs';
import type { Db } from './open';
import { openWalIndex } from './wal-index';

/** The wal-index header: two copies of a 48-byte struct; the first copy is what readers check. */
const HEADER_BYTES = 48;

export class CommitWatch {
  private seen = Buffer.alloc(HEADER_BYTES);
  private next = Buffer.alloc(HEADER_BYTES);
  private version: number | undefined;

  constructor(
    private readonly dataVersion: () => number,
    /** A descriptor of the WAL index (openWalIndex); undefined (in-memory, not WAL, another platform): data_version every time. */
    private readonly fd: number | undefined,
  ) {}

  /** For a connection: watches its -shm file when it is a WAL file database (Linux, macOS). */
  static of(db: Db, dataVersion: () => number): CommitWatch {
    const wal = !db.memory && String(db.pragma('journal_mode', { simple: true })).toLowerCase() === 'wal';
    // The connection has read the file by now (migrate), so SQLite has created the -shm file.
    return new CommitWatch(dataVersion, wal ? openWalIndex(db.name) : undefined);
  }

  /** A number that changes whenever another connection has committed since the previous call. */
  current(): number {
    if (this.fd === undefined) return this.dataVersion();
    let read = 0;
    try {
      read = fs.readSync(this.fd, this.next, 0, HEADER_BYTES, 0);
    } catch {
      read = 0;
    }
    if (read === HEADER_BYTES && this.version !== undefined && this.next.equals(this.seen)) return this.version;
    this.version = this.dataVersion();
    if (read === HEADER_BYTES) [this.seen, this.next] = [this.next, this.seen];
    else this.seen.fill(0xff); // unreadable header: never matches a real one, so ask again next time
    return this.version;
  }
}
