// A subscription's delivery log and its test send (docs/decisions.md §8): what the web app shows per
// webhook. The log reads the outbox rows themselves, so it is exactly what was (or will be) sent.
//
// A test send is a real delivery through the normal queue (claimed by the scheduler, signed at
// send time, retried on failure); the outbox decides its body (Outbox.queueTest). It is about no
// recording, and the log shows recordingId null.
import type { Core } from '../context';
import { AppError, invalid } from '../errors';
import type { DeliveryLogPosition, DeliveryRow, DeliveryStatus } from '../store/delivery-store';
import { MANUAL_TYPE, TEST_TYPE, type Outbox } from './outbox';
import type { WebhookService } from './webhooks';

export const DEFAULT_LOG_PAGE = 50;
export const MAX_LOG_PAGE = 100;

export interface LoggedDeliveryJson {
  id: string;
  /** null for a webhook.test send. */
  recordingId: string | null;
  eventId: string;
  type: string;
  status: DeliveryStatus;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
}

const CURSOR_PREFIX = 'dlg1.';

/** Log cursors are opaque: the last row's (created_at, rowid) and the subscription they belong to. */
export const encodeLogCursor = (webhookId: string, at: DeliveryLogPosition): string =>
  CURSOR_PREFIX + Buffer.from(`${at.createdAt}.${at.seq}.${webhookId}`).toString('base64url');

export function decodeLogCursor(webhookId: string, cursor: string): DeliveryLogPosition {
  if (cursor.startsWith(CURSOR_PREFIX)) {
    const m = /^(\d{1,16})\.(\d{1,16})\.(.+)$/.exec(Buffer.from(cursor.slice(CURSOR_PREFIX.length), 'base64url').toString('utf8'));
    if (m?.[1] && m[2] && m[3]) {
      const at = { createdAt: Number(m[1]), seq: Number(m[2]) };
      if (encodeLogCursor(m[3], at) === cursor) {
        if (m[3] !== webhookId) throw invalid('cursor: it belongs to the delivery log of another subscription');
        return at;
      }
    }
  }
  throw invalid('cursor: not a cursor returned by GET /webhooks/{id}/deliveries');
}

function deliveryType(d: DeliveryRow, eventType: string | null): string {
  if (d.kind === 'rule') return 'recording.transcript_ready';
  if (d.kind === 'manual') return d.event_id.startsWith('test_') ? TEST_TYPE : MANUAL_TYPE;
  return eventType ?? 'unknown';
}

const loggedJson = (d: DeliveryRow, eventType: string | null): LoggedDeliveryJson => ({
  id: d.id,
  recordingId: d.recording_id === '' ? null : d.recording_id,
  eventId: d.event_id,
  type: deliveryType(d, eventType),
  status: d.status,
  attempts: d.attempts,
  lastStatusCode: d.last_status_code,
  lastError: d.last_error,
  createdAt: d.created_at,
  updatedAt: d.updated_at,
});

export class WebhookLogService {
  constructor(
    private readonly core: Core,
    private readonly webhooks: WebhookService,
    private readonly outbox: Outbox,
  ) {}

  /** One page of the subscription's deliveries, newest first; nextCursor null on the last page. */
  page(accountId: string, webhookId: string, input: { cursor?: string | undefined; limit: number }): { deliveries: LoggedDeliveryJson[]; nextCursor: string | null } {
    const webhook = this.webhooks.get(accountId, webhookId);
    const after = input.cursor === undefined ? undefined : decodeLogCursor(webhook.id, input.cursor);
    const rows = this.webhooks.deliveries.log(webhook.id, after, input.limit + 1);
    const page = rows.slice(0, input.limit);
    const last = page[page.length - 1];
    return {
      deliveries: page.map((d) => loggedJson(d, d.event_type)),
      nextCursor: rows.length > input.limit && last ? encodeLogCursor(webhook.id, { createdAt: last.created_at, seq: last.log_seq }) : null,
    };
  }

  /** Queues a signed webhook.test delivery to an active subscription; 409 webhook_disabled otherwise. */
  sendTest(accountId: string, webhookId: string): LoggedDeliveryJson {
    return this.core.writer.write(() => {
      const webhook = this.webhooks.get(accountId, webhookId);
      if (webhook.status !== 'active') throw new AppError('webhook_disabled', `webhook ${webhook.id} is disabled and receives no new sends`);
      const id = this.outbox.queueTest(webhook, this.core.clock.now());
      return loggedJson(this.webhooks.deliveries.get(id)!, null);
    });
  }
}
