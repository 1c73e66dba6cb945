// End to end through the HTTP API: recording writes → events → outbox → scheduler → a real
// receiver, with signatures checked the way a subscriber would.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Stripe from 'stripe';
import { harness } from '../helpers/harness';
import { startReceiver } from '../helpers/receiver';

describe('webhooks end to end', () => {
  test('create, edit and delete a recording through the v2 API: the subscriber gets created, updated, deleted with the feed ids, signed', async (t) => {
    const h = harness({ webhookAllow: '127.0.0.1' });
    h.clock.set(Date.now()); // Stripe's verifier compares the timestamp with the real clock
    const session = h.services.auth.createSession(h.accountId).token;
    const receiver = await startReceiver();
    t.after(() => receiver.close());
    const sub = await h.req('POST', '/api/v2/webhooks', {
      token: session,
      body: { url: receiver.url, events: ['recording.created', 'recording.updated', 'recording.deleted'] },
    });
    assert.equal(sub.status, 201);
    const key = h.key();

    const made = await h.req('POST', '/api/v2/recordings', {
      token: key, headers: { 'idempotency-key': 'e2e-1' }, body: { type: 'clip', title: 'Groceries', transcript: 'buy milk' },
    });
    assert.equal(made.status, 201);
    const id: string = made.json.recording.id;
    const edited = await h.req('PATCH', `/api/v2/recordings/${id}`, { token: key, headers: { 'if-match': made.headers.get('etag') ?? '' }, body: { title: 'Shopping' } });
    assert.equal(edited.status, 200);
    const gone = await h.req('DELETE', `/api/v2/recordings/${id}`, { token: key, headers: { 'if-match': edited.headers.get('etag') ?? '' } });
    assert.equal(gone.status, 204);

    await h.services.webhooks.scheduler.processAll();
    const feed = await h.req('GET', '/api/v2/events', { token: key });
    const wanted = feed.json.events.filter((e: { type: string }) => ['recording.created', 'recording.updated', 'recording.deleted'].includes(e.type));
    assert.deepEqual(wanted.map((e: { type: string }) => e.type), ['recording.created', 'recording.updated', 'recording.deleted']);
    // At least once, maybe out of order: compare as sets keyed by the event id.
    const byId = new Map(receiver.bodies<{ id: string }>().map((b) => [b.id, b]));
    assert.deepEqual([...byId.values()].sort((a, b) => Number(a.id) - Number(b.id)), wanted);
    for (const req of receiver.requests) {
      Stripe.webhooks.constructEvent(req.body, String(req.headers['service-signature']), sub.json.secret, 300);
      assert.equal(/buy milk|Groceries|Shopping/.test(req.body), false, 'the default payload carries no text');
      assert.equal(req.body.includes(key), false);
    }
  });
});
