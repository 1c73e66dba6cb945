// SQL for the delivery outbox and its attempt log. Every method expects to run inside
// Writer.write() when it writes; the scheduler and the outbox own the transactions.
import type { Db } from '../db/open';
import { limitTo } from './bound-limit';

/** A delivery row's states; the waiting states of capture rules live in capture_evaluations. */
export const DELIVERY_STATUSES = ['queued', 'delivered', 'failed', 'disabled'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
export type DeliveryKind = 'event' | 'rule' | 'manual';

export interface DeliveryRow {
  id: string;
  account_id: string;
  webhook_id: string;
  event_id: string;
  recording_id: string;
  revision: number;
  kind: DeliveryKind;
  status: DeliveryStatus;
  body: string | null;
  attempts: number;
  next_attempt_at: number | null;
  locked_until: number | null;
  lease_token: string | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
  delivered_at: number | null;
  idempotency_key: string | null;
}

export type NewDelivery = Pick<
  DeliveryRow,
  'id' | 'account_id' | 'webhook_id' | 'event_id' | 'recording_id' | 'revision' | 'kind' | 'status' | 'body' | 'next_attempt_at' | 'created_at' | 'idempotency_key'
>;

export interface AttemptRow {
  delivery_id: string;
  attempt: number;
  lease_token: string;
  started_at: number;
  finished_at: number | null;
  duration_ms: number | null;
  status_code: number | null;
  error: string | null;
}

/** A row of a subscription's delivery log: the delivery, its place in the log, its event's type. */
export interface DeliveryLogRow extends DeliveryRow {
  /** The row's rowid: with created_at, the log's keyset (rows are never deleted, so it only grows). */
  log_seq: number;
  /** The feed event's type for kind 'event'; null otherwise. */
  event_type: string | null;
}

/** A position in a delivery log: the last row of the previous page. */
export interface DeliveryLogPosition {
  createdAt: number;
  seq: number;
}

/** A delivery's outcome after an attempt, written only by the holder of the current lease. */
export interface DeliveryOutcome {
  status: DeliveryStatus;
  next_attempt_at: number | null;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: number | null;
}

export class DeliveryStore {
  private readonly s;

  constructor(db: Db) {
    this.s = {
      insert: db.prepare<NewDelivery & { updated_at: number }>(
        `INSERT INTO deliveries (id, account_id, webhook_id, event_id, recording_id, revision, kind, status, body,
                                 next_attempt_at, created_at, updated_at, idempotency_key)
         VALUES (@id, @account_id, @webhook_id, @event_id, @recording_id, @revision, @kind, @status, @body,
                 @next_attempt_at, @created_at, @updated_at, @idempotency_key)`,
      ),
      get: db.prepare<[string], DeliveryRow>('SELECT * FROM deliveries WHERE id = ?'),
      forRecording: db.prepare<[string, string], DeliveryRow>(
        'SELECT * FROM deliveries WHERE account_id = ? AND recording_id = ? ORDER BY created_at, rowid',
      ),
      // Newest first, read in order from deliveries_webhook_log. The row value compare keeps the
      // page after the cursor inside that index range.
      log: db.prepare<{ webhook: string; createdAt: number; seq: number; limit: number }, DeliveryLogRow>(
        `SELECT d.*, d.rowid AS log_seq, e.type AS event_type
         FROM deliveries d
         LEFT JOIN events e ON d.kind = 'event' AND e.seq = CAST(d.event_id AS INTEGER)
         WHERE d.webhook_id = @webhook AND (d.created_at, d.rowid) < (@createdAt, @seq)
         ORDER BY d.created_at DESC, d.rowid DESC ${limitTo('@limit')}`,
      ),
      byIdempotencyKey: db.prepare<[string, string], DeliveryRow>(
        'SELECT * FROM deliveries WHERE account_id = ? AND idempotency_key = ?',
      ),
      // A body of null means erased or not yet built: such a row is never sent.
      anyDue: db.prepare<[number], { one: number }>(
        "SELECT 1 AS one FROM deliveries WHERE status = 'queued' AND next_attempt_at <= ? LIMIT 1",
      ),
      dueWebhooks: db.prepare<[number], { webhook_id: string; due_at: number }>(
        `SELECT webhook_id, min(next_attempt_at) AS due_at FROM deliveries
         WHERE status = 'queued' AND next_attempt_at <= ? AND body IS NOT NULL GROUP BY webhook_id`,
      ),
      // Oldest first within a subscription: with one send in flight per subscription, a receiver
      // gets its deliveries in the order they were queued (retries aside).
      dueHead: db.prepare<[string, number], DeliveryRow>(
        `SELECT * FROM deliveries WHERE webhook_id = ? AND status = 'queued' AND next_attempt_at <= ? AND body IS NOT NULL
         ORDER BY created_at, rowid LIMIT 1`,
      ),
      claimsSince: db.prepare<[number, number], { n: number }>('SELECT count(*) AS n FROM delivery_attempts WHERE started_at > ? AND started_at <= ?'),
      // The lease expiry doubles as the next due time: if the worker dies, the row is due again
      // exactly when its lease runs out.
      lease: db.prepare<[string, number, number, number, string], DeliveryRow>(
        `UPDATE deliveries SET attempts = attempts + 1, lease_token = ?, locked_until = ?, next_attempt_at = ?, updated_at = ?
         WHERE id = ? AND status = 'queued' RETURNING *`,
      ),
      insertAttempt: db.prepare<[string, number, string, number]>(
        'INSERT INTO delivery_attempts (delivery_id, attempt, lease_token, started_at) VALUES (?, ?, ?, ?)',
      ),
      interruptAttempts: db.prepare<[string, number, string]>(
        'UPDATE delivery_attempts SET error = ?, finished_at = ? WHERE delivery_id = ? AND finished_at IS NULL',
      ),
      finishAttempt: db.prepare<[number, number, number | null, string | null, string, string]>(
        `UPDATE delivery_attempts SET finished_at = ?, duration_ms = ?, status_code = ?, error = ?
         WHERE delivery_id = ? AND lease_token = ?`,
      ),
      finish: db.prepare<DeliveryOutcome & { id: string; token: string; now: number }>(
        `UPDATE deliveries SET status = @status, next_attempt_at = @next_attempt_at, last_status_code = @last_status_code,
                last_error = @last_error, delivered_at = @delivered_at, locked_until = NULL, lease_token = NULL, updated_at = @now
         WHERE id = @id AND lease_token = @token`,
      ),
      close: db.prepare<[string, string | null, number, string]>(
        `UPDATE deliveries SET status = ?, last_error = COALESCE(?, last_error), next_attempt_at = NULL, locked_until = NULL,
                lease_token = NULL, updated_at = ?
         WHERE id = ?`,
      ),
      cancelForWebhook: db.prepare<[number, string]>(
        `UPDATE deliveries SET status = 'disabled', next_attempt_at = NULL, updated_at = ?
         WHERE webhook_id = ? AND status = 'queued'`,
      ),
      attempts: db.prepare<[string], AttemptRow>('SELECT * FROM delivery_attempts WHERE delivery_id = ? ORDER BY attempt'),
      // Text-mode deliveries of a deleted recording (those that describe revisions before the
      // deletion): the stored text is erased and whatever has not been delivered yet is cancelled.
      eraseText: db.prepare<[number, string, string, number]>(
        `UPDATE deliveries SET body = NULL, updated_at = ?,
                status = CASE WHEN status = 'queued' THEN 'disabled' ELSE status END,
                next_attempt_at = CASE WHEN status = 'queued' THEN NULL ELSE next_attempt_at END
         WHERE account_id = ? AND recording_id = ? AND revision < ?
           AND webhook_id IN (SELECT id FROM webhooks WHERE payload_mode = 'text')`,
      ),
    };
  }

  insert(d: NewDelivery): void {
    this.s.insert.run({ ...d, updated_at: d.created_at });
  }

  get(id: string): DeliveryRow | undefined {
    return this.s.get.get(id);
  }

  /** Every delivery of one recording, oldest first (the v1 delivery status listing). */
  forRecording(accountId: string, recordingId: string): DeliveryRow[] {
    return this.s.forRecording.all(accountId, recordingId);
  }

  /** A page of one subscription's deliveries, newest first, after `after` (the start when undefined). */
  log(webhookId: string, after: DeliveryLogPosition | undefined, limit: number): DeliveryLogRow[] {
    const from = after ?? { createdAt: Number.MAX_SAFE_INTEGER, seq: Number.MAX_SAFE_INTEGER };
    return this.s.log.all({ webhook: webhookId, createdAt: from.createdAt, seq: from.seq, limit });
  }

  byIdempotencyKey(accountId: string, key: string): DeliveryRow | undefined {
    return this.s.byIdempotencyKey.get(accountId, key);
  }

  /** Cheap read before taking the write lock: is anything queued and due? */
  anyDue(now: number): boolean {
    return this.s.anyDue.get(now) !== undefined;
  }

  /** The subscriptions with a sendable delivery due, each with its earliest due time. */
  dueWebhooks(now: number): Array<{ webhook_id: string; due_at: number }> {
    return this.s.dueWebhooks.all(now);
  }

  /** The oldest sendable due delivery of one subscription. */
  dueHead(webhookId: string, now: number): DeliveryRow | undefined {
    return this.s.dueHead.get(webhookId, now);
  }

  /** Attempts started after `since` (the sliding per-minute claim window). */
  /**
   * Attempts started in (since, until]. Not those after `until` (now): after the clock was set
   * back, the last minute's attempts lie in the future, and counted they stopped every claim, new
   * deliveries' too, for as long as the step.
   */
  claimsSince(since: number, until: number): number {
    return this.s.claimsSince.get(since, until)?.n ?? 0;
  }

  /** Takes a lease and counts the attempt; undefined if the row is no longer queued. */
  lease(id: string, token: string, lockedUntil: number, now: number): DeliveryRow | undefined {
    return this.s.lease.get(token, lockedUntil, lockedUntil, now, id);
  }

  insertAttempt(deliveryId: string, attempt: number, token: string, startedAt: number): void {
    this.s.insertAttempt.run(deliveryId, attempt, token, startedAt);
  }

  /** Closes attempts whose worker never reported back (crash, or a lease that ran out). */
  interruptAttempts(deliveryId: string, error: string, now: number): void {
    this.s.interruptAttempts.run(error, now, deliveryId);
  }

  finishAttempt(deliveryId: string, token: string, a: { finishedAt: number; durationMs: number; statusCode: number | null; error: string | null }): void {
    this.s.finishAttempt.run(a.finishedAt, a.durationMs, a.statusCode, a.error, deliveryId, token);
  }

  /** Writes the outcome only if `token` still holds the lease; returns whether it did. */
  finish(id: string, token: string, outcome: DeliveryOutcome, now: number): boolean {
    return this.s.finish.run({ ...outcome, id, token, now }).changes > 0;
  }

  /** Ends a delivery without an attempt outcome (exhausted after a crash, subscription gone). */
  close(id: string, status: DeliveryStatus, error: string | null, now: number): void {
    this.s.close.run(status, error, now, id);
  }

  /** A disabled subscription gets no new sends: its queued deliveries are cancelled. */
  cancelForWebhook(webhookId: string, now: number): number {
    return this.s.cancelForWebhook.run(now, webhookId).changes;
  }

  /**
   * A recording was deleted at `revision`: its text-mode deliveries of earlier revisions lose their
   * stored body, and those not delivered yet are cancelled (status disabled). Returns how many.
   */
  eraseTextForRecording(accountId: string, recordingId: string, revision: number, now: number): number {
    return this.s.eraseText.run(now, accountId, recordingId, revision).changes;
  }

  attempts(deliveryId: string): AttemptRow[] {
    return this.s.attempts.all(deliveryId);
  }
}
