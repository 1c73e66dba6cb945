// Deleted text out of the WAL file too. A delete erases the text from the database (secure_delete
// zeroes what it overwrites, FTS5's secure-delete takes the words out of the index), but the WAL
// still holds the earlier copies of the pages that had it, written by the create and any edits.
// A checkpoint does not remove them: the WAL starts over from its beginning without shrinking,
// so old frames stay in the file until later writes happen to cover them, which may take hours
// on a quiet server. So a commit that deleted a recording asks for the WAL to be checkpointed and
// truncated to zero bytes (wal_checkpoint(TRUNCATE)) a moment later: ERASE_DELAY_MS, so that a
// series of deletes costs one truncation. `serve` runs it; a CLI process leaves no WAL behind
// anyway (the last connection to close checkpoints and removes it).
import type { Worker } from '../server';
import { BUSY_TIMEOUT_MS, type Db } from './open';

export const ERASE_DELAY_MS = 1_000;
/** How long the truncation may wait for another process's reader or writer before it tries later. */
const WAIT_MS = 50;

export class WalEraser implements Worker {
  private due = false;
  private running = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    private readonly delayMs = ERASE_DELAY_MS,
  ) {}

  /** Call after a commit that erased text: the WAL is truncated within delayMs while running. */
  erased(): void {
    this.due = true;
    if (this.running) this.schedule();
  }

  start(): void {
    this.running = true;
    if (this.due) this.schedule();
  }

  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /**
   * Checkpoints the whole WAL into the database file and truncates it. False when a reader or
   * writer of another connection kept it from finishing (it is then still due).
   */
  truncate(): boolean {
    if (!this.db.open || this.db.memory) return true;
    if (this.db.inTransaction) return false;
    this.db.pragma(`busy_timeout = ${WAIT_MS}`);
    try {
      const [r] = this.db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>;
      if (r?.busy !== 0) return false;
      this.due = false;
      return true;
    } catch {
      return false; // SQLITE_BUSY or a transient I/O error: tried again later
    } finally {
      this.db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (!this.running) return;
      if (!this.truncate()) this.schedule();
    }, this.delayMs);
    this.timer.unref();
  }
}
