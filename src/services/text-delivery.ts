// Text mode, wired into the recording writes and the webhook outbox (issue 5):
//   - subscriptions with payloadMode "text" and no rules get a text payload for each event they
//     list (the outbox's TextModePlanner seam), a snapshot of the recording at the event's revision;
//   - subscriptions with rules get rule deliveries only (capture-rules.ts);
//   - deleting a recording erases the stored text of its text deliveries and cancels those not
//     delivered yet (the deletion event's own delivery, which carries no text, still goes out).
import type { Core } from '../context';
import type { Outbox } from '../delivery/outbox';
import { subscribesTo } from '../delivery/outbox';
import { newId } from '../ids';
import type { EventRow } from '../store/event-store';
import type { WebhookRow } from '../store/webhook-store';
import { CaptureRules } from './capture-rules';
import { ManualDeliveryService } from './manual-delivery';
import type { RecordingRow } from './recording-model';
import type { RecordingService } from './recordings';
import { textPayloadBody } from './text-payload';
import type { WebhookService } from './webhooks';

export function createTextDelivery(core: Core, recordings: RecordingService, webhooks: WebhookService) {
  const captureRules = new CaptureRules(core, webhooks);

  webhooks.outbox.setTextModePlanner((event: EventRow, webhook: WebhookRow, outbox: Outbox) => {
    if (webhook.rules !== null || !subscribesTo(webhook, event.type)) return;
    // The event is emitted after the row is written, so the stored row is the event's revision.
    const row = recordings.store.get(event.account_id, event.recording_id);
    if (!row) return;
    const id = newId('dlv');
    const eventId = String(event.seq);
    outbox.enqueue({
      id,
      webhook,
      eventId,
      recordingId: event.recording_id,
      revision: event.revision,
      kind: 'event',
      body: textPayloadBody(core.config, { deliveryId: id, type: event.type, eventId, createdAt: event.created_at, revision: event.revision, row }),
      now: event.created_at,
    });
  });

  recordings.onChange((before: RecordingRow | null, after: RecordingRow) => {
    captureRules.onChange(before, after);
    if (before !== null && before.deleted_at === null && after.deleted_at !== null) {
      webhooks.deliveries.eraseTextForRecording(after.account_id, after.id, after.revision, after.updated_at);
    }
  });

  const manual = new ManualDeliveryService(core, recordings, webhooks, captureRules.store);
  return { captureRules, manual };
}

export type TextDelivery = ReturnType<typeof createTextDelivery>;
