// A key's lastUsedAt, written after the request that used the key, never during it. Most uses are
// reads (GET), and a read must not wait for the write lock: when the admin CLI (another process)
// holds it, a write inside the request would block the event loop, every other request with it,
// for up to busy_timeout (5 s) and then fail the read. So authenticate() only notes the use; the
// note is written on the next turn of the event loop without waiting for the lock (busy_timeout 0,
// Writer.writeNow) and, when the lock is taken, tried again TOUCH_RETRY_MS later. Listings show a
// noted use at once (lastUsedAt), written or not.
//
// A noted use that was never written (the process stopped first, or the file refused writes) is
// lost: lastUsedAt is informational and written at most once a minute anyway.
import type { Writer } from '../db/writer';
import type { AuthStore } from '../store/auth-store';

/** After the write lock was taken (or the write failed), the next try. */
export const TOUCH_RETRY_MS = 1_000;

export class KeyUses {
  /** Noted uses not yet written: key id → time of use. */
  private readonly pending = new Map<string, number>();
  /** Cancels the scheduled flush, if there is one. */
  private cancelNext: (() => void) | undefined;

  constructor(
    private readonly writer: Writer,
    private readonly store: AuthStore,
    private readonly retryMs = TOUCH_RETRY_MS,
  ) {}

  /** Notes that a key was used at `at`; written soon, outside the caller's request. */
  note(keyId: string, at: number): void {
    this.pending.set(keyId, Math.max(at, this.pending.get(keyId) ?? at));
    if (this.cancelNext) return;
    const next = setImmediate(() => this.flush());
    this.cancelNext = () => clearImmediate(next);
  }

  /** The latest noted use of a key that is not written yet. */
  unwritten(keyId: string): number | undefined {
    return this.pending.get(keyId);
  }

  /** Writes the noted uses if the write lock is free now; else tries again later. True when none is left. */
  flush(): boolean {
    this.cancelNext?.();
    this.cancelNext = undefined;
    if (this.pending.size === 0) return true;
    if (!this.writer.db.open) {
      this.pending.clear(); // shut down: nothing can be written any more
      return false;
    }
    const uses = [...this.pending];
    try {
      this.writer.writeNow(() => {
        for (const [keyId, at] of uses) this.store.touchKey(keyId, at);
      });
    } catch {
      // SQLITE_BUSY (another process is writing) or the disk refused: later, without waiting now.
      const next = setTimeout(() => this.flush(), this.retryMs).unref();
      this.cancelNext = () => clearTimeout(next);
      return false;
    }
    for (const [keyId, at] of uses) if (this.pending.get(keyId) === at) this.pending.delete(keyId);
    return this.pending.size === 0;
  }
}
