// Text-mode webhooks (spec "text payload", "Webhook delivery" 6, "Capture rules" 5-6, docs/decisions.md §6-7):
// subscription over v1 and v2, the payload fields, immutable snapshots resent on retry, deletion
// payloads, and erasure of stored delivery text when a recording is deleted.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { harness, type Harness } from '../../helpers/harness';
import { startReceiver } from '../../helpers/receiver';
import { assertError } from '../../helpers/recording-client';
import { v1Created, v1Delete, v1Put } from '../../helpers/v1-client';

async function subscribe(h: Harness, body: Record<string, unknown>): Promise<{ id: string; secret: string }> {
  const res = await h.req('POST', '/api/v1/webhooks', { token: h.session, body });
  assert.equal(res.status, 200, res.text);
  return { id: res.json.webhook.id, secret: res.json.secret };
}

const deliveries = (h: Harness, recordingId: string) => h.services.webhooks.deliveries.forRecording(h.accountId, recordingId);

describe('text-mode subscriptions', () => {
  it('POST /api/v1/webhooks (session) answers 200 { webhook, secret } and accepts payloadMode and rules; keys are refused', async () => {
    const h = harness({ webhookAllow: '127.0.0.1' });
    const res = await h.req('POST', '/api/v1/webhooks', {
      token: h.session, body: { url: 'http://127.0.0.1:9/hook', payloadMode: 'text', rules: { prefix: 'Todo', captureInput: 'hold', kind: 'clip' } },
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json.webhook.rules, { prefix: 'Todo', captureInput: 'hold', kind: 'clip' });
    assert.deepEqual([res.json.webhook.payloadMode, res.json.webhook.events], ['text', ['recording.transcript_ready']]);
    assert.match(res.json.secret, /^whsec_/);
    assertError(await h.req('POST', '/api/v1/webhooks', { token: h.key(), body: { url: 'http://127.0.0.1:9/hook', events: ['recording.created'] } }), 403, 'session_required');
    assertError(await h.req('POST', '/api/v1/webhooks', { token: h.session, body: { url: 'http://127.0.0.1:9/hook', rules: { prefix: 'x' } } }), 400, 'invalid_request', 'payloadMode');
  });

  it('v2 accepts payloadMode "text" too, and text-mode subscriptions are not in the v2 webhook list', async () => {
    const h = harness({ webhookAllow: '127.0.0.1' });
    const text = await h.req('POST', '/api/v2/webhooks', { token: h.session, body: { url: 'http://127.0.0.1:9/a', events: ['recording.created'], payloadMode: 'text' } });
    assert.equal(text.status, 201, text.text);
    const plain = await h.req('POST', '/api/v2/webhooks', { token: h.session, body: { url: 'http://127.0.0.1:9/b', events: ['recording.created'] } });
    const list = await h.req('GET', '/api/v2/webhooks', { token: h.session });
    assert.deepEqual(list.json.webhooks.map((w: { id: string }) => w.id), [plain.json.webhook.id]);
  });
});

describe('text payload', () => {
  it('carries every default field plus eventId, kind, title, transcript, summary, recordedAt and fetchUrl (the v1 URL); no command for events', async () => {
    const h = harness({ webhookAllow: '127.0.0.1', publicUrl: 'https://rec.example.net' });
    h.clock.set(1_700_000_000_000);
    await subscribe(h, { url: 'http://127.0.0.1:9/hook', payloadMode: 'text', events: ['recording.created'] });
    const r = await v1Created(h, h.key(), { kind: 'memo', title: 'Plan', transcript: 'ship it', summary: 's', recordedAt: 1234 });
    const [d] = deliveries(h, r.id);
    assert.ok(d?.body);
    const event = h.services.events.feed(h.accountId, undefined, 10).events[0]!;
    assert.deepEqual(JSON.parse(d.body), {
      id: d.id, type: 'recording.created', recordingId: r.id, revision: 1, createdAt: 1_700_000_000_000, eventId: event.id,
      kind: 'memo', title: 'Plan', transcript: 'ship it', summary: 's', recordedAt: 1234, fetchUrl: `https://rec.example.net/api/v1/recordings/${r.id}`,
    });
    assert.equal(d.event_id, event.id);
  });

  it('a subscription without rules gets text payloads for exactly the events it lists', async () => {
    const h = harness({ webhookAllow: '127.0.0.1' });
    await subscribe(h, { url: 'http://127.0.0.1:9/hook', payloadMode: 'text', events: ['recording.transcript_ready'] });
    const key = h.key();
    const r = await v1Created(h, key, { kind: 'clip', title: 'no text yet' });
    await v1Put(h, key, r.id, { title: 'renamed' }, 1);
    await v1Put(h, key, r.id, { transcript: 'now some text' }, 2);
    const sent = deliveries(h, r.id).map((d) => JSON.parse(d.body!) as { type: string; revision: number; transcript: string });
    assert.deepEqual(sent.map((b) => [b.type, b.revision, b.transcript]), [['recording.transcript_ready', 3, 'now some text']]);
  });

  it('is an immutable snapshot: a retry after an edit resends the original body byte for byte', async (t) => {
    const h = harness({ webhookAllow: '127.0.0.1', deliveryBackoffMs: 1000 });
    const receiver = await startReceiver((_req, n) => (n === 0 ? 500 : 200));
    t.after(() => receiver.close());
    await subscribe(h, { url: receiver.url, payloadMode: 'text', events: ['recording.created'] });
    const key = h.key();
    const r = await v1Created(h, key, { kind: 'clip', transcript: 'original words' });
    await h.services.webhooks.scheduler.processAll();
    await v1Put(h, key, r.id, { transcript: 'edited words' }, 1);
    h.clock.advance(1000);
    await h.services.webhooks.scheduler.processAll();
    assert.equal(receiver.requests.length, 2);
    assert.equal(receiver.requests[1]!.body, receiver.requests[0]!.body);
    assert.match(receiver.requests[1]!.body, /original words/);
    assert.equal(deliveries(h, r.id)[0]!.status, 'delivered');
  });

  it('a deletion event has empty text fields and null kind and recordedAt', async () => {
    const h = harness({ webhookAllow: '127.0.0.1' });
    await subscribe(h, { url: 'http://127.0.0.1:9/hook', payloadMode: 'text', events: ['recording.deleted'] });
    const key = h.key();
    const r = await v1Created(h, key, { kind: 'memo', title: 'T', transcript: 'words', summary: 'S' });
    await v1Delete(h, key, r.id, 1);
    const [d] = deliveries(h, r.id);
    const body = JSON.parse(d!.body!);
    assert.deepEqual(
      [body.type, body.revision, body.kind, body.recordedAt, body.title, body.transcript, body.summary],
      ['recording.deleted', 2, null, null, '', '', ''],
    );
    assert.equal(d!.status, 'queued', 'the deletion notice itself still goes out');
  });
});

describe('deleting a recording', () => {
  it('erases the stored text of its text deliveries and cancels the ones not delivered yet; default deliveries are untouched', async () => {
    const h = harness({ webhookAllow: '127.0.0.1' });
    const receiver = await startReceiver();
    try {
      const sent = await subscribe(h, { url: receiver.url, payloadMode: 'text', events: ['recording.created'] });
      const queued = await subscribe(h, { url: 'http://127.0.0.1:9/never', payloadMode: 'text', events: ['recording.updated'] });
      const plain = await h.req('POST', '/api/v2/webhooks', { token: h.session, body: { url: 'http://127.0.0.1:9/plain', events: ['recording.created'] } });
      const key = h.key();
      const r = await v1Created(h, key, { kind: 'clip', transcript: 'private words' });
      await h.services.webhooks.scheduler.processAll();
      await v1Put(h, key, r.id, { title: 'still private' }, 1);
      await v1Delete(h, key, r.id, 2);
      const rows = h.services.core.db
        .prepare('SELECT webhook_id, status, body FROM deliveries WHERE recording_id = ? ORDER BY created_at, rowid')
        .all(r.id) as Array<{ webhook_id: string; status: string; body: string | null }>;
      const of = (id: string) => rows.filter((x) => x.webhook_id === id);
      assert.deepEqual(of(sent.id).map((x) => [x.status, x.body]), [['delivered', null]]);
      assert.deepEqual(of(queued.id).map((x) => [x.status, x.body]), [['disabled', null]]);
      assert.equal(of(plain.json.webhook.id).length, 1);
      assert.notEqual(of(plain.json.webhook.id)[0]!.body, null, 'a default payload has no text to erase');
      const all = JSON.stringify(h.services.core.db.prepare('SELECT * FROM deliveries').all());
      assert.equal(/private/.test(all), false);
    } finally {
      await receiver.close();
    }
  });
});
