// Whether writes are failing because of the storage (docs/decisions.md §12): a full disk, a read-only file
// or folder, an I/O error. Such a write is refused as 503 unavailable with Retry-After: 30, not as
// a 500 — the client cannot tell "retry later" from a bug otherwise, and SQLite has rolled the
// whole transaction back, so the same request (same Idempotency-Key) succeeds once space is back.
// The condition is logged once when it starts and once when a write succeeds again, not per
// request, and /healthz reports it while it lasts. On `reclib serve` the main thread mirrors the
// writer thread's condition, and src/writer-thread.ts reports `writer_stopped` while that thread
// is being started again (its writes get 503 with Retry-After: 1 there).
import { AppError } from '../errors';

/** What stops writes: the storage's answer to a write, or (`writer_stopped`, on `reclib serve`) the writer thread itself gone until it is started again. */
export type WriteFailure = 'disk_full' | 'read_only' | 'io_error' | 'writer_stopped';

/** The storage condition behind a SQLite error, if it is one (extended codes included). */
export function writeFailureOf(err: unknown): WriteFailure | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return undefined;
  if (code === 'SQLITE_FULL') return 'disk_full';
  if (code === 'SQLITE_READONLY' || code.startsWith('SQLITE_READONLY_')) return 'read_only';
  if (code === 'SQLITE_IOERR' || code.startsWith('SQLITE_IOERR_')) return 'io_error';
  return undefined;
}

const WHAT: Record<WriteFailure, string> = {
  disk_full: 'the disk is full',
  read_only: 'the database file or its folder is read-only',
  io_error: 'the disk reported an I/O error',
  writer_stopped: 'the writer thread stopped and is being started again',
};

export const WRITE_RETRY_AFTER_S = 30;

export interface WriteHealthStatus {
  failing: WriteFailure;
  since: number;
}

export class WriteHealth {
  /** The condition of this connection's own writes. */
  private own: WriteHealthStatus | undefined;
  /** The writer thread's, on `reclib serve`'s main thread (mirror); only that thread ends it. */
  private mirrored: WriteHealthStatus | undefined;
  private readonly listeners: Array<(status: WriteHealthStatus | undefined) => void> = [];

  constructor(
    /** Where the start and the end of an episode are reported (serve: stderr). */
    public log: (line: string) => void = (line) => console.error(line),
  ) {}

  /**
   * Undefined while writes work. The writer thread's condition comes first: it writes every
   * request's changes, the main thread's own connection only a key's last use (key-uses.ts).
   */
  get status(): WriteHealthStatus | undefined {
    return this.mirrored ?? this.own;
  }

  /**
   * The error to hand to the caller for a failed write: a storage failure becomes 503 unavailable
   * (and starts an episode); anything else is returned as it was.
   */
  refused(err: unknown, { committed = false }: { committed?: boolean } = {}): unknown {
    const failure = writeFailureOf(err);
    if (!failure) return err;
    if (this.own?.failing !== failure) {
      this.own = { failing: failure, since: Date.now() };
      this.changed();
      const code = (err as { code: string }).code;
      this.log(`reclib: writes are failing: ${WHAT[failure]} (${code}); answering 503 with Retry-After: ${WRITE_RETRY_AFTER_S} until a write succeeds; reads keep working`);
    }
    // `committed`: the fsync after the commit failed (src/db/writer.ts, with --durability full).
    const outcome = committed
      ? `The change was made but is not known to be on the disk; retry in ${WRITE_RETRY_AFTER_S} s (the same Idempotency-Key finds a create again; an edit or delete may find itself done)`
      : `Nothing was saved; retry in ${WRITE_RETRY_AFTER_S} s (the same Idempotency-Key is safe)`;
    return new AppError('unavailable', `the server cannot write: ${WHAT[failure]}. ${outcome}`, { 'Retry-After': String(WRITE_RETRY_AFTER_S) });
  }

  /**
   * A write of this connection committed: its episode, if any, is over. A mirrored condition stays:
   * a write of the main thread's own connection says nothing about the writer thread's (a full
   * disk there, or the thread itself stopped), which only that thread's next report ends (mirror).
   */
  succeeded(): void {
    if (this.own === undefined) return;
    const seconds = Math.round((Date.now() - this.own.since) / 1000);
    this.own = undefined;
    this.changed();
    this.log(`reclib: writes work again (they failed for ${seconds} s)`);
  }

  /** Calls `listener` whenever an episode starts or ends (the writer thread tells the main thread). */
  onChange(listener: (status: WriteHealthStatus | undefined) => void): void {
    this.listeners.push(listener);
  }

  /**
   * Takes over the state of the connection that writes (the writer thread's), so that /healthz on
   * the main thread reports it; logged there, not again here.
   */
  mirror(status: WriteHealthStatus | undefined): void {
    this.mirrored = status;
  }

  private changed(): void {
    for (const listener of this.listeners) listener(this.own);
  }
}
