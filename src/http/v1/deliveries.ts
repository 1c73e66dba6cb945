// v1 /recordings/{id}/deliveries (session): manual send and the delivery status listing
// (docs/decisions.md §18, §6-7). The rules live in ManualDeliveryService.
import * as v from 'valibot';
import { DELIVERY_STATUSES } from '../../store/delivery-store';
import { MAX_DELIVERY_KEY } from '../../services/manual-delivery';
import type { HttpDeps } from '../env';
import type { ApiRouter } from '../router';
import { Id, IdParams } from '../schemas';
import { idempotencyKey } from '../request-headers';
import { Int, UnixMs } from '../schemas/numbers';

const DeliverySchema = v.object({
  id: v.pipe(v.string(), v.description('dlv_…; the text payload id and the webhook-id header')),
  webhookId: v.string(),
  eventId: v.pipe(v.string(), v.description('The feed event id it carries, or manual_… for a manual send')),
  type: v.pipe(v.string(), v.description('recording.created | recording.updated | recording.transcript_ready | recording.deleted | recording.manual')),
  trigger: v.pipe(v.picklist(['event', 'rule', 'manual']), v.description('An event the subscription lists, a capture rule, or a manual send')),
  revision: v.pipe(Int, v.description('The recording revision the body describes')),
  status: v.pipe(
    v.picklist(DELIVERY_STATUSES),
    v.description('queued (waiting for its next attempt), delivered (the receiver answered 2xx), failed (8 attempts used; kept for diagnosis), disabled (cancelled: subscription disabled or recording deleted)'),
  ),
  attempts: Int,
  lastStatusCode: v.nullable(Int),
  lastError: v.nullable(v.string()),
  nextAttemptAt: v.nullable(UnixMs),
  createdAt: UnixMs,
  deliveredAt: v.nullable(UnixMs),
});

const EvaluationSchema = v.object({
  webhookId: v.string(),
  status: v.pipe(
    v.picklist(['pending_transcription', 'waiting_for_capture_input']),
    v.description('pending_transcription: no transcript yet; waiting_for_capture_input: the transcript matched, the rule names a captureInput and the capture has none yet'),
  ),
  revision: v.nullable(Int),
  eventId: v.nullable(v.string()),
  createdAt: UnixMs,
  updatedAt: UnixMs,
});

const ManualBody = v.strictObject({
  webhookId: Id,
  expectedRevision: v.pipe(v.number(), v.integer('must be a whole number'), v.minValue(1, 'must be at least 1'), v.maxValue(Number.MAX_SAFE_INTEGER, 'must be at most 9007199254740991'), v.description('The revision to send; a stale one gives 409 revision_conflict')),
});

export function registerDeliveriesV1(r: ApiRouter, deps: HttpDeps): void {
  const manual = deps.services.manualDelivery;
  r.add(
    {
      method: 'post', path: '/recordings/{id}/deliveries', operationId: 'createDelivery', tag: 'deliveries', access: 'session',
      summary:
        "Send the recording at expectedRevision to one subscription now, in the subscription's payload mode, skipping its rules and ignoring " +
        'its events. Event id manual_…, type recording.manual; not added to the event feed',
      params: IdParams,
      body: ManualBody,
      headers: [
        {
          name: 'Idempotency-Key', required: true,
          description: `1-${MAX_DELIVERY_KEY} characters. The same key and selection again returns the same delivery (header Idempotent-Replayed: true), ` +
            'so a retry after a network failure is safe; the same key with another selection gives 409 idempotency_conflict.',
        },
      ],
      responses: {
        200: { description: 'The queued delivery', schema: v.object({ delivery: DeliverySchema }) },
        404: { description: 'Unknown recording or subscription' },
        409: { description: 'revision_conflict (stale expectedRevision), webhook_disabled, idempotency_conflict, not_editable (a capture the app has not saved yet)' },
        410: { description: 'The recording was deleted' },
      },
    },
    (c, { params, body, principal }) => {
      const key = idempotencyKey(c, MAX_DELIVERY_KEY, 'send');
      const { delivery, replayed } = manual.send(principal, params.id, body, key);
      if (replayed) c.header('Idempotent-Replayed', 'true');
      return c.json({ delivery });
    },
  );
  r.add(
    {
      method: 'get', path: '/recordings/{id}/deliveries', operationId: 'listDeliveries', tag: 'deliveries', access: 'session',
      summary: 'Delivery statuses of the recording (oldest first) and its capture-rule evaluations that are not decided yet',
      params: IdParams,
      responses: {
        200: { description: 'Deliveries and pending evaluations', schema: v.object({ deliveries: v.array(DeliverySchema), pendingCaptureEvaluations: v.array(EvaluationSchema) }) },
        404: { description: 'Not found' },
        410: { description: 'The recording was deleted' },
      },
    },
    (c, { params, principal }) => c.json(deps.services.manualDelivery.status(principal, params.id)),
  );
}
