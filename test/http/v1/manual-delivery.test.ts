// Manual delivery and the delivery status listing (spec v1 note 4, "Text delivery states",
// docs/decisions.md §6-7).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { harness, type Harness } from '../../helpers/harness';
import { startReceiver } from '../../helpers/receiver';
import { assertError } from '../../helpers/recording-client';
import { feedTypes, v1Created, v1Delete, v1Put } from '../../helpers/v1-client';

async function subscribe(h: Harness, body: Record<string, unknown>): Promise<string> {
  const res = await h.req('POST', '/api/v1/webhooks', { token: h.session, body });
  assert.equal(res.status, 200, res.text);
  return res.json.webhook.id;
}

/** key null: no Idempotency-Key header. */
const send = (h: Harness, recordingId: string, body: unknown, key: string | null = 'send-1', token = h.session) =>
  h.req('POST', `/api/v1/recordings/${recordingId}/deliveries`, { token, body, headers: key === null ? {} : { 'idempotency-key': key } });

const listing = (h: Harness, recordingId: string, token = h.session) => h.req('GET', `/api/v1/recordings/${recordingId}/deliveries`, { token });

const bodyOf = (h: Harness, deliveryId: string) => JSON.parse(h.services.webhooks.deliveries.get(deliveryId)!.body!);

describe('manual delivery', () => {
  it('needs a session and an Idempotency-Key', async () => {
    const h = harness({ webhookAllow: '127.0.0.1' });
    const wh = await subscribe(h, { url: 'http://127.0.0.1:9/h', payloadMode: 'text', events: ['recording.created'] });
    const r = await v1Created(h, h.session, { kind: 'clip', transcript: 'x' });
    assertError(await send(h, r.id, { webhookId: wh, expectedRevision: 1 }, null), 400, 'invalid_request', 'Idempotency-Key');
    assertError(await send(h, r.id, { webhookId: wh, expectedRevision: 1 }, 'k'.repeat(129)), 400, 'invalid_request', 'Idempotency-Key');
    assertError(await send(h, r.id, { webhookId: wh, expectedRevision: 1 }, 'k', h.key()), 403, 'session_required');
    assertError(await send(h, r.id, { webhookId: wh }), 400, 'invalid_request', 'expectedRevision');
    // Not a revision any recording can have (beyond 2^53 a number is not exact): invalid, not stale.
    assertError(await send(h, r.id, { webhookId: wh, expectedRevision: 1e300 }), 400, 'invalid_request', 'expectedRevision');
  });

  it('sends event manual_…, type recording.manual, in text mode without command, skipping rules and ignoring events; not in the feed', async () => {
    const h = harness({ webhookAllow: '127.0.0.1' });
    const wh = await subscribe(h, { url: 'http://127.0.0.1:9/h', payloadMode: 'text', rules: { prefix: 'never matches' } });
    const r = await v1Created(h, h.session, { kind: 'memo', title: 'Notes', transcript: 'plain words' });
    const before = feedTypes(h);
    const res = await send(h, r.id, { webhookId: wh, expectedRevision: 1 });
    assert.equal(res.status, 200, res.text);
    const d = res.json.delivery;
    assert.match(d.eventId, /^manual_/);
    assert.deepEqual([d.type, d.trigger, d.status, d.webhookId, d.revision, d.attempts], ['recording.manual', 'manual', 'queued', wh, 1, 0]);
    const body = bodyOf(h, d.id);
    assert.deepEqual([body.id, body.eventId, body.type, body.kind, body.title, body.transcript, 'command' in body], [d.id, d.eventId, 'recording.manual', 'memo', 'Notes', 'plain words', false]);
    assert.deepEqual(feedTypes(h), before, 'a manual send is not added to the event feed');
  });

  it('keeps the default payload mode of a default subscription: the event payload with the manual_ id', async () => {
    const h = harness({ webhookAllow: '127.0.0.1' });
    const res = await h.req('POST', '/api/v2/webhooks', { token: h.session, body: { url: 'http://127.0.0.1:9/h', events: ['recording.deleted'] } });
    const r = await v1Created(h, h.session, { kind: 'clip', transcript: 'secret words' });
    const sent = await send(h, r.id, { webhookId: res.json.webhook.id, expectedRevision: 1 });
    const body = bodyOf(h, sent.json.delivery.id);
    assert.deepEqual(body, { id: sent.json.delivery.eventId, type: 'recording.manual', recordingId: r.id, revision: 1, createdAt: body.createdAt });
  });

  it('a stale expectedRevision gives 409 revision_conflict; a disabled subscription 409 webhook_disabled; unknown ones 404; deleted 410', async () => {
    const h = harness({ webhookAllow: '127.0.0.1' });
    const wh = await subscribe(h, { url: 'http://127.0.0.1:9/h', payloadMode: 'text', events: ['recording.created'] });
    const off = await subscribe(h, { url: 'http://127.0.0.1:9/off', payloadMode: 'text', events: ['recording.created'] });
    await h.req('DELETE', `/api/v2/webhooks/${off}`, { token: h.session });
    const r = await v1Created(h, h.session, { kind: 'clip', transcript: 'x' });
    await v1Put(h, h.session, r.id, { title: 'moved on' }, 1);
    assertError(await send(h, r.id, { webhookId: wh, expectedRevision: 1 }, 'a'), 409, 'revision_conflict', 'revision 2');
    assertError(await send(h, r.id, { webhookId: off, expectedRevision: 2 }, 'b'), 409, 'webhook_disabled');
    assertError(await send(h, r.id, { webhookId: 'wh_nope', expectedRevision: 2 }, 'c'), 404, 'not_found');
    assertError(await send(h, 'rec_nope', { webhookId: wh, expectedRevision: 2 }, 'd'), 404, 'not_found');
    await v1Delete(h, h.session, r.id, 2);
    assertError(await send(h, r.id, { webhookId: wh, expectedRevision: 3 }, 'e'), 410, 'gone');
  });

  it('the same key and selection returns the same delivery (safe after a network failure); another selection gives 409 idempotency_conflict; after a delete 410', async () => {
    const h = harness({ webhookAllow: '127.0.0.1' });
    const wh = await subscribe(h, { url: 'http://127.0.0.1:9/h', payloadMode: 'text', events: ['recording.created'] });
    const r = await v1Created(h, h.session, { kind: 'clip', transcript: 'x' });
    const first = await send(h, r.id, { webhookId: wh, expectedRevision: 1 }, 'retry-me');
    await v1Put(h, h.session, r.id, { title: 'later edit' }, 1);
    const again = await send(h, r.id, { webhookId: wh, expectedRevision: 1 }, 'retry-me');
    assert.equal(again.status, 200, again.text);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(again.json.delivery.id, first.json.delivery.id);
    assert.equal(h.services.webhooks.deliveries.forRecording(h.accountId, r.id).filter((d) => d.kind === 'manual').length, 1);
    assertError(await send(h, r.id, { webhookId: wh, expectedRevision: 2 }, 'retry-me'), 409, 'idempotency_conflict');
    // Once the recording is deleted, the retry answers 410 like any other access to it.
    await v1Delete(h, h.session, r.id, 2);
    assertError(await send(h, r.id, { webhookId: wh, expectedRevision: 1 }, 'retry-me'), 410, 'gone');
  });

  it('a pending capture the app has not saved has nothing to send (409 not_editable)', async () => {
    const h = harness({ webhookAllow: '127.0.0.1' });
    h.services.devices.add(h.accountId, { id: 'ring-1', name: 'Ring', model: 'ring' });
    const wh = await subscribe(h, { url: 'http://127.0.0.1:9/h', payloadMode: 'text', events: ['recording.created'] });
    const cap = await v1Created(h, h.session, { kind: 'clip', deviceId: 'ring-1', captureInput: 'hold' });
    assertError(await send(h, cap.id, { webhookId: wh, expectedRevision: 1 }), 409, 'not_editable');
  });
});

describe('delivery status listing', () => {
  it('lists every delivery with id, webhookId, eventId, type, status, attempts, lastStatusCode, lastError, nextAttemptAt, createdAt, deliveredAt', async (t) => {
    const h = harness({ webhookAllow: '127.0.0.1', deliveryBackoffMs: 1000 });
    const receiver = await startReceiver(() => 503);
    t.after(() => receiver.close());
    h.clock.set(10_000);
    const wh = await subscribe(h, { url: receiver.url, payloadMode: 'text', events: ['recording.created'] });
    const r = await v1Created(h, h.session, { kind: 'clip', transcript: 'x' });
    await h.services.webhooks.scheduler.processAll();
    const res = await listing(h, r.id);
    assert.equal(res.status, 200, res.text);
    const event = h.services.events.feed(h.accountId, undefined, 10).events[0]!;
    const [d] = res.json.deliveries;
    assert.deepEqual(d, {
      id: d.id, webhookId: wh, eventId: event.id, type: 'recording.created', trigger: 'event', revision: 1, status: 'queued', attempts: 1,
      lastStatusCode: 503, lastError: d.lastError, nextAttemptAt: 11_000, createdAt: 10_000, deliveredAt: null,
    });
    assert.deepEqual(res.json.pendingCaptureEvaluations, []);
    for (let i = 0; i < 8; i++) {
      h.clock.advance(1000 * 2 ** i);
      await h.services.webhooks.scheduler.processAll();
    }
    const failed = (await listing(h, r.id)).json.deliveries[0];
    assert.deepEqual([failed.status, failed.attempts, failed.nextAttemptAt], ['failed', 8, null]);
  });

  it('shows delivered and disabled states; needs a session; 404 unknown, 410 deleted', async (t) => {
    const h = harness({ webhookAllow: '127.0.0.1' });
    const receiver = await startReceiver();
    t.after(() => receiver.close());
    const ok = await subscribe(h, { url: receiver.url, payloadMode: 'text', events: ['recording.created'] });
    const r = await v1Created(h, h.session, { kind: 'clip', transcript: 'x' });
    await h.services.webhooks.scheduler.processAll();
    const off = await subscribe(h, { url: 'http://127.0.0.1:9/h', payloadMode: 'text', events: ['recording.updated'] });
    await v1Put(h, h.session, r.id, { title: 't' }, 1);
    await h.req('DELETE', `/api/v2/webhooks/${off}`, { token: h.session });
    const res = (await listing(h, r.id)).json.deliveries;
    assert.deepEqual(res.map((d: { webhookId: string; status: string; deliveredAt: number | null }) => [d.webhookId, d.status, d.deliveredAt !== null]), [
      [ok, 'delivered', true],
      [off, 'disabled', false],
    ]);
    assertError(await listing(h, r.id, h.key()), 403, 'session_required');
    assertError(await listing(h, 'rec_nope'), 404, 'not_found');
    await v1Delete(h, h.session, r.id, 2);
    assertError(await listing(h, r.id), 410, 'gone');
  });
});
