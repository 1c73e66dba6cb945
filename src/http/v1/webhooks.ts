// v1 POST /webhooks (session): the same subscriptions as v2, answered 200 (docs/decisions.md §7). Text mode
// (payloadMode "text", optional capture rules) belongs to v1; v2 accepts it too but does not list it.
import type { HttpDeps } from '../env';
import type { ApiRouter } from '../router';
import { CreatedWebhookSchema, CreateWebhookBody } from '../schemas/webhooks';

export function registerWebhooksV1(r: ApiRouter, deps: HttpDeps): void {
  const { webhooks } = deps.services;
  r.add(
    {
      method: 'post', path: '/webhooks', operationId: 'createWebhook', tag: 'webhooks', access: 'session',
      summary:
        'Create a webhook subscription; the signing secret is returned once. payloadMode "text" sends text payloads (title, transcript, ' +
        'summary, fetchUrl) for the listed events; with rules ({ prefix, captureInput, kind }, every configured condition must match) it ' +
        'sends one rule delivery (recording.transcript_ready, with command) per app capture made after the subscription, on its first ' +
        'nonempty transcript, waiting for the capture input when the rule names one',
      body: CreateWebhookBody,
      responses: {
        200: { description: 'Created', schema: CreatedWebhookSchema },
        400: { description: 'A rejected URL or an invalid combination (rules need payloadMode "text")' },
        409: { description: 'limit_reached: the account has 10 active subscriptions' },
      },
    },
    async (c, { body, principal }) => c.json(await webhooks.create(principal.accountId, body)),
  );
}
