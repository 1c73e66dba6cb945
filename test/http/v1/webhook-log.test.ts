// docs/decisions.md §8: the web app's view of subscriptions over v1 — every
// subscription of both payload modes, disabling, the per-subscription delivery log (newest first,
// opaque cursor) and the webhook.test send through the normal queue.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { harness, type Harness } from '../../helpers/harness';
import { startReceiver } from '../../helpers/receiver';
import { assertError, created } from '../../helpers/recording-client';

const LOG_FIELDS = ['attempts', 'createdAt', 'eventId', 'id', 'lastError', 'lastStatusCode', 'recordingId', 'status', 'type', 'updatedAt'];

async function subscribe(h: Harness, body: Record<string, unknown>): Promise<{ id: string; secret: string; webhook: Record<string, unknown> }> {
  const res = await h.req('POST', '/api/v1/webhooks', { token: h.session, body });
  assert.equal(res.status, 200, res.text);
  return { id: res.json.webhook.id, secret: res.json.secret, webhook: res.json.webhook };
}

const log = (h: Harness, id: string, query = '') => h.req('GET', `/api/v1/webhooks/${id}/deliveries${query}`, { token: h.session });

/** Every page of a log, following nextCursor. */
async function wholeLog(h: Harness, id: string, limit: number): Promise<{ pages: string[][]; ids: string[] }> {
  const pages: string[][] = [];
  let cursor: string | null = null;
  do {
    const res = await log(h, id, `?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    assert.equal(res.status, 200, res.text);
    pages.push(res.json.deliveries.map((d: { id: string }) => d.id));
    cursor = res.json.nextCursor;
  } while (cursor !== null && pages.length < 50);
  return { pages, ids: pages.flat() };
}

describe('GET /api/v1/webhooks', () => {
  it('lists every subscription, oldest first: both payload modes with payloadMode and rules, disabled ones with their status', async () => {
    const h = harness({ webhookAllow: '127.0.0.1' });
    const plain = await subscribe(h, { url: 'http://127.0.0.1:9/a', events: ['recording.created'] });
    const text = await subscribe(h, { url: 'http://127.0.0.1:9/b', payloadMode: 'text', events: ['recording.updated'] });
    const rule = await subscribe(h, { url: 'http://127.0.0.1:9/c', payloadMode: 'text', rules: { prefix: 'todo', kind: 'memo' } });
    assert.equal((await h.req('DELETE', `/api/v1/webhooks/${text.id}`, { token: h.session })).status, 204);
    const res = await h.req('GET', '/api/v1/webhooks', { token: h.session });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json.webhooks[2].rules, { prefix: 'todo', kind: 'memo' });
    assert.deepEqual(res.json.webhooks.map((w: { payloadMode: string }) => w.payloadMode), ['default', 'text', 'text']);
    assert.equal(res.text.includes('whsec_'), false, 'no secrets in the list');
    assert.deepEqual(res.json, { webhooks: [plain.webhook, { ...text.webhook, status: 'disabled' }, rule.webhook] });
  });

  it('is session only: an API key gets 403 session_required on every route; without credentials 401', async () => {
    const h = harness({ webhookAllow: '127.0.0.1' });
    const w = await subscribe(h, { url: 'http://127.0.0.1:9/a', events: ['recording.created'] });
    const key = h.key();
    for (const [method, path] of [
      ['GET', '/api/v1/webhooks'], ['DELETE', `/api/v1/webhooks/${w.id}`], ['GET', `/api/v1/webhooks/${w.id}/deliveries`], ['POST', `/api/v1/webhooks/${w.id}/test`],
    ] as const) {
      assertError(await h.req(method, path, { token: key }), 403, 'session_required');
      assertError(await h.req(method, path), 401, 'unauthenticated');
    }
    assert.equal(h.services.webhooks.get(h.accountId, w.id).status, 'active');
  });
});

describe('DELETE /api/v1/webhooks/{id}', () => {
  it('disables (204) and cancels its queued deliveries; again 204; an unknown or foreign id is 404', async () => {
    const h = harness({ webhookAllow: '127.0.0.1' });
    const w = await subscribe(h, { url: 'http://127.0.0.1:9/a', events: ['recording.created'] });
    const rec = await created(h, h.key(), { type: 'memo', transcript: 'queued, never sent' });
    assert.equal((await h.req('DELETE', `/api/v1/webhooks/${w.id}`, { token: h.session })).status, 204);
    assert.equal((await h.req('DELETE', `/api/v1/webhooks/${w.id}`, { token: h.session })).status, 204);
    const [d] = (await log(h, w.id)).json.deliveries;
    assert.deepEqual([d.recordingId, d.status], [rec.id, 'disabled']);
    assertError(await h.req('DELETE', '/api/v1/webhooks/wh_nope', { token: h.session }), 404, 'not_found');
    const other = harness({ webhookAllow: '127.0.0.1' });
    const foreign = await subscribe(other, { url: 'http://127.0.0.1:9/a', events: ['recording.created'] });
    assertError(await h.req('DELETE', `/api/v1/webhooks/${foreign.id}`, { token: h.session }), 404, 'not_found');
    assert.equal(other.services.webhooks.get(other.accountId, foreign.id).status, 'active');
  });
});

describe('GET /api/v1/webhooks/{id}/deliveries', () => {
  it('answers the documented fields, newest first, the event type and recording of each', async () => {
    const h = harness({ webhookAllow: '127.0.0.1' });
    const w = await subscribe(h, { url: 'http://127.0.0.1:9/a', events: ['recording.created', 'recording.deleted'] });
    const key = h.key();
    const first = await created(h, key, { type: 'memo', transcript: 'one' });
    h.clock.advance(5);
    const second = await created(h, key, { type: 'clip', transcript: 'two' });
    h.clock.advance(5);
    assert.equal((await h.req('DELETE', `/api/v2/recordings/${first.id}`, { token: key, headers: { 'if-match': '1' } })).status, 204);
    const res = await log(h, w.id);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(res.json), ['deliveries', 'nextCursor']);
    assert.equal(res.json.nextCursor, null);
    const events = h.services.events.feed(h.accountId, undefined, 20).events;
    const eventOf = (type: string, recordingId: string) => events.find((e) => e.type === type && e.recordingId === recordingId)!.id;
    assert.deepEqual(
      res.json.deliveries.map((d: Record<string, unknown>) => [d.type, d.recordingId, d.eventId, d.status, d.attempts, d.createdAt]),
      [
        ['recording.deleted', first.id, eventOf('recording.deleted', first.id), 'queued', 0, h.clock.now()],
        ['recording.created', second.id, eventOf('recording.created', second.id), 'queued', 0, h.clock.now() - 5],
        ['recording.created', first.id, eventOf('recording.created', first.id), 'queued', 0, h.clock.now() - 10],
      ],
    );
    for (const d of res.json.deliveries) assert.deepEqual(Object.keys(d).sort(), LOG_FIELDS);
  });

  it('pages newest first with nextCursor: nothing skipped or repeated, also in one millisecond and while new deliveries arrive', async () => {
    const h = harness({ webhookAllow: '127.0.0.1' });
    const w = await subscribe(h, { url: 'http://127.0.0.1:9/a', events: ['recording.created'] });
    const other = await subscribe(h, { url: 'http://127.0.0.1:9/b', events: ['recording.created'] });
    const key = h.key();
    const made: string[] = [];
    for (let i = 0; i < 7; i++) {
      made.push((await created(h, key, { type: 'memo', transcript: `n${i}` })).id);
      if (i % 3 === 2) h.clock.advance(1); // several deliveries share a millisecond
    }
    const recordingOf = (id: string) => h.services.webhooks.deliveries.get(id)!.recording_id;
    const { pages, ids } = await wholeLog(h, w.id, 3);
    assert.deepEqual(pages.map((p) => p.length), [3, 3, 1]);
    assert.deepEqual(ids.map(recordingOf), [...made].reverse());

    // A delivery made after the first page was read is not repeated or skipped by the next pages.
    const page1 = await log(h, w.id, '?limit=3');
    h.clock.advance(1);
    await created(h, key, { type: 'memo', transcript: 'late' });
    let cursor = page1.json.nextCursor as string | null;
    const rest: string[] = [];
    while (cursor) {
      const res = await log(h, w.id, `?limit=3&cursor=${encodeURIComponent(cursor)}`);
      rest.push(...res.json.deliveries.map((d: { id: string }) => d.id));
      cursor = res.json.nextCursor;
    }
    assert.deepEqual([...page1.json.deliveries.map((d: { id: string }) => d.id), ...rest], ids);
    assert.equal((await wholeLog(h, other.id, 100)).ids.length, 8, "each subscription's own log");
  });

  it('limit is 1-100 (default 50); a cursor of another subscription or not one of ours is 400; an unknown id 404', async () => {
    const h = harness({ webhookAllow: '127.0.0.1' });
    const w = await subscribe(h, { url: 'http://127.0.0.1:9/a', events: ['recording.created'] });
    const other = await subscribe(h, { url: 'http://127.0.0.1:9/b', events: ['recording.created'] });
    const key = h.key();
    for (let i = 0; i < 52; i++) await created(h, key, { type: 'memo', transcript: `n${i}` });
    const firstPage = await log(h, w.id);
    assert.equal(firstPage.json.deliveries.length, 50);
    assert.equal((await log(h, w.id, '?limit=100')).json.deliveries.length, 52);
    for (const q of ['?limit=0', '?limit=101', '?limit=x', '?limit=', '?cursor=', '?cursor=abc', '?cursor=dlg1.bm9wZQ', '?page=2']) {
      assertError(await log(h, w.id, q), 400, 'invalid_request');
    }
    const foreign = await log(h, w.id, `?cursor=${encodeURIComponent((await log(h, other.id, '?limit=1')).json.nextCursor)}`);
    assertError(foreign, 400, 'invalid_request', 'another subscription');
    assertError(await log(h, 'wh_nope'), 404, 'not_found');
    assertError(await log(h, 'bad%20id'), 400, 'invalid_request');
  });
});

describe('POST /api/v1/webhooks/{id}/test', () => {
  it('queues a webhook.test delivery that the scheduler sends signed: the receiver verifies it, the log shows it delivered', async (t) => {
    const receiver = await startReceiver();
    t.after(() => receiver.close());
    const h = harness({ webhookAllow: '127.0.0.1' });
    const w = await subscribe(h, { url: receiver.url, events: ['recording.created'] });
    const res = await h.req('POST', `/api/v1/webhooks/${w.id}/test`, { token: h.session });
    assert.equal(res.status, 202, res.text);
    const { delivery } = res.json;
    assert.deepEqual(Object.keys(res.json), ['delivery']);
    assert.deepEqual(Object.keys(delivery).sort(), LOG_FIELDS);
    assert.match(delivery.id, /^dlv_/);
    assert.match(delivery.eventId, /^test_[A-Za-z0-9]+$/);
    assert.deepEqual(
      { ...delivery, id: 'x', eventId: 'x' },
      { id: 'x', recordingId: null, eventId: 'x', type: 'webhook.test', status: 'queued', attempts: 0, lastStatusCode: null, lastError: null, createdAt: h.clock.now(), updatedAt: h.clock.now() },
    );

    await h.services.webhooks.scheduler.processAll();
    assert.equal(receiver.requests.length, 1);
    const [got] = receiver.requests;
    assert.deepEqual(JSON.parse(got!.body), { id: delivery.eventId, type: 'webhook.test', createdAt: h.clock.now() });
    const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(got!.headers['service-signature']));
    assert.ok(m, String(got!.headers['service-signature']));
    const expected = createHmac('sha256', w.secret).update(`${m[1]}.${got!.body}`).digest('hex');
    assert.equal(m[2], expected, 'Service-Signature verifies with the subscription secret');
    assert.equal(got!.headers['webhook-id'], delivery.id);

    const [logged] = (await log(h, w.id)).json.deliveries;
    assert.deepEqual([logged.id, logged.type, logged.recordingId, logged.status, logged.attempts, logged.lastStatusCode], [delivery.id, 'webhook.test', null, 'delivered', 1, 200]);
  });

  it('is retried like any delivery: a 500 leaves it queued with the code, the retry delivers it', async (t) => {
    const receiver = await startReceiver((_req, n) => (n === 0 ? 500 : 204));
    t.after(() => receiver.close());
    const h = harness({ webhookAllow: '127.0.0.1', deliveryBackoffMs: 1000 });
    const w = await subscribe(h, { url: receiver.url, payloadMode: 'text', rules: { prefix: 'todo' } });
    const id = (await h.req('POST', `/api/v1/webhooks/${w.id}/test`, { token: h.session })).json.delivery.id;
    await h.services.webhooks.scheduler.processAll();
    let [d] = (await log(h, w.id)).json.deliveries;
    assert.deepEqual([d.id, d.status, d.attempts, d.lastStatusCode], [id, 'queued', 1, 500]);
    assert.ok(d.lastError);
    h.clock.advance(1000);
    await h.services.webhooks.scheduler.processAll();
    [d] = (await log(h, w.id)).json.deliveries;
    assert.deepEqual([d.status, d.attempts, d.lastStatusCode, d.lastError], ['delivered', 2, 204, null]);
    assert.equal(receiver.requests[1]!.body, receiver.requests[0]!.body, 'the same bytes again');
    assert.equal(JSON.parse(receiver.requests[0]!.body).type, 'webhook.test', 'text mode sends the same test payload');
  });

  it('a disabled subscription is 409 webhook_disabled and nothing is queued; an unknown id is 404', async () => {
    const h = harness({ webhookAllow: '127.0.0.1' });
    const w = await subscribe(h, { url: 'http://127.0.0.1:9/a', events: ['recording.created'] });
    await h.req('DELETE', `/api/v1/webhooks/${w.id}`, { token: h.session });
    assertError(await h.req('POST', `/api/v1/webhooks/${w.id}/test`, { token: h.session }), 409, 'webhook_disabled');
    assert.deepEqual((await log(h, w.id)).json.deliveries, []);
    assertError(await h.req('POST', '/api/v1/webhooks/wh_nope/test', { token: h.session }), 404, 'not_found');
  });

  it('a test delivery stays out of every recording listing and the event feed', async () => {
    const h = harness({ webhookAllow: '127.0.0.1' });
    const w = await subscribe(h, { url: 'http://127.0.0.1:9/a', events: ['recording.created'] });
    assert.equal((await h.req('POST', `/api/v1/webhooks/${w.id}/test`, { token: h.session })).status, 202);
    assert.deepEqual(h.services.events.feed(h.accountId, undefined, 10).events, []);
    assert.equal((await h.req('GET', '/api/v1/recordings', { token: h.session })).json.recordings.length, 0);
  });
});
