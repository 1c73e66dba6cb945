// Delivery signatures (docs/decisions.md §6). One delivery carries two signatures over the same bytes so
// receivers can use either Stripe's verifier (Service-Signature, keyed with the secret string) or
// a Standard Webhooks library (webhook-signature, keyed with the decoded secret bytes).
import { createHmac } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

/**
 * The subscription secret: derived, not stored, so rotating the master secret invalidates every
 * subscription at once (docs/decisions.md §18: "after the master secret is rotated, recreate them all").
 */
export function deriveWebhookSecret(master: Buffer, webhookId: string): string {
  return SECRET_PREFIX + createHmac('sha256', master).update(webhookId, 'utf8').digest('base64');
}

/** Service-Signature value: Stripe's `t=<unix s>,v1=<hex>` over `<t>.<raw body>`. */
function serviceSignature(secret: string, body: string, timestampSec: number): string {
  const digest = createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(`${timestampSec}.${body}`, 'utf8')
    .digest('hex');
  return `t=${timestampSec},v1=${digest}`;
}

/** Standard Webhooks `v1,<base64>` over `<id>.<t>.<body>`, keyed with the bytes after `whsec_`. */
function standardWebhookSignature(secret: string, msgId: string, body: string, timestampSec: number): string {
  if (!secret.startsWith(SECRET_PREFIX)) throw new TypeError('webhook secret must start with whsec_');
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  const digest = createHmac('sha256', key).update(`${msgId}.${timestampSec}.${body}`, 'utf8').digest('base64');
  return `v1,${digest}`;
}

/**
 * Every header a delivery carries besides transport ones. Keys are lower case, the form node and
 * Standard Webhooks verifiers use for incoming headers. `body` must be the exact bytes sent.
 */
export function signDelivery(
  secret: string,
  msgId: string,
  body: string,
  timestampSec: number,
): Record<string, string> {
  if (!Number.isSafeInteger(timestampSec) || timestampSec < 0) {
    throw new TypeError('timestampSec must be a non-negative integer number of seconds');
  }
  return {
    'content-type': 'application/json',
    'service-signature': serviceSignature(secret, body, timestampSec),
    'webhook-id': msgId,
    'webhook-timestamp': String(timestampSec),
    'webhook-signature': standardWebhookSignature(secret, msgId, body, timestampSec),
  };
}
