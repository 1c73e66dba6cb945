// SQL for capture-rule evaluations (schema.sql "capture_evaluations") and the two event lookups the
// text deliveries need. Writes run inside the recording write that causes them.
import type { Db } from '../db/open';

export interface CaptureEvaluationRow {
  recording_id: string;
  webhook_id: string;
  account_id: string;
  status: 'pending_transcription' | 'waiting_for_capture_input';
  revision: number | null;
  event_id: string | null;
  event_at: number | null;
  delivery_id: string | null;
  body: string | null;
  created_at: number;
  updated_at: number;
}

export interface WaitingSnapshot {
  revision: number;
  eventId: string;
  eventAt: number;
  deliveryId: string;
  body: string;
}

export class CaptureEvaluationStore {
  private readonly s;

  constructor(db: Db) {
    this.s = {
      insert: db.prepare<[string, string, string, number, number]>(
        `INSERT OR IGNORE INTO capture_evaluations (recording_id, webhook_id, account_id, status, created_at, updated_at)
         VALUES (?, ?, ?, 'pending_transcription', ?, ?)`,
      ),
      forRecording: db.prepare<[string], CaptureEvaluationRow>(
        'SELECT * FROM capture_evaluations WHERE recording_id = ? ORDER BY created_at, webhook_id',
      ),
      // The listing shows only evaluations that can still produce a delivery.
      activeForRecording: db.prepare<[string, string], CaptureEvaluationRow>(
        `SELECT e.* FROM capture_evaluations e JOIN webhooks w ON w.id = e.webhook_id AND w.status = 'active'
         WHERE e.account_id = ? AND e.recording_id = ? ORDER BY e.created_at, e.webhook_id`,
      ),
      wait: db.prepare<[number, string, number, string, string, number, string, string]>(
        `UPDATE capture_evaluations SET status = 'waiting_for_capture_input', revision = ?, event_id = ?, event_at = ?,
                delivery_id = ?, body = ?, updated_at = ?
         WHERE recording_id = ? AND webhook_id = ?`,
      ),
      remove: db.prepare<[string, string]>('DELETE FROM capture_evaluations WHERE recording_id = ? AND webhook_id = ?'),
      removeForRecording: db.prepare<[string]>('DELETE FROM capture_evaluations WHERE recording_id = ?'),
    };
  }

  /** Opens an undecided evaluation; a second admission of the same pair changes nothing. */
  open(recordingId: string, webhookId: string, accountId: string, now: number): void {
    this.s.insert.run(recordingId, webhookId, accountId, now, now);
  }

  forRecording(recordingId: string): CaptureEvaluationRow[] {
    return this.s.forRecording.all(recordingId);
  }

  /** Undecided evaluations of a recording whose subscription is still active. */
  activeForRecording(accountId: string, recordingId: string): CaptureEvaluationRow[] {
    return this.s.activeForRecording.all(accountId, recordingId);
  }

  wait(recordingId: string, webhookId: string, snap: WaitingSnapshot, now: number): void {
    this.s.wait.run(snap.revision, snap.eventId, snap.eventAt, snap.deliveryId, snap.body, now, recordingId, webhookId);
  }

  remove(recordingId: string, webhookId: string): void {
    this.s.remove.run(recordingId, webhookId);
  }

  removeForRecording(recordingId: string): void {
    this.s.removeForRecording.run(recordingId);
  }
}
