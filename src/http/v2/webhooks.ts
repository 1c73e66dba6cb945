// v2 /webhooks: session-only subscription management (docs/decisions.md §18, §5).
import * as v from 'valibot';
import { INPUT_NAMES, RECORDING_TYPES } from '../../services/device-inputs';
import { EVENT_TYPES } from '../../services/events';
import { MAX_PREFIX_LENGTH, MAX_URL_LENGTH, PAYLOAD_MODES } from '../../services/webhook-input';
import type { HttpDeps } from '../env';
import type { ApiRouter } from '../router';
import { IdParams } from '../schemas';

export const WebhookRulesSchema = v.strictObject({
  prefix: v.optional(v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.maxLength(MAX_PREFIX_LENGTH))),
  captureInput: v.optional(v.picklist(INPUT_NAMES, `must be one of ${INPUT_NAMES.join(', ')}`)),
  kind: v.optional(v.picklist(RECORDING_TYPES, 'must be clip or memo')),
});

/** The body of POST /webhooks in v2 and v1; the service checks the combinations. */
export const CreateWebhookBody = v.strictObject({
  url: v.pipe(
    v.string(),
    v.maxLength(MAX_URL_LENGTH),
    v.description('Public HTTPS endpoint on port 443; private or local addresses, credentials and redirects are rejected'),
  ),
  events: v.optional(
    v.pipe(
      v.array(v.picklist(EVENT_TYPES, `must be one of ${EVENT_TYPES.join(', ')}`)),
      v.maxLength(EVENT_TYPES.length * 2),
      v.description('Event types; recording.transcript_ready needs payloadMode "text". Optional only with rules.'),
    ),
  ),
  payloadMode: v.optional(v.pipe(v.picklist(PAYLOAD_MODES, 'must be "text" or omitted'), v.description('"text" selects text deliveries'))),
  rules: v.optional(v.pipe(WebhookRulesSchema, v.description('Capture rules (text mode): every configured condition must match'))),
});

export const WebhookSchema = v.object({
  id: v.string(),
  url: v.string(),
  events: v.array(v.string()),
  payloadMode: v.picklist(PAYLOAD_MODES),
  rules: v.nullable(v.object({ prefix: v.optional(v.string()), captureInput: v.optional(v.string()), kind: v.optional(v.string()) })),
  status: v.picklist(['active', 'disabled']),
  createdAt: v.number(),
});

export const CreatedWebhookSchema = v.object({
  webhook: WebhookSchema,
  secret: v.pipe(v.string(), v.description('whsec_…; shown once. Signs Service-Signature and webhook-signature')),
});

export function registerWebhooks(r: ApiRouter, deps: HttpDeps): void {
  const { webhooks } = deps.services;
  r.add(
    {
      method: 'post', path: '/webhooks', operationId: 'createWebhook', tag: 'webhooks', access: 'session',
      summary: 'Create a webhook subscription; the signing secret is returned once',
      body: CreateWebhookBody,
      responses: {
        201: { description: 'Created', schema: CreatedWebhookSchema },
        409: { description: 'limit_reached: the account has 10 active subscriptions' },
      },
    },
    async (c, { body, principal }) => c.json(await webhooks.create(principal.accountId, body), 201),
  );
  r.add(
    {
      method: 'get', path: '/webhooks', operationId: 'listWebhooks', tag: 'webhooks', access: 'session',
      summary: 'List the active event subscriptions (text-mode subscriptions are not listed)',
      responses: { 200: { description: 'Subscriptions', schema: v.object({ webhooks: v.array(WebhookSchema) }) } },
    },
    (c, { principal }) => c.json({ webhooks: webhooks.list(principal.accountId) }),
  );
  r.add(
    {
      method: 'delete', path: '/webhooks/{id}', operationId: 'disableWebhook', tag: 'webhooks', access: 'session',
      summary: 'Disable a subscription; its queued deliveries are cancelled (a request already sent may still arrive)',
      params: IdParams,
      responses: { 204: { description: 'Disabled' }, 404: { description: 'No such subscription' } },
    },
    (c, { params, principal }) => {
      webhooks.disable(principal.accountId, params.id);
      return c.body(null, 204);
    },
  );
}
