// The webhook outbox: delivery rows are written inside the transaction of the change that causes
// them (EventService.onEvent listeners run there), so an event and its deliveries are committed
// together or not at all — "stored before sending". The scheduler sends them after commit.
import type { Core } from '../context';
import { newId } from '../ids';
import { eventJson } from '../services/events';
import type { DeliveryKind, DeliveryStatus, DeliveryStore } from '../store/delivery-store';
import type { EventRow } from '../store/event-store';
import type { WebhookRow, WebhookStore } from '../store/webhook-store';

export interface EnqueueInput {
  /** dlv_… from newId('dlv'); pass one when the body must carry it (the text payload's `id`). */
  id?: string | undefined;
  webhook: WebhookRow;
  /** Decimal events.seq, or manual_… for a manual send. */
  eventId: string;
  recordingId: string;
  revision: number;
  kind: DeliveryKind;
  /** The exact bytes to send, stored before sending: retries resend them unchanged. */
  body: string;
  now: number;
  idempotencyKey?: string | undefined;
}

/**
 * THE SEAM FOR TEXT MODE (issue 5). Called inside the emitting transaction, once per event and
 * per active text-mode (`payload_mode = 'text'`) subscription of the event's account, whatever
 * the subscription's `events` list says (rule subscriptions get rule deliveries, not events).
 * It decides whether the event produces a delivery and calls `outbox.enqueue()` with the text
 * body (an immutable snapshot; retries resend it byte for byte).
 * Until the v1 layer installs one with `Outbox.setTextModePlanner`, text subscriptions get nothing.
 */
export type TextModePlanner = (event: EventRow, webhook: WebhookRow, outbox: Outbox) => void;

/** The default payload (CONTRACT §6): the feed item, no text, no credentials. */
export const defaultPayloadBody = (event: EventRow): string => JSON.stringify(eventJson(event));

export const subscribesTo = (webhook: WebhookRow, type: string): boolean =>
  (JSON.parse(webhook.events) as string[]).includes(type);

export class Outbox {
  private textModePlanner: TextModePlanner = () => {};

  constructor(
    private readonly core: Core,
    private readonly webhooks: WebhookStore,
    private readonly deliveries: DeliveryStore,
    /** Wakes the scheduler; called after the commit that made something due. */
    private readonly nudge: () => void,
  ) {}

  setTextModePlanner(planner: TextModePlanner): void {
    this.textModePlanner = planner;
  }

  /** EventService listener: runs inside the transaction that emitted the event. */
  onEvent(event: EventRow): void {
    for (const webhook of this.webhooks.active(event.account_id)) {
      if (webhook.payload_mode === 'text') {
        this.textModePlanner(event, webhook, this);
      } else if (subscribesTo(webhook, event.type)) {
        this.enqueue({
          webhook,
          eventId: String(event.seq),
          recordingId: event.recording_id,
          revision: event.revision,
          kind: 'event',
          body: defaultPayloadBody(event),
          // The event's own time: one clock reading per transaction.
          now: event.created_at,
        });
      }
    }
  }

  /** Inserts one queued delivery in the current transaction; returns its id (dlv_…). */
  enqueue(input: EnqueueInput): string {
    const id = input.id ?? newId('dlv');
    this.deliveries.insert({
      id,
      account_id: input.webhook.account_id,
      webhook_id: input.webhook.id,
      event_id: input.eventId,
      recording_id: input.recordingId,
      revision: input.revision,
      kind: input.kind,
      status: 'queued',
      body: input.body,
      next_attempt_at: input.now,
      created_at: input.now,
      idempotency_key: input.idempotencyKey ?? null,
    });
    this.core.writer.onCommit(this.nudge);
    return id;
  }
}
