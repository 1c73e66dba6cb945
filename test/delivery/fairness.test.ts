// Fair delivery (docs/decisions.md §12): at most one send in flight per subscription, claims round robin
// over the subscriptions with due deliveries, and a subscription whose last attempt got no answer
// waits its retry delay before its other deliveries are tried, so a stuck receiver cannot hold up
// the others for longer than one timeout.
import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import type { Config } from '../../src/config';
import { harness } from '../helpers/harness';
import { heldAnswer, startReceiver, type Receiver } from '../helpers/receiver';

const MINUTE = 60_000;

async function setup(t: TestContext, over: Partial<Config>, answers: Array<Receiver['answer']>) {
  const h = harness({ webhookAllow: '127.0.0.1', ...over });
  const receivers: Receiver[] = [];
  const webhookIds: string[] = [];
  for (const answer of answers) {
    const receiver = await startReceiver(answer);
    t.after(() => receiver.close());
    receivers.push(receiver);
    webhookIds.push((await h.services.webhooks.create(h.accountId, { url: receiver.url, events: ['recording.updated'] })).webhook.id);
  }
  const { writer, clock } = h.services.core;
  const scheduler = h.services.webhooks.scheduler;
  t.after(() => scheduler.stop());
  let revision = 0;
  return {
    h,
    receivers,
    webhookIds,
    scheduler,
    /** Emits `n` events; each subscription gets one delivery per event. */
    emit(n = 1) {
      for (let i = 0; i < n; i++) writer.write(() => h.services.events.emit(h.accountId, 'recording.updated', 'rec_1', ++revision, clock.now()));
    },
    rowsOf: (webhookId: string) => h.services.webhooks.deliveries.forRecording(h.accountId, 'rec_1').filter((d) => d.webhook_id === webhookId),
  };
}

describe('fair delivery', () => {
  test("beside a receiver that never answers, a healthy subscription's deliveries arrive within a second of being due", async (t) => {
    const s = await setup(t, { deliveryTimeoutMs: 5_000 }, [() => 'hang', () => 200]);
    const [stuck, healthy] = s.receivers as [Receiver, Receiver];
    s.scheduler.start(); // serve mode: the timer and the commit nudges
    const due = Date.now();
    s.emit(6);
    await healthy.waitForRequests(6, 2_000);
    for (const r of healthy.requests) assert.ok(r.receivedAt - due < 1_000, `arrived ${r.receivedAt - due} ms after it was due`);
    assert.equal(stuck.requests.length, 1, 'one send in flight for the stuck subscription, the other five wait');
    assert.equal(stuck.maxInFlight, 1);
    // The last answer is recorded a moment after the receiver sent it.
    for (let i = 0; i < 100 && s.rowsOf(s.webhookIds[1]!).some((d) => d.status !== 'delivered'); i++) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(s.rowsOf(s.webhookIds[1]!).map((d) => d.status), Array(6).fill('delivered'));
  });

  test('a subscription whose attempt timed out waits its retry delay before its other deliveries; then the oldest goes first', async (t) => {
    const s = await setup(t, { deliveryTimeoutMs: 300 }, [(_req, n) => (n === 0 ? 'hang' : 200)]);
    const [receiver] = s.receivers as [Receiver];
    s.emit(3);
    await s.scheduler.processAll();
    assert.equal(receiver.requests.length, 1, 'after the timeout nothing more was tried');
    const [first, ...rest] = s.rowsOf(s.webhookIds[0]!);
    assert.match(first!.last_error ?? '', /timed out after 300 ms/);
    assert.equal(first!.next_attempt_at, s.h.clock.now() + MINUTE);
    assert.deepEqual(rest.map((d) => d.attempts), [0, 0], 'the queued ones were not tried');
    s.h.clock.advance(MINUTE - 1);
    assert.equal(s.scheduler.tick(), 0, 'still waiting');
    s.h.clock.advance(1);
    await s.scheduler.processAll();
    assert.equal(receiver.requests.length, 4);
    assert.equal(receiver.requests[1]!.body, receiver.requests[0]!.body, 'the retry of the timed-out delivery went first');
    assert.deepEqual(s.rowsOf(s.webhookIds[0]!).map((d) => d.status), ['delivered', 'delivered', 'delivered']);
  });

  test('a failure with a status code does not hold up the subscription: its next delivery goes while the failed one waits', async (t) => {
    const s = await setup(t, {}, [(_req, n) => (n === 0 ? 500 : 200)]);
    s.emit(2);
    await s.scheduler.processAll();
    assert.deepEqual(s.rowsOf(s.webhookIds[0]!).map((d) => d.status), ['queued', 'delivered']);
  });

  test('claims go round robin over the subscriptions with due deliveries, not by due time', async (t) => {
    const order: string[] = [];
    const s = await setup(t, { deliveryConcurrency: 1 }, [() => (order.push('a'), 200)]);
    s.emit(4); // a backlog for the first subscription, due before anything of b and c
    s.h.clock.advance(1);
    for (const name of ['b', 'c']) {
      const receiver = await startReceiver(() => (order.push(name), 200));
      t.after(() => receiver.close());
      await s.h.services.webhooks.create(s.h.accountId, { url: receiver.url, events: ['recording.updated'] });
    }
    s.emit(2);
    await s.scheduler.processAll();
    assert.equal(order.length, 10);
    assert.equal(order[0], 'a');
    assert.deepEqual(new Set(order.slice(1, 3)), new Set(['b', 'c']), 'b and c before the rest of a\'s backlog');
    assert.deepEqual(order.slice(3, 6), [order[0], order[1], order[2]], 'then the same rotation');
  });

  test('at most one send in flight per subscription, even with free slots', async (t) => {
    const held = heldAnswer();
    const s = await setup(t, {}, [() => held.promise]);
    s.emit(5);
    assert.equal(s.scheduler.tick(), 1);
    await s.receivers[0]!.waitForRequests(1);
    assert.equal(s.scheduler.tick(), 0, 'three slots free, but the subscription has a send in flight');
    held.release(200);
    await s.scheduler.processAll();
    assert.equal(s.receivers[0]!.requests.length, 5);
    assert.equal(s.receivers[0]!.maxInFlight, 1);
  });
});
