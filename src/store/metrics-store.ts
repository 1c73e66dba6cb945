// The counts /metrics reports, read when Prometheus scrapes (never on a request's path).
import type { Db } from '../db/open';

export class MetricsStore {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      // Both are answered from an index: recordings_account is partial on deleted_at IS NULL,
      // deliveries_due starts with status.
      liveRecordings: db.prepare<[], { n: number }>('SELECT count(*) AS n FROM recordings WHERE deleted_at IS NULL'),
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
