// The outbox: the one place that decides what is queued for webhooks, and the only writer of
// delivery rows. Its hooks run inside the transaction of the change that causes them, so a change,
// its events and its deliveries are committed together or not at all ("stored before sending");
// the delivery scheduler (src/delivery/) sends them after the commit.
//
// What each cause queues (decisions.md §6, §18, §19):
//   an event ......... default subscriptions listing its type: the feed item (defaultPayloadBody);
//                      text subscriptions without rules listing its type: a text snapshot of the
//                      recording at the event's revision; rule subscriptions: nothing.
//   a change ......... rule deliveries that the capture rules decide (capture-rules.ts); a delete
//                      erases the text of the recording's text deliveries and cancels those not
//                      delivered yet (the deletion event's own delivery carries no text).
//   a manual send .... the recording now, in the subscription's payload mode (manual-delivery.ts).
//   a test send ...... `{ id: "test_…", type: "webhook.test", createdAt }` (webhook-log.ts).
// Every body is stored as it will be sent: retries resend the same bytes after later edits.
import type { Core } from '../context';
import { newId } from '../ids';
import type { CaptureEvaluationStore } from '../store/capture-evaluation-store';
import type { DeliveryKind, DeliveryStore } from '../store/delivery-store';
import type { EventRow, EventStore } from '../store/event-store';
import type { RecordingStore } from '../store/recording-store';
import type { WebhookRow, WebhookStore } from '../store/webhook-store';
import { CaptureRules } from './capture-rules';
import { eventJson } from './events';
import type { RecordingRow } from './recording-model';
import { textPayloadBody } from './text-payload';

export const MANUAL_TYPE = 'recording.manual';
export const TEST_TYPE = 'webhook.test';

/** One delivery to queue in the current transaction. */
export interface QueuedDelivery {
  /** dlv_…; chosen before the body when the body carries it (the text payload's `id`). */
  id: string;
  webhook: WebhookRow;
  /** Decimal events.seq, manual_… for a manual send, test_… for a test send. */
  eventId: string;
  /** '' for a test send, which is about no recording. */
  recordingId: string;
  revision: number;
  kind: DeliveryKind;
  /** The exact bytes to send. */
  body: string;
  now: number;
  idempotencyKey?: string | undefined;
}

/** What the outbox reads and writes; all of it exists before the first write. */
export interface OutboxStores {
  webhooks: WebhookStore;
  deliveries: DeliveryStore;
  /** The recording as an event describes it (the row is written before its events). */
  recordings: RecordingStore;
  evaluations: CaptureEvaluationStore;
  events: EventStore;
  /** Wakes the delivery scheduler; registered to run after the commit that queued something. */
  nudge: () => void;
}

/** The default payload (decisions.md §6): the feed item, no text, no credentials. */
export const defaultPayloadBody = (event: EventRow): string => JSON.stringify(eventJson(event));

export const subscribesTo = (webhook: WebhookRow, type: string): boolean =>
  (JSON.parse(webhook.events) as string[]).includes(type);

export class Outbox {
  private readonly captureRules: CaptureRules;

  constructor(
    private readonly core: Core,
    private readonly stores: OutboxStores,
  ) {
    this.captureRules = new CaptureRules(core, stores.webhooks, stores.evaluations, stores.events);
  }

  /** EventService listener: runs inside the transaction that emitted the event. */
  onEvent(event: EventRow): void {
    for (const webhook of this.stores.webhooks.active(event.account_id)) {
      if (!subscribesTo(webhook, event.type)) continue;
      // The event's own time: one clock reading per transaction.
      const base = { webhook, eventId: String(event.seq), recordingId: event.recording_id, revision: event.revision, kind: 'event' as const, now: event.created_at };
      if (webhook.payload_mode === 'default') {
        this.queue({ ...base, id: newId('dlv'), body: defaultPayloadBody(event) });
      } else if (webhook.rules === null) {
        const row = this.stores.recordings.get(event.account_id, event.recording_id);
        if (!row) continue;
        const id = newId('dlv');
        const body = textPayloadBody(this.core.config, { deliveryId: id, type: event.type, eventId: base.eventId, createdAt: event.created_at, revision: event.revision, row });
        this.queue({ ...base, id, body });
      }
    }
  }

  /** RecordingService change hook: runs inside the writing transaction. */
  onChange(before: RecordingRow | null, after: RecordingRow): void {
    for (const d of this.captureRules.onChange(before, after)) this.queue(d);
    if (before !== null && before.deleted_at === null && after.deleted_at !== null) {
      this.stores.deliveries.eraseTextForRecording(after.account_id, after.id, after.revision, after.updated_at);
    }
  }

  /** A manual send of `row` as it is now, in the subscription's payload mode; returns its id. */
  queueManual(webhook: WebhookRow, row: RecordingRow, idempotencyKey: string, now: number): string {
    const id = newId('dlv');
    const eventId = newId('manual');
    const body =
      webhook.payload_mode === 'text'
        ? textPayloadBody(this.core.config, { deliveryId: id, type: MANUAL_TYPE, eventId, createdAt: now, revision: row.revision, row })
        : JSON.stringify({ id: eventId, type: MANUAL_TYPE, recordingId: row.id, revision: row.revision, createdAt: now });
    return this.queue({ id, webhook, eventId, recordingId: row.id, revision: row.revision, kind: 'manual', body, now, idempotencyKey });
  }

  /**
   * A webhook.test send: the same body in both payload modes. Its row keeps recording_id '' (the
   * column is NOT NULL in databases of earlier releases) and kind 'manual' (a send someone asked
   * for). Returns its id.
   */
  queueTest(webhook: WebhookRow, now: number): string {
    const eventId = newId('test');
    const body = JSON.stringify({ id: eventId, type: TEST_TYPE, createdAt: now });
    return this.queue({ id: newId('dlv'), webhook, eventId, recordingId: '', revision: 0, kind: 'manual', body, now });
  }

  private queue(d: QueuedDelivery): string {
    this.stores.deliveries.insert({
      id: d.id,
      account_id: d.webhook.account_id,
      webhook_id: d.webhook.id,
      event_id: d.eventId,
      recording_id: d.recordingId,
      revision: d.revision,
      kind: d.kind,
      status: 'queued',
      body: d.body,
      next_attempt_at: d.now,
      created_at: d.now,
      idempotency_key: d.idempotencyKey ?? null,
    });
    this.core.writer.onCommit(this.stores.nudge);
    return d.id;
  }
}
