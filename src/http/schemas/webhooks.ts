// Subscription shapes shared by the v2 and v1 webhook routes and the delivery log.
import * as v from 'valibot';
import { INPUT_NAMES, RECORDING_TYPES } from '../../services/device-inputs';
import { EVENT_TYPES } from '../../services/events';
import { MAX_PREFIX_LENGTH, MAX_URL_LENGTH, PAYLOAD_MODES } from '../../services/webhook-input';
import { UnixMs } from './numbers';

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
  createdAt: UnixMs,
});

export const CreatedWebhookSchema = v.object({
  webhook: WebhookSchema,
  secret: v.pipe(v.string(), v.description('whsec_…; shown once. Signs Service-Signature and webhook-signature')),
});
