// v1 subscription management for the web app (docs/decisions.md §8): every subscription of both payload
// modes, disabling one, its delivery log (newest first, cursor) and a test send. Session only,
// like POST /webhooks. The rules live in WebhookService and WebhookLogService.
import * as v from 'valibot';
import { DELIVERY_STATUSES } from '../../store/delivery-store';
import { DEFAULT_LOG_PAGE, MAX_LOG_PAGE } from '../../services/webhook-log';
import type { HttpDeps } from '../env';
import type { ApiRouter } from '../router';
import { IdParams, queryInt } from '../schemas';
import { WebhookSchema } from '../schemas/webhooks';
import { Int, UnixMs } from '../schemas/numbers';

const LoggedDeliverySchema = v.object({
  id: v.pipe(v.string(), v.description('dlv_…; the webhook-id header of every attempt')),
  recordingId: v.pipe(v.nullable(v.string()), v.description('The recording it is about; null for webhook.test')),
  eventId: v.pipe(v.string(), v.description('The feed event id it carries, manual_… for a manual send, test_… for a test send')),
  type: v.pipe(v.string(), v.description('recording.created | recording.updated | recording.transcript_ready | recording.deleted | recording.manual | webhook.test')),
  status: v.pipe(
    v.picklist(DELIVERY_STATUSES),
    v.description('queued (waiting for its next attempt), delivered (the receiver answered 2xx), failed (8 attempts used), disabled (cancelled: subscription disabled or recording deleted)'),
  ),
  attempts: Int,
  lastStatusCode: v.pipe(v.nullable(Int), v.description("The receiver's status code at the last attempt; null when none answered")),
  lastError: v.pipe(v.nullable(v.string()), v.description('What went wrong at the last attempt (timeout, refused address, status); null after a 2xx')),
  createdAt: UnixMs,
  updatedAt: UnixMs,
});

const LogQuery = v.object({
  limit: v.optional(v.pipe(queryInt(1, MAX_LOG_PAGE), v.description(`Page size 1-${MAX_LOG_PAGE}, default ${DEFAULT_LOG_PAGE}`)), String(DEFAULT_LOG_PAGE)),
  cursor: v.optional(
    v.pipe(
      v.string(),
      v.minLength(1, 'must not be empty'),
      v.maxLength(256, 'must be at most 256 characters'),
      v.description("nextCursor of the previous page of this subscription's log; omit for the newest deliveries"),
    ),
  ),
});

export function registerWebhookLogV1(r: ApiRouter, deps: HttpDeps): void {
  const { webhooks, webhookLog } = deps.services;
  r.add(
    {
      method: 'get', path: '/webhooks', operationId: 'listWebhooks', tag: 'webhooks', access: 'session',
      summary:
        'Every subscription of the account, oldest first: both payload modes (with payloadMode and rules) and disabled ones too, ' +
        'with their status, so a client can show what was switched off (v2 GET /webhooks lists active default-payload ones only)',
      responses: { 200: { description: 'Subscriptions', schema: v.object({ webhooks: v.array(WebhookSchema) }) } },
    },
    (c, { principal }) => c.json({ webhooks: webhooks.listAll(principal.accountId) }),
  );
  r.add(
    {
      method: 'delete', path: '/webhooks/{id}', operationId: 'disableWebhook', tag: 'webhooks', access: 'session',
      summary:
        'Disable a subscription (as v2 DELETE): its queued deliveries are cancelled (a request already sent may still arrive); ' +
        'it stays listed with status disabled. Disabling again is 204 too',
      params: IdParams,
      responses: { 204: { description: 'Disabled' }, 404: { description: 'No such subscription' } },
    },
    (c, { params, principal }) => {
      webhooks.disable(principal.accountId, params.id);
      return c.body(null, 204);
    },
  );
  r.add(
    {
      method: 'get', path: '/webhooks/{id}/deliveries', operationId: 'listWebhookDeliveries', tag: 'webhooks', access: 'session',
      summary:
        "The subscription's deliveries, newest first, every kind (events, capture rules, manual and test sends). Page with nextCursor " +
        '(null on the last page): no delivery is skipped or repeated across pages, also while new ones arrive. A cursor of another ' +
        "subscription's log, or not one of ours, is 400",
      params: IdParams,
      query: LogQuery,
      responses: {
        200: {
          description: 'A page of the delivery log',
          schema: v.object({
            deliveries: v.array(LoggedDeliverySchema),
            nextCursor: v.pipe(v.nullable(v.string()), v.description('Pass as cursor for the next (older) page; null on the last page')),
          }),
        },
        404: { description: 'No such subscription' },
      },
    },
    (c, { params, query, principal }) => c.json(webhookLog.page(principal.accountId, params.id, query)),
  );
  r.add(
    {
      method: 'post', path: '/webhooks/{id}/test', operationId: 'testWebhook', tag: 'webhooks', access: 'session',
      summary:
        'Queue a test delivery: { id: "test_…", type: "webhook.test", createdAt } in both payload modes, sent through the normal queue ' +
        '(signed like every delivery, retried on failure) and listed in the delivery log with recordingId null',
      params: IdParams,
      responses: {
        202: { description: 'Queued', schema: v.object({ delivery: LoggedDeliverySchema }) },
        404: { description: 'No such subscription' },
        409: { description: 'webhook_disabled: a disabled subscription receives no new sends' },
      },
    },
    (c, { params, principal }) => c.json({ delivery: webhookLog.sendTest(principal.accountId, params.id) }, 202),
  );
}
