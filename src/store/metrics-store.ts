// The counts /metrics reports, read when Prometheus scrapes (never on a request's path).
import type { Db } from '../db/open';

/**
 * Live recordings, all accounts: SQLite answers it from one of the partial indexes on deleted_at IS
 * NULL, but that is still one index entry per recording. src/observe/library-count.ts runs it off the event loop.
 */
export const LIVE_RECORDINGS_SQL = 'SELECT count(*) AS n FROM recordings WHERE deleted_at IS NULL';

export class MetricsStore {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      liveRecordings: db.prepare<[], { n: number }>(LIVE_RECORDINGS_SQL),
      // A search of deliveries_due (status first): only the queued rows are read.
      queuedDeliveries: db.prepare<[], { n: number }>("SELECT count(*) AS n FROM deliveries WHERE status = 'queued'"),
    };
  }

  /** Recordings in the library (all accounts), deleted ones not counted. */
  liveRecordings(): number {
    return this.stmts.liveRecordings.get()?.n ?? 0;
  }

  /** Deliveries waiting to be sent or retried (the outbox's depth). */
  queuedDeliveries(): number {
    return this.stmts.queuedDeliveries.get()?.n ?? 0;
  }
}
