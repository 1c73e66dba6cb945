// The log line of a delivery outcome: which delivery and subscription, what came back (status or
// error), and when the next try is. Never the URL (its query may hold the consumer's token), the
// body (it may hold a transcript) or the signature.
import type { DeliveryReport } from '../delivery/scheduler';
import type { Logger, LogLevel } from './log';

const LEVEL: Record<DeliveryReport['outcome'], LogLevel> = { delivered: 'info', retry: 'warn', failed: 'error', disabled: 'info' };

export function logDelivery(logger: Logger, r: DeliveryReport): void {
  const got = r.statusCode !== null ? `status ${r.statusCode}` : (r.error ?? 'no answer');
  const detail = r.error && r.statusCode !== null && r.error !== `status ${r.statusCode}` ? ` (${r.error})` : '';
  const next = r.nextAttemptAt === null ? null : new Date(r.nextAttemptAt).toISOString();
  const what = {
    delivered: `delivered (${got})`,
    retry: `failed: ${got}${detail}; next try at ${next}`,
    failed: `failed for good: ${got}${detail}; no tries left`,
    disabled: 'dropped: the subscription is disabled',
  }[r.outcome];
  const msg = `delivery ${r.deliveryId} to subscription ${r.webhookId}, attempt ${r.attempt}: ${what}`;
  if (logger.format === 'text') {
    logger.event(LEVEL[r.outcome], msg);
    return;
  }
  logger.event(LEVEL[r.outcome], msg, {
    deliveryId: r.deliveryId,
    webhookId: r.webhookId,
    attempt: r.attempt,
    outcome: r.outcome,
    statusCode: r.statusCode,
    error: r.error,
    nextAttemptAt: next,
    ms: r.durationMs,
  });
}
