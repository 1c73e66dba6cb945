import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { testConfig, type Config } from '../../src/config';
import { DeliveryScheduler, leaseMs } from '../../src/delivery/scheduler';
import { parseAllowList, type Resolver } from '../../src/delivery/destination-guard';
import { newId } from '../../src/ids';
import { harness, type Harness } from '../helpers/harness';
import { heldAnswer, startReceiver, type Receiver } from '../helpers/receiver';

const MINUTE = 60_000;

interface Setup {
  h: Harness;
  receiver: Receiver;
  webhookId: string;
  secret: string;
  scheduler: DeliveryScheduler;
  /** Emits `n` events for rec_1 (revisions continue), each in its own transaction. */
  emit(n?: number): void;
  rows(): ReturnType<Harness['services']['webhooks']['deliveries']['forRecording']>;
  attempts(deliveryId: string): ReturnType<Harness['services']['webhooks']['deliveries']['attempts']>;
}

async function setup(t: TestContext, over: Partial<Config> = {}, answer?: Receiver['answer']): Promise<Setup> {
  const h = harness({ webhookAllow: '127.0.0.1', ...over });
  const receiver = await startReceiver(answer);
  t.after(() => receiver.close());
  const { webhook, secret } = await h.services.webhooks.create(h.accountId, { url: receiver.url, events: ['recording.updated'] });
  const { writer, clock } = h.services.core;
  let revision = 0;
  return {
    h,
    receiver,
    webhookId: webhook.id,
    secret,
    scheduler: h.services.webhooks.scheduler,
    emit(n = 1) {
      for (let i = 0; i < n; i++) writer.write(() => h.services.events.emit(h.accountId, 'recording.updated', 'rec_1', ++revision, clock.now()));
    },
    rows: () => h.services.webhooks.deliveries.forRecording(h.accountId, 'rec_1'),
    attempts: (id) => h.services.webhooks.deliveries.attempts(id),
  };
}

const only = <T>(items: readonly T[]): T => {
  assert.equal(items.length, 1);
  return items[0] as T;
};

const realWait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('delivery scheduler', () => {
  test("a delivery is signed so that Stripe's verifier and the standardwebhooks package both accept it", async (t) => {
    const s = await setup(t);
    s.h.clock.set(Date.now()); // both verifiers compare the timestamp with the real clock
    s.emit();
    await s.scheduler.processAll();
    const req = only(s.receiver.requests);
    const row = only(s.rows());
    assert.equal(req.body, row.body, 'the stored body, byte for byte');
    assert.equal(req.headers['content-type'], 'application/json');
    assert.equal(req.headers['webhook-id'], row.id);
    const stripeEvent = Stripe.webhooks.constructEvent(req.body, String(req.headers['service-signature']), s.secret, 300);
    assert.equal(stripeEvent.id, '1');
    const verified = new Webhook(s.secret).verify(req.body, {
      'webhook-id': String(req.headers['webhook-id']),
      'webhook-timestamp': String(req.headers['webhook-timestamp']),
      'webhook-signature': String(req.headers['webhook-signature']),
    });
    assert.deepEqual(verified, { id: '1', type: 'recording.updated', recordingId: 'rec_1', revision: 1, createdAt: s.h.clock.now() });
    assert.match(String(req.headers['service-signature']), /^t=\d+,v1=[0-9a-f]{64}$/);
    assert.equal(row.status, 'delivered');
    assert.equal(row.delivered_at, s.h.clock.now());
    assert.equal(row.attempts, 1);
    assert.equal(row.lease_token, null);
    const attempt = only(s.attempts(row.id));
    assert.equal(attempt.status_code, 200);
    assert.equal(attempt.error, null);
    assert.equal(attempt.started_at, s.h.clock.now());
    assert.ok((attempt.duration_ms ?? -1) >= 0);
  });

  test('a retry resends the stored body byte for byte with a fresh signature timestamp', async (t) => {
    const s = await setup(t, {}, (_req, n) => (n === 0 ? 503 : 200));
    s.h.clock.set(Date.now());
    s.emit();
    await s.scheduler.processAll();
    assert.equal(only(s.rows()).status, 'queued');
    s.h.clock.advance(MINUTE);
    await s.scheduler.processAll();
    const [first, second] = s.receiver.requests;
    assert.ok(first && second);
    assert.equal(second.body, first.body);
    assert.equal(Number(second.headers['webhook-timestamp']) - Number(first.headers['webhook-timestamp']), 60);
    assert.equal(second.headers['webhook-id'], first.headers['webhook-id'], 'the message id is stable across retries');
    for (const req of [first, second]) Stripe.webhooks.constructEvent(req.body, String(req.headers['service-signature']), s.secret, 300);
    assert.equal(only(s.rows()).status, 'delivered');
  });

  test('a failing receiver gets exactly 8 attempts at +1, 2, 4, … 64 minutes, then the delivery is failed with every attempt kept', async (t) => {
    const s = await setup(t, {}, () => 500);
    s.emit();
    for (let attempt = 1; attempt <= 8; attempt++) {
      await s.scheduler.processAll();
      assert.equal(s.receiver.requests.length, attempt);
      const row = only(s.rows());
      assert.equal(row.attempts, attempt);
      if (attempt === 8) break;
      const delay = MINUTE * 2 ** (attempt - 1);
      assert.equal(row.status, 'queued');
      assert.equal(row.next_attempt_at, s.h.clock.now() + delay);
      s.h.clock.advance(delay - 1);
      await s.scheduler.processAll();
      assert.equal(s.receiver.requests.length, attempt, 'not before the backoff has passed');
      s.h.clock.advance(1);
    }
    const row = only(s.rows());
    assert.equal(row.status, 'failed');
    assert.equal(row.next_attempt_at, null);
    assert.equal(row.last_status_code, 500);
    assert.equal(row.last_error, 'status 500');
    const attempts = s.attempts(row.id);
    assert.deepEqual(attempts.map((a) => a.attempt), [1, 2, 3, 4, 5, 6, 7, 8]);
    const gaps = attempts.slice(1).map((a, i) => (a.started_at - (attempts[i]?.started_at ?? 0)) / MINUTE);
    assert.deepEqual(gaps, [1, 2, 4, 8, 16, 32, 64]);
    for (const a of attempts) {
      assert.equal(a.status_code, 500);
      assert.equal(a.error, 'status 500');
      assert.notEqual(a.finished_at, null);
    }
    s.h.clock.advance(24 * 60 * MINUTE);
    await s.scheduler.processAll();
    assert.equal(s.receiver.requests.length, 8);
  });

  test('never more than 4 deliveries are in flight at once (five subscriptions, one send each at most)', async (t) => {
    const held = heldAnswer();
    const s = await setup(t, {}, () => held.promise);
    for (let i = 0; i < 4; i++) await s.h.services.webhooks.create(s.h.accountId, { url: s.receiver.url, events: ['recording.updated'] });
    s.emit(2);
    assert.equal(s.scheduler.tick(), 4);
    await s.receiver.waitForRequests(4);
    assert.equal(s.scheduler.tick(), 0, 'no free slot');
    await realWait(50);
    assert.equal(s.receiver.requests.length, 4);
    assert.equal(s.scheduler.inFlightCount, 4);
    held.release(200);
    await s.scheduler.processAll();
    assert.equal(s.receiver.requests.length, 10);
    assert.equal(s.receiver.maxInFlight, 4);
    assert.deepEqual(new Set(s.rows().map((d) => d.status)), new Set(['delivered']));
  });

  test('never more than 20 deliveries are claimed in any minute', async (t) => {
    const s = await setup(t);
    s.emit(30);
    await s.scheduler.processAll();
    assert.equal(s.receiver.requests.length, 20);
    s.h.clock.advance(MINUTE - 1);
    await s.scheduler.processAll();
    assert.equal(s.receiver.requests.length, 20, 'still inside the minute of the first 20 claims');
    s.h.clock.advance(1);
    await s.scheduler.processAll();
    assert.equal(s.receiver.requests.length, 30);
    assert.equal(s.rows().filter((d) => d.status === 'delivered').length, 30);
  });

  test('a clock set back does not stop claims: the minute counts only the attempts up to now', async (t) => {
    const s = await setup(t);
    s.emit(20);
    await s.scheduler.processAll();
    assert.equal(s.receiver.requests.length, 20);
    // An hour back (a clock corrected by NTP, a restored VM): the last minute's 20 claims lie ahead.
    s.h.clock.set(s.h.clock.now() - 60 * MINUTE);
    s.emit(1);
    await s.scheduler.processAll();
    assert.equal(s.receiver.requests.length, 21, 'the new delivery is sent now, not an hour later');
  });

  test('the per-minute window counts retries too, and --delivery-per-minute / --delivery-concurrency change the limits', async (t) => {
    const s = await setup(t, { deliveryPerMinute: 3, deliveryConcurrency: 2 }, () => 500);
    s.emit(3);
    await s.scheduler.processAll();
    assert.equal(s.receiver.requests.length, 3);
    assert.equal(s.receiver.maxInFlight <= 2, true);
    s.emit(1);
    s.h.clock.advance(MINUTE - 1); // the retries of the first three are due too, but the window is full
    await s.scheduler.processAll();
    assert.equal(s.receiver.requests.length, 3);
  });

  test('disabling a subscription cancels its queued deliveries; one already on the wire is recorded and never retried', async (t) => {
    const held = heldAnswer();
    const s = await setup(t, {}, (_req, n) => (n === 0 ? 500 : held.promise));
    s.emit(); // d1: fails once, waits for its retry
    await s.scheduler.processAll();
    s.emit(); // d2: goes on the wire and hangs there
    assert.equal(s.scheduler.tick(), 1);
    await s.receiver.waitForRequests(2);
    s.emit(); // d3: queued, not started
    const res = await s.h.req('DELETE', `/api/v2/webhooks/${s.webhookId}`, { token: s.h.session });
    assert.equal(res.status, 204);
    const [d1, d2, d3] = s.rows();
    assert.equal(d1?.status, 'disabled');
    assert.equal(d3?.status, 'disabled');
    held.release(502);
    await s.scheduler.drain();
    const d2After = s.h.services.webhooks.deliveries.get(d2?.id ?? '');
    assert.equal(d2After?.status, 'disabled');
    assert.equal(d2After?.next_attempt_at, null);
    assert.equal(only(s.attempts(d2?.id ?? '')).status_code, 502, 'the attempt that was on the wire is recorded');
    s.h.clock.advance(24 * 60 * MINUTE);
    await s.scheduler.processAll();
    assert.equal(s.receiver.requests.length, 2);
  });

  test('a late finisher whose lease was taken over changes nothing', async (t) => {
    const first = heldAnswer();
    const second = heldAnswer();
    const s = await setup(t, {}, (_req, n) => (n === 0 ? first.promise : second.promise));
    s.emit();
    assert.equal(s.scheduler.tick(), 1);
    await s.receiver.waitForRequests(1);
    assert.equal(s.scheduler.tick(), 0, 'leased: not claimable while the lease holds');
    s.h.clock.advance(leaseMs(s.h.config.deliveryTimeoutMs));
    assert.equal(s.scheduler.tick(), 1, 'the expired lease is claimed again');
    await s.receiver.waitForRequests(2);
    const id = only(s.rows()).id;
    assert.match(s.attempts(id)[0]?.error ?? '', /interrupted/);
    first.release(200); // the old lease holder's success must not be recorded
    second.release(500);
    await s.scheduler.drain();
    const row = only(s.rows());
    assert.equal(row.status, 'queued');
    assert.equal(row.attempts, 2);
    assert.equal(row.delivered_at, null);
    assert.equal(row.last_status_code, 500);
    assert.equal(row.next_attempt_at, s.h.clock.now() + 2 * MINUTE);
    assert.deepEqual(s.attempts(id).map((a) => [a.attempt, a.status_code]), [[1, null], [2, 500]]);
  });

  test('after a crash the delivery is claimed again once its lease runs out (a restarted scheduler on the same database)', async (t) => {
    const held = heldAnswer();
    const s = await setup(t, {}, (_req, n) => (n === 0 ? held.promise : 200));
    s.emit();
    s.scheduler.tick(); // the "crashed" worker: its request never gets an outcome recorded
    await s.receiver.waitForRequests(1);
    const { core, webhooks } = s.h.services;
    const restarted = new DeliveryScheduler(core, webhooks.deliveries, webhooks.store);
    await restarted.processAll();
    assert.equal(s.receiver.requests.length, 1, 'the lease still holds');
    s.h.clock.advance(leaseMs(core.config.deliveryTimeoutMs));
    await restarted.processAll();
    assert.equal(s.receiver.requests.length, 2);
    const row = only(s.rows());
    assert.equal(row.status, 'delivered');
    assert.equal(row.attempts, 2);
    held.release(500);
    await s.scheduler.drain();
    assert.equal(only(s.rows()).status, 'delivered', 'the crashed worker cannot undo it');
  });

  test('a lease that runs out on the 8th attempt ends the delivery as failed, without a 9th', async (t) => {
    const held = heldAnswer();
    const s = await setup(t, { deliveryBackoffMs: 1 }, (_req, n) => (n < 7 ? 500 : held.promise));
    s.emit();
    for (let i = 0; i < 7; i++) {
      await s.scheduler.processAll();
      s.h.clock.advance(1000);
    }
    assert.equal(s.scheduler.tick(), 1);
    await s.receiver.waitForRequests(8);
    s.h.clock.advance(leaseMs(s.h.config.deliveryTimeoutMs));
    assert.equal(s.scheduler.tick(), 0);
    const row = only(s.rows());
    assert.equal(row.status, 'failed');
    assert.equal(row.attempts, 8);
    assert.match(s.attempts(row.id)[7]?.error ?? '', /interrupted/);
    held.release(200);
    await s.scheduler.drain();
    assert.equal(only(s.rows()).status, 'failed');
  });

  test('the destination is checked again at send time: a non-allowed address is never connected to', async (t) => {
    const s = await setup(t);
    const { core, webhooks } = s.h.services;
    core.config.webhookAllow = '127.0.0.2';
    core.config.allowList = parseAllowList('127.0.0.2');
    // Rows as an older allow list or a direct database edit could have left them.
    const insert = (url: string) =>
      core.writer.write(() => {
        const w = webhooks.store.insert({ id: newId('wh'), account_id: s.h.accountId, url, events: '["recording.updated"]', payload_mode: 'default', rules: null, created_at: core.clock.now() });
        return w.id;
      });
    webhooks.disable(s.h.accountId, s.webhookId);
    insert(s.receiver.url); // http://127.0.0.1:<port>: listed only 127.0.0.2
    insert(s.receiver.url.replace('127.0.0.1', '127.0.0.3'));
    insert('https://rebind.example/hook');
    // DNS rebinding: the name looked public when the subscription was made, now it answers loopback.
    const rebinding: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];
    const scheduler = new DeliveryScheduler({ ...core, resolver: rebinding }, webhooks.deliveries, webhooks.store);
    s.emit();
    await scheduler.processAll();
    assert.equal(s.receiver.requests.length, 0);
    const errors = s.rows().filter((d) => d.status === 'queued').map((d) => d.last_error);
    assert.equal(errors.length, 3);
    assert.deepEqual(errors.filter((e) => /^url: must use https/.test(e ?? '')).length, 2);
    assert.deepEqual(errors.filter((e) => /destination blocked/.test(e ?? '')).length, 1);
  });

  test('serve mode: a commit nudges the running scheduler, and stop() waits for the send in flight', async (t) => {
    const held = heldAnswer();
    const s = await setup(t, {}, () => held.promise);
    s.scheduler.start();
    s.emit();
    await s.receiver.waitForRequests(1);
    const stopping = s.scheduler.stop();
    setTimeout(() => held.release(200), 30);
    await stopping;
    assert.equal(only(s.rows()).status, 'delivered');
    s.emit();
    await realWait(30);
    assert.equal(s.receiver.requests.length, 1, 'a stopped scheduler claims nothing');
  });
});
