// SQL for webhook subscriptions. Secrets are not here: they are derived from the master secret.
import type { Db } from '../db/open';

export interface WebhookRow {
  id: string;
  account_id: string;
  url: string;
  /** JSON array of event type names. */
  events: string;
  payload_mode: 'default' | 'text';
  /** JSON { prefix?, captureInput?, kind? } or null. */
  rules: string | null;
  status: 'active' | 'disabled';
  created_at: number;
  disabled_at: number | null;
}

export type NewWebhook = Pick<WebhookRow, 'id' | 'account_id' | 'url' | 'events' | 'payload_mode' | 'rules' | 'created_at'>;

export class WebhookStore {
  private readonly s;

  constructor(db: Db) {
    this.s = {
      insert: db.prepare<NewWebhook, WebhookRow>(
        `INSERT INTO webhooks (id, account_id, url, events, payload_mode, rules, status, created_at)
         VALUES (@id, @account_id, @url, @events, @payload_mode, @rules, 'active', @created_at)
         RETURNING *`,
      ),
      get: db.prepare<[string, string], WebhookRow>('SELECT * FROM webhooks WHERE account_id = ? AND id = ?'),
      byId: db.prepare<[string], WebhookRow>('SELECT * FROM webhooks WHERE id = ?'),
      active: db.prepare<[string], WebhookRow>(
        "SELECT * FROM webhooks WHERE account_id = ? AND status = 'active' ORDER BY created_at, rowid",
      ),
      all: db.prepare<[string], WebhookRow>('SELECT * FROM webhooks WHERE account_id = ? ORDER BY created_at, rowid'),
      activeCount: db.prepare<[string], { n: number }>(
        "SELECT count(*) AS n FROM webhooks WHERE account_id = ? AND status = 'active'",
      ),
      disable: db.prepare<[number, string, string]>(
        "UPDATE webhooks SET status = 'disabled', disabled_at = ? WHERE account_id = ? AND id = ? AND status = 'active'",
      ),
    };
  }

  insert(w: NewWebhook): WebhookRow {
    return this.s.insert.get(w) as WebhookRow;
  }

  get(accountId: string, id: string): WebhookRow | undefined {
    return this.s.get.get(accountId, id);
  }

  /** Any account's subscription; for the scheduler, which works across accounts. */
  byId(id: string): WebhookRow | undefined {
    return this.s.byId.get(id);
  }

  /** Active subscriptions of an account, oldest first (both payload modes). */
  active(accountId: string): WebhookRow[] {
    return this.s.active.all(accountId);
  }

  /** Every subscription of an account, active and disabled, oldest first (both payload modes). */
  all(accountId: string): WebhookRow[] {
    return this.s.all.all(accountId);
  }

  activeCount(accountId: string): number {
    return this.s.activeCount.get(accountId)?.n ?? 0;
  }

  /** Returns whether the subscription was active until now. */
  disable(accountId: string, id: string, now: number): boolean {
    return this.s.disable.run(now, accountId, id).changes > 0;
  }
}
