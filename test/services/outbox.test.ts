import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { EventType } from '../../src/services/events';
import { harness, type Harness } from '../helpers/harness';

const HOOK = 'https://hooks.example.com/reclib';

async function subscribe(h: Harness, events: EventType[] | undefined, extra: { payloadMode?: 'text'; rules?: { prefix: string } } = {}) {
  return (await h.services.webhooks.create(h.accountId, { url: HOOK, events, ...extra })).webhook;
}

function emit(h: Harness, type: EventType, recordingId = 'rec_1', revision = 1) {
  const { writer, clock } = h.services.core;
  return writer.write(() => h.services.events.emit(h.accountId, type, recordingId, revision, clock.now()));
}

const deliveries = (h: Harness, recordingId = 'rec_1') => h.services.webhooks.deliveries.forRecording(h.accountId, recordingId);

describe('webhook outbox', () => {
  test('an event queues one delivery per active subscription listing its type, with the default payload body', async () => {
    const h = harness();
    const created = await subscribe(h, ['recording.created']);
    const both = await subscribe(h, ['recording.created', 'recording.deleted']);
    await subscribe(h, ['recording.updated']);
    const event = emit(h, 'recording.created', 'rec_1', 1);
    const rows = deliveries(h);
    assert.deepEqual(rows.map((d) => d.webhook_id).sort(), [created.id, both.id].sort());
    for (const d of rows) {
      assert.match(d.id, /^dlv_/);
      assert.equal(d.status, 'queued');
      assert.equal(d.kind, 'event');
      assert.equal(d.event_id, String(event.seq));
      assert.equal(d.revision, 1);
      assert.equal(d.attempts, 0);
      assert.equal(d.next_attempt_at, h.clock.now());
      assert.equal(d.body, JSON.stringify({ id: String(event.seq), type: 'recording.created', recordingId: 'rec_1', revision: 1, createdAt: h.clock.now() }));
    }
  });

  test('the default payload carries exactly id, type, recordingId, revision, createdAt — the feed item', async () => {
    const h = harness();
    await subscribe(h, ['recording.deleted']);
    emit(h, 'recording.deleted', 'rec_9', 4);
    const [d] = deliveries(h, 'rec_9');
    const feed = await h.req('GET', '/api/v2/events', { token: h.key(['events:read']) });
    assert.deepEqual(JSON.parse(d?.body ?? ''), feed.json.events[0]);
    assert.deepEqual(Object.keys(JSON.parse(d?.body ?? '')), ['id', 'type', 'recordingId', 'revision', 'createdAt']);
  });

  test('deliveries are written in the transaction of the event: a rolled-back change queues nothing', async () => {
    const h = harness();
    await subscribe(h, ['recording.created']);
    const { writer, clock } = h.services.core;
    assert.throws(() =>
      writer.write(() => {
        h.services.events.emit(h.accountId, 'recording.created', 'rec_1', 1, clock.now());
        assert.equal(deliveries(h).length, 1);
        throw new Error('the change failed');
      }),
    );
    assert.equal(deliveries(h).length, 0);
  });

  test('disabled subscriptions and other accounts get nothing', async () => {
    const h = harness();
    const w = await subscribe(h, ['recording.created']);
    h.services.webhooks.disable(h.accountId, w.id);
    const otherAccount = h.services.auth.createAccount('other');
    await h.services.webhooks.create(otherAccount.id, { url: HOOK, events: ['recording.created'] });
    emit(h, 'recording.created');
    assert.equal(deliveries(h).length, 0);
  });

  test('one outbox for both payload modes: a text subscription gets a text snapshot for the events it lists, a rule subscription none, neither the default payload', async () => {
    const h = harness();
    const plain = await subscribe(h, ['recording.created']);
    const text = await subscribe(h, ['recording.created'], { payloadMode: 'text' });
    const rule = await subscribe(h, undefined, { payloadMode: 'text', rules: { prefix: 'todo' } });
    const token = h.key(['recordings:create', 'recordings:write']);
    const created = await h.req('POST', '/api/v2/recordings', { token, body: { type: 'memo', title: 'Groceries', transcript: 'todo buy milk' }, headers: { 'Idempotency-Key': 'k1' } });
    assert.equal(created.status, 201, created.text);
    const id = created.json.recording.id as string;
    const rows = deliveries(h, id);
    assert.deepEqual(rows.map((d) => d.webhook_id).sort(), [plain.id, text.id].sort(), 'the rule subscription gets no event delivery');
    const textRow = rows.find((d) => d.webhook_id === text.id);
    const body = JSON.parse(textRow?.body ?? '{}');
    assert.equal(textRow?.kind, 'event');
    assert.equal(body.id, textRow?.id, 'the text payload carries its own delivery id');
    assert.deepEqual([body.type, body.recordingId, body.revision, body.title, body.transcript], ['recording.created', id, 1, 'Groceries', 'todo buy milk']);
    assert.equal(JSON.parse(rows.find((d) => d.webhook_id === plain.id)?.body ?? '{}').transcript, undefined, 'the default payload has no text');
    // An edit emits recording.updated, which the text subscription does not list.
    const edited = await h.req('PATCH', `/api/v2/recordings/${id}`, { token, body: { title: 'Shopping' }, headers: { 'If-Match': '"1"' } });
    assert.equal(edited.status, 200, edited.text);
    assert.equal(deliveries(h, id).length, 2);
  });

  test('disabling a subscription cancels its queued deliveries (status disabled), not other subscriptions\'', async () => {
    const h = harness();
    const a = await subscribe(h, ['recording.created', 'recording.updated']);
    const b = await subscribe(h, ['recording.created']);
    emit(h, 'recording.created');
    emit(h, 'recording.updated', 'rec_1', 2);
    h.services.webhooks.disable(h.accountId, a.id);
    const rows = deliveries(h);
    assert.deepEqual(rows.filter((d) => d.webhook_id === a.id).map((d) => d.status), ['disabled', 'disabled']);
    assert.deepEqual(rows.filter((d) => d.webhook_id === b.id).map((d) => d.status), ['queued']);
    for (const d of rows.filter((d) => d.webhook_id === a.id)) assert.equal(d.next_attempt_at, null);
  });
});
