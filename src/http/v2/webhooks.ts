// v2 /webhooks: session-only subscription management (docs/decisions.md §18, §5).
import * as v from 'valibot';
import type { HttpDeps } from '../env';
import type { ApiRouter } from '../router';
import { IdParams } from '../schemas';
import { CreatedWebhookSchema, CreateWebhookBody, WebhookSchema } from '../schemas/webhooks';

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
