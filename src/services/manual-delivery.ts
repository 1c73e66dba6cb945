// Manual sends and the delivery status listing of a recording (spec v1 note 4, "Text delivery
// states", docs/decisions.md §6-7).
//
// A manual send delivers the recording as it is at `expectedRevision` to one subscription, in that
// subscription's payload mode, skipping its rules and ignoring its `events`. Its event id is
// manual_…, its type recording.manual, and it is not added to the event feed. The Idempotency-Key
// (per account) makes a retry after a network failure safe: the same key with the same selection
// (recording, subscription, revision) returns the delivery made the first time, even after the
// recording changed (once it is deleted: 410); with another selection it is 409 idempotency_conflict.
import type { Core } from '../context';
import { AppError, invalid } from '../errors';
import type { Principal } from '../permissions';
import type { CaptureEvaluationStore } from '../store/capture-evaluation-store';
import type { EventStore } from '../store/event-store';
import type { DeliveryRow, DeliveryStatus } from '../store/delivery-store';
import { MANUAL_TYPE, type Outbox } from './outbox';
import type { RecordingService } from './recordings';
import type { WebhookService } from './webhooks';

export const MAX_DELIVERY_KEY = 128;

export interface DeliveryJson {
  id: string;
  webhookId: string;
  eventId: string;
  type: string;
  /** What made it: an event of the feed, a capture rule, or a manual send. */
  trigger: 'event' | 'rule' | 'manual';
  revision: number;
  status: DeliveryStatus;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: number | null;
  createdAt: number;
  deliveredAt: number | null;
}

export interface CaptureEvaluationJson {
  webhookId: string;
  status: 'pending_transcription' | 'waiting_for_capture_input';
  /** Waiting: the revision (and its transcript_ready event) that will be sent. */
  revision: number | null;
  eventId: string | null;
  createdAt: number;
  updatedAt: number;
}

export class ManualDeliveryService {
  constructor(
    private readonly core: Core,
    private readonly recordings: RecordingService,
    private readonly webhooks: WebhookService,
    private readonly outbox: Outbox,
    private readonly evaluations: CaptureEvaluationStore,
    private readonly events: EventStore,
  ) {}

  /** Queues a manual send; `replayed` when the key was used before with the same selection. */
  send(principal: Principal, recordingId: string, input: { webhookId: string; expectedRevision: number }, key: string): { delivery: DeliveryJson; replayed: boolean } {
    if (key.length < 1 || key.length > MAX_DELIVERY_KEY) throw invalid(`Idempotency-Key header must be 1-${MAX_DELIVERY_KEY} characters`);
    return this.core.writer.write(() => {
      const earlier = this.webhooks.deliveries.byIdempotencyKey(principal.accountId, key);
      if (earlier) {
        const same = earlier.kind === 'manual' && earlier.recording_id === recordingId && earlier.webhook_id === input.webhookId && earlier.revision === input.expectedRevision;
        if (!same) throw new AppError('idempotency_conflict', 'Idempotency-Key was already used for another manual send; use a new key for a new send');
        // A deleted recording answers 410 to a retried send, as to a retried create.
        this.recordings.get(principal, recordingId);
        return { delivery: this.json(earlier), replayed: true };
      }
      const row = this.recordings.get(principal, recordingId);
      const webhook = this.webhooks.get(principal.accountId, input.webhookId);
      if (webhook.status !== 'active') throw new AppError('webhook_disabled', `webhook ${webhook.id} is disabled and receives no new sends`);
      if (row.revision !== input.expectedRevision) {
        throw new AppError('revision_conflict', `expectedRevision ${input.expectedRevision} is stale: recording ${row.id} is at revision ${row.revision}; read it again`);
      }
      if (row.text_saved === 0) throw new AppError('not_editable', 'this capture is still pending: there is nothing to send until the app saves its text');
      const id = this.outbox.queueManual(webhook, row, key, this.core.clock.now());
      return { delivery: this.json(this.webhooks.deliveries.get(id)!), replayed: false };
    });
  }

  /** Every delivery of a recording (oldest first) and its undecided capture-rule evaluations. */
  status(principal: Principal, recordingId: string): { deliveries: DeliveryJson[]; pendingCaptureEvaluations: CaptureEvaluationJson[] } {
    const row = this.recordings.get(principal, recordingId);
    return {
      deliveries: this.webhooks.deliveries.forRecording(principal.accountId, row.id).map((d) => this.json(d)),
      pendingCaptureEvaluations: this.evaluations.activeForRecording(principal.accountId, row.id).map((e) => ({
        webhookId: e.webhook_id,
        status: e.status,
        revision: e.revision,
        eventId: e.event_id,
        createdAt: e.created_at,
        updatedAt: e.updated_at,
      })),
    };
  }

  private json(d: DeliveryRow): DeliveryJson {
    return {
      id: d.id,
      webhookId: d.webhook_id,
      eventId: d.event_id,
      type: this.typeOf(d),
      trigger: d.kind,
      revision: d.revision,
      status: d.status,
      attempts: d.attempts,
      lastStatusCode: d.last_status_code,
      lastError: d.last_error,
      nextAttemptAt: d.next_attempt_at,
      createdAt: d.created_at,
      deliveredAt: d.delivered_at,
    };
  }

  private typeOf(d: DeliveryRow): string {
    if (d.kind === 'manual') return MANUAL_TYPE;
    if (d.kind === 'rule') return 'recording.transcript_ready';
    return this.events.type(Number(d.event_id)) ?? 'unknown';
  }
}
