// Webhook subscriptions (docs/decisions.md §18, §5-6) and the delivery scheduler that sends what
// the outbox (outbox.ts) queues. Secrets are derived from the master secret, never stored.
import type { Core } from '../context';
import { checkWebhookDestination, systemResolver } from '../delivery/destination-guard';
import { DeliveryScheduler } from '../delivery/scheduler';
import { deriveWebhookSecret } from '../delivery/signing';
import { AppError, notFound } from '../errors';
import { newId } from '../ids';
import type { Worker } from '../worker';
import { DeliveryStore } from '../store/delivery-store';
import { WebhookStore, type WebhookRow } from '../store/webhook-store';
import type { EventType } from './events';
import { type PayloadMode, type ValidWebhookInput, type WebhookInput, type WebhookRules, validateWebhookInput } from './webhook-input';

export const MAX_ACTIVE_WEBHOOKS = 10;

export interface WebhookJson {
  id: string;
  url: string;
  events: EventType[];
  payloadMode: PayloadMode;
  rules: WebhookRules | null;
  status: 'active' | 'disabled';
  createdAt: number;
}

export const webhookJson = (w: WebhookRow): WebhookJson => ({
  id: w.id,
  url: w.url,
  events: JSON.parse(w.events) as EventType[],
  payloadMode: w.payload_mode,
  rules: w.rules === null ? null : (JSON.parse(w.rules) as WebhookRules),
  status: w.status,
  createdAt: w.created_at,
});

export class WebhookService {
  readonly store: WebhookStore;
  readonly deliveries: DeliveryStore;
  readonly scheduler: DeliveryScheduler;

  constructor(private readonly core: Core) {
    this.store = new WebhookStore(core.db);
    this.deliveries = new DeliveryStore(core.db);
    this.scheduler = new DeliveryScheduler(core, this.deliveries, this.store);
  }

  /**
   * Creates a subscription; the secret is returned here and never again. The URL is checked with
   * DNS (checkWebhookDestination): a hostname that resolves to a private address is refused now,
   * and one that resolves into a --webhook-allow range counts as listed.
   */
  async create(accountId: string, input: WebhookInput): Promise<{ webhook: WebhookJson; secret: string }> {
    const valid = validateWebhookInput(input);
    const url = await checkWebhookDestination(valid.url, this.core.config.allowList, this.core.resolver ?? systemResolver);
    // Normalised by the URL parser: what was checked is exactly what will be called.
    return this.insert(accountId, valid, url.href);
  }

  private insert(accountId: string, valid: ValidWebhookInput, url: string): { webhook: WebhookJson; secret: string } {
    const row = this.core.writer.write(() => {
      if (this.store.activeCount(accountId) >= MAX_ACTIVE_WEBHOOKS) {
        throw new AppError('limit_reached', `an account has at most ${MAX_ACTIVE_WEBHOOKS} active webhook subscriptions; disable one first`);
      }
      return this.store.insert({
        id: newId('wh'),
        account_id: accountId,
        url,
        events: JSON.stringify(valid.events),
        payload_mode: valid.payloadMode,
        rules: valid.rules === null ? null : JSON.stringify(valid.rules),
        created_at: this.core.writer.now,
      });
    });
    return { webhook: webhookJson(row), secret: this.secret(row.id) };
  }

  /** The v2 list: active subscriptions with the default payload (text mode is v1's). */
  list(accountId: string): WebhookJson[] {
    return this.store.active(accountId).filter((w) => w.payload_mode === 'default').map(webhookJson);
  }

  /** Every active subscription, both payload modes (the CLI's view for the operator). */
  listActive(accountId: string): WebhookJson[] {
    return this.store.active(accountId).map(webhookJson);
  }

  /** Every subscription, active and disabled, both payload modes, oldest first (v1 list, for the web app). */
  listAll(accountId: string): WebhookJson[] {
    return this.store.all(accountId).map(webhookJson);
  }

  /** Any subscription of the account, active or not; 404 if there is none. */
  get(accountId: string, id: string): WebhookRow {
    const row = this.store.get(accountId, id);
    if (!row) throw notFound(`webhook ${id}`);
    return row;
  }

  /**
   * Disables a subscription and cancels its deliveries that wait or are queued. A request already
   * on the wire may still arrive (its outcome is recorded). Disabling twice is not an error.
   */
  disable(accountId: string, id: string): void {
    this.core.writer.write(() => {
      this.get(accountId, id);
      const now = this.core.writer.now;
      if (this.store.disable(accountId, id, now)) this.deliveries.cancelForWebhook(id, now);
    });
  }

  private secret(webhookId: string): string {
    return deriveWebhookSecret(this.core.masterSecret, webhookId);
  }
}

/** Builds the webhook service and registers its delivery scheduler (unless deliveries are off). */
export function createWebhookService(core: Core, workers: Worker[]): WebhookService {
  const webhooks = new WebhookService(core);
  if (core.config.deliveries !== 'off') workers.push(webhooks.scheduler);
  return webhooks;
}
