// The delivery scheduler (docs/decisions.md §6, §1): claims due deliveries as
// leases, at most `deliveryPerMinute` claims in any 60 s and `deliveryConcurrency` in flight,
// sends each with the stored body signed at send time, and records every attempt.
//
// A claim is a lease: `lease_token` + `locked_until`, with the attempt counted and logged at claim
// time, all in one transaction. Only the holder of the current token may record the outcome, so a
// worker that died or got stuck loses nothing (the row is due again when the lease runs out) and a
// late finisher with an old token changes nothing. The per-minute window counts attempt rows, so
// it survives restarts.
//
// Fairness (docs/decisions.md §12): the slots are shared by subscriptions, not by due time. A subscription
// has at most one send in flight; each tick claims the oldest due delivery of each subscription
// that has none, least recently claimed subscription first (round robin); and a subscription whose
// last attempt got no answer at all (timeout, refused connection, blocked destination) waits that
// delivery's retry delay before any of its deliveries is tried again. So a receiver that never
// answers holds one slot for one timeout, then none until its retry, and the others keep flowing.
// This state lives in memory: after a restart a stuck receiver costs one more timed-out attempt.
import type { Core } from '../context';
import { WRITE_RETRY_AFTER_S } from '../db/write-health';
import { AppError } from '../errors';
import { randomBase62 } from '../ids';
import { NumberedTable } from '../numbered-table';
import type { Worker } from '../worker';
import type { DeliveryOutcome, DeliveryRow, DeliveryStore } from '../store/delivery-store';
import type { WebhookStore } from '../store/webhook-store';
import { type SendWebhookResult, sendWebhook } from './http-sender';
import { MAX_ATTEMPTS, isFinalAttempt, retryDelayMs } from './retry-schedule';
import { deriveWebhookSecret, signDelivery } from './signing';

const WINDOW_MS = 60_000;
/** How often the timer looks for due deliveries (nudges come in between). */
const INTERVAL_MS = 1_000;
const INTERRUPTED = 'interrupted: no outcome was recorded before the lease ran out';

/** Long enough that a live worker always finishes first: the send is cut at timeoutMs. */
export const leaseMs = (timeoutMs: number): number => 2 * timeoutMs + 1_000;

/** How a delivery's attempt ended (or how a claim closed it), for the log and /metrics. */
export interface DeliveryReport {
  deliveryId: string;
  webhookId: string;
  /** The attempt's number (1 for the first). */
  attempt: number;
  /** delivered; retry: failed and tried again at nextAttemptAt; failed: no tries left; disabled: the subscription is off. */
  outcome: 'delivered' | 'retry' | 'failed' | 'disabled';
  statusCode: number | null;
  error: string | null;
  nextAttemptAt: number | null;
  durationMs: number | null;
}

interface Claim {
  delivery: DeliveryRow & { body: string };
  url: string;
  token: string;
  lockedUntil: number;
}

export class DeliveryScheduler implements Worker {
  /** The sends in progress (not a Set: src/numbered-table.ts says why). */
  private readonly inFlight = new NumberedTable<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private stopped = false;
  private nudgePending = false;
  /** Subscriptions with a send in flight, until its lease expiry (a hung send does not pin them forever). */
  private readonly busy = new Map<string, number>();
  /** Subscriptions whose last attempt got no answer: not tried again before this time. */
  private readonly pausedUntil = new Map<string, number>();
  /** Round-robin order: the claim counter at each subscription's last claim. */
  private readonly lastClaim = new Map<string, number>();
  private claimCount = 0;
  private claimsPausedUntil = 0;
  private readonly reportListeners: Array<(report: DeliveryReport) => void> = [];

  constructor(
    private readonly core: Core,
    private readonly deliveries: DeliveryStore,
    private readonly webhooks: WebhookStore,
  ) {}

  /** Production mode: a timer plus nudges. Tests leave it stopped and call tick()/processAll(). */
  start(): void {
    if (this.running || this.stopped) return;
    this.running = true;
    this.timer = setInterval(() => this.tick(), INTERVAL_MS);
    this.timer.unref();
    this.tick();
  }

  /** Stops claiming and waits for the sends in flight (each is bounded by the timeout). */
  async stop(): Promise<void> {
    this.running = false;
    this.stopped = true;
    clearInterval(this.timer);
    await this.drain();
  }

  /** Something became due (called after a commit); coalesced into one tick. */
  readonly nudge = (): void => {
    if (!this.running || this.nudgePending) return;
    this.nudgePending = true;
    setImmediate(() => {
      this.nudgePending = false;
      if (this.running) this.tick();
    });
  };

  /** Called after each recorded outcome has committed (the server logs and counts them). */
  onReport(listener: (report: DeliveryReport) => void): void {
    this.reportListeners.push(listener);
  }

  private report(reports: readonly DeliveryReport[]): void {
    for (const r of reports) {
      for (const listener of this.reportListeners) {
        try {
          listener(r);
        } catch {
          // A listener's failure (a full disk under the log) is not the delivery's.
        }
      }
    }
  }

  get inFlightCount(): number {
    return this.inFlight.size;
  }

  /** Claims what the limits allow right now and starts those sends; returns how many. */
  tick(): number {
    if (this.stopped) return 0;
    // While writes fail for lack of space, claiming (a write) is tried again only every
    // WRITE_RETRY_AFTER_S, unless some other write has succeeded since (the episode is over).
    if (this.core.writer.health.status && this.core.clock.now() < this.claimsPausedUntil) return 0;
    try {
      const claims = this.claim();
      for (const claim of claims) this.launch(claim);
      return claims.length;
    } catch (err) {
      if (err instanceof AppError && err.code === 'unavailable') {
        // Logged once per episode by the writer's WriteHealth, not once per tick here.
        this.claimsPausedUntil = this.core.clock.now() + WRITE_RETRY_AFTER_S * 1000;
        return 0;
      }
      // A busy or closing database must not kill the process; the next tick tries again.
      this.log(`reclib: delivery claim failed: ${(err as Error).message}`);
      return 0;
    }
  }

  /** Test driver: ticks and awaits sends until nothing is due (or the limits stop it). */
  async processAll(): Promise<void> {
    for (;;) {
      this.tick();
      if (this.inFlight.size === 0) return;
      await Promise.race(this.inFlight.values());
    }
  }

  /** Waits for every send in flight without claiming more. */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled(this.inFlight.values());
  }

  private claim(): Claim[] {
    const free = this.core.config.deliveryConcurrency - this.inFlight.size;
    if (free <= 0 || !this.deliveries.anyDue(this.core.clock.now())) return [];
    const closed: DeliveryReport[] = [];
    const claimed = this.core.writer.write(() => {
      const now = this.core.clock.now();
      const room = Math.min(free, this.core.config.deliveryPerMinute - this.deliveries.claimsSince(now - WINDOW_MS, now));
      const claims: Claim[] = [];
      if (room <= 0) return claims;
      const ready = this.deliveries
        .dueWebhooks(now)
        .filter((w) => (this.busy.get(w.webhook_id) ?? 0) <= now && (this.pausedUntil.get(w.webhook_id) ?? 0) <= now)
        .sort((a, b) => (this.lastClaim.get(a.webhook_id) ?? 0) - (this.lastClaim.get(b.webhook_id) ?? 0) || a.due_at - b.due_at);
      for (const { webhook_id } of ready) {
        if (claims.length >= room) break;
        const claim = this.claimHead(webhook_id, now, closed);
        if (claim) claims.push(claim);
      }
      return claims;
    });
    this.report(closed);
    return claimed;
  }

  /** Leases the oldest due delivery of one subscription, closing any that can no longer be sent. */
  private claimHead(webhookId: string, now: number, closed: DeliveryReport[]): Claim | undefined {
    for (let row = this.deliveries.dueHead(webhookId, now); row; row = this.deliveries.dueHead(webhookId, now)) {
      // A lease still set on a due row ran out: its worker died or hung before reporting.
      if (row.lease_token !== null) this.deliveries.interruptAttempts(row.id, INTERRUPTED, now);
      if (row.attempts >= MAX_ATTEMPTS) {
        this.deliveries.close(row.id, 'failed', INTERRUPTED, now);
        closed.push(closedReport(row, 'failed', INTERRUPTED));
        continue;
      }
      const webhook = this.webhooks.byId(row.webhook_id);
      if (!webhook || webhook.status !== 'active') {
        this.deliveries.close(row.id, 'disabled', null, now);
        closed.push(closedReport(row, 'disabled', null));
        continue;
      }
      const token = randomBase62(22);
      const lockedUntil = now + leaseMs(this.core.config.deliveryTimeoutMs);
      const leased = this.deliveries.lease(row.id, token, lockedUntil, now);
      if (!leased || leased.body === null) return undefined;
      this.deliveries.insertAttempt(row.id, leased.attempts, token, now);
      this.busy.set(webhookId, lockedUntil);
      this.lastClaim.set(webhookId, ++this.claimCount);
      return { delivery: { ...leased, body: leased.body }, url: webhook.url, token, lockedUntil };
    }
    return undefined;
  }

  private launch(claim: Claim): void {
    const { delivery } = claim;
    const secret = deriveWebhookSecret(this.core.masterSecret, delivery.webhook_id);
    // Signed now, over the stored bytes: a retry carries a fresh timestamp and the original body.
    const headers = signDelivery(secret, delivery.id, delivery.body, Math.floor(this.core.clock.now() / 1000));
    const send = sendWebhook({
      url: claim.url,
      body: delivery.body,
      headers,
      timeoutMs: this.core.config.deliveryTimeoutMs,
      allow: this.core.config.allowList,
      ...(this.core.resolver ? { resolver: this.core.resolver } : {}),
    });
    let entry = -1;
    const done: Promise<void> = send
      .then((result) => this.finish(claim, result))
      .catch((err: unknown) => this.log(`reclib: could not record the outcome of ${delivery.id}: ${(err as Error).message}`))
      .finally(() => {
        this.inFlight.take(entry);
        // Unless a later claim of the subscription took over after our lease ran out.
        if (this.busy.get(delivery.webhook_id) === claim.lockedUntil) this.busy.delete(delivery.webhook_id);
        if (this.running) this.tick();
      });
    entry = this.inFlight.add(done);
  }

  private finish(claim: Claim, result: SendWebhookResult): void {
    const { id } = claim.delivery;
    const report = this.core.writer.write((): DeliveryReport | undefined => {
      const now = this.core.clock.now();
      const row = this.deliveries.get(id);
      // The lease was taken over (ours ran out and another claim followed): not ours to record.
      if (!row || row.lease_token !== claim.token) return undefined;
      this.deliveries.finishAttempt(id, claim.token, {
        finishedAt: now,
        durationMs: result.durationMs,
        statusCode: result.statusCode,
        error: result.error,
      });
      const next = outcome(row, result, now, this.core.config.deliveryBackoffMs);
      this.deliveries.finish(id, claim.token, next, now);
      // No answer at all: the receiver is down or stuck, so its other deliveries wait for this retry.
      if (result.statusCode === null && next.next_attempt_at !== null) this.pausedUntil.set(row.webhook_id, next.next_attempt_at);
      else this.pausedUntil.delete(row.webhook_id);
      return {
        deliveryId: id,
        webhookId: row.webhook_id,
        attempt: row.attempts,
        outcome: next.status === 'queued' ? 'retry' : next.status,
        statusCode: result.statusCode,
        error: result.error,
        nextAttemptAt: next.next_attempt_at,
        durationMs: result.durationMs,
      };
    });
    if (report) this.report([report]);
  }

  private log(line: string): void {
    console.error(line);
  }
}

const closedReport = (row: DeliveryRow, outcome: 'failed' | 'disabled', error: string | null): DeliveryReport => ({
  deliveryId: row.id,
  webhookId: row.webhook_id,
  attempt: row.attempts,
  outcome,
  statusCode: null,
  error,
  nextAttemptAt: null,
  durationMs: null,
});

/** What an attempt's result makes of the delivery. */
function outcome(row: DeliveryRow, result: SendWebhookResult, now: number, backoffMs: number): DeliveryOutcome {
  const last = { last_status_code: result.statusCode, last_error: result.error };
  if (result.ok) return { status: 'delivered', next_attempt_at: null, delivered_at: now, ...last };
  // Cancelled while the request was out (subscription disabled): it stays cancelled.
  if (row.status !== 'queued') return { status: row.status, next_attempt_at: null, delivered_at: null, ...last };
  if (isFinalAttempt(row.attempts)) return { status: 'failed', next_attempt_at: null, delivered_at: null, ...last };
  return { status: 'queued', next_attempt_at: now + retryDelayMs(row.attempts, backoffMs), delivered_at: null, ...last };
}
