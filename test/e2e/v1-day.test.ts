// docs/decisions.md §7, §18, §19: a real day of a ring owner, end to end through the v1 API, the outbox, the
// scheduler and a real local receiver that verifies every signature with Stripe's and Standard
// Webhooks' own verifiers.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { harness, type Harness } from '../helpers/harness';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { v1Created, v1Delete, v1Get, v1Processing, v1Put } from '../helpers/v1-client';

interface Payload { id: string; type: string; eventId: string; recordingId: string; revision: number; transcript: string; command?: string; kind: string | null; fetchUrl: string }

/** Bodies received at one path, each verified with that subscription's secret. */
function verified(r: Receiver, path: string, secret: string): Payload[] {
  return r.requests.filter((req) => req.path === path).map((req) => {
    Stripe.webhooks.constructEvent(req.body, String(req.headers['service-signature']), secret, 300);
    const hd = (name: string): string => String(req.headers[name]);
    new Webhook(secret).verify(req.body, { 'webhook-id': hd('webhook-id'), 'webhook-timestamp': hd('webhook-timestamp'), 'webhook-signature': hd('webhook-signature') });
    return JSON.parse(req.body) as Payload;
  });
}

const deliver = (h: Harness) => h.services.webhooks.scheduler.processAll();

describe('a day with the ring, end to end', () => {
  it('hold capture → one signed rule delivery with the command; imports, late metadata, edits, manual send, delete', async (t) => {
    const h = harness({ webhookAllow: '127.0.0.1', publicUrl: 'https://rec.example.net' });
    h.clock.set(Date.now()); // the verifiers compare the signature timestamp with the real clock
    h.session = h.services.auth.createSession(h.accountId).token; // valid at the new time
    h.services.devices.add(h.accountId, { id: 'ring-1', name: 'Ring', model: 'ring' });
    const receiver = await startReceiver();
    t.after(() => receiver.close());
    const sub = await h.req('POST', '/api/v1/webhooks', {
      token: h.session, body: { url: receiver.url, payloadMode: 'text', rules: { prefix: 'Todo', captureInput: 'hold' } },
    });
    assert.equal(sub.status, 200, sub.text);
    const secret: string = sub.json.secret;
    const plain = await h.req('POST', '/api/v2/webhooks', { token: h.session, body: { url: `${receiver.origin}/plain`, events: ['recording.created', 'recording.updated', 'recording.deleted'] } });
    const ruleHits = () => verified(receiver, '/hook', secret);
    const key = h.key();

    // 08:00 a hold on the ring: the app reports a pending capture, then transcribes it.
    const cap = await v1Created(h, h.session, { kind: 'clip', deviceId: 'ring-1', captureInput: 'hold', recordedAt: h.clock.now() });
    assert.deepEqual([cap.kind, cap.status], ['clip', 'pending']);
    const first = await h.req('GET', `/api/v1/recordings/${cap.id}/deliveries`, { token: h.session });
    assert.deepEqual(first.json.pendingCaptureEvaluations.map((e: { status: string }) => e.status), ['pending_transcription']);
    assert.equal((await v1Processing(h, h.session, cap.id, { status: 'transcribing' })).status, 200);
    await deliver(h);
    assert.equal(receiver.requests.length, 0, 'a metadata-only capture announces nothing');
    const saved = await v1Put(h, h.session, cap.id, { transcript: 'Todo buy milk' }, 2);
    assert.equal(saved.status, 200, saved.text);
    await deliver(h);
    const rules1 = ruleHits();
    assert.equal(rules1.length, 1);
    assert.deepEqual(
      [rules1[0]!.type, rules1[0]!.command, rules1[0]!.transcript, rules1[0]!.recordingId, rules1[0]!.fetchUrl],
      ['recording.transcript_ready', 'buy milk', 'Todo buy milk', cap.id, `https://rec.example.net/api/v1/recordings/${cap.id}`],
    );

    // 09:00 an integration imports the same text with an API key: no rule delivery.
    const imported = await v1Created(h, key, { kind: 'clip', deviceId: 'ring-1', captureInput: 'hold', transcript: 'Todo buy milk' });
    await deliver(h);
    assert.equal(ruleHits().length, 1);

    // 10:00 a capture whose input is reported after the transcript: the delivery waits, then fires.
    const late = await v1Created(h, h.session, { kind: 'clip', deviceId: 'ring-1', transcript: 'Todo call the plumber' });
    await deliver(h);
    const waiting = await h.req('GET', `/api/v1/recordings/${late.id}/deliveries`, { token: h.session });
    assert.deepEqual(waiting.json.pendingCaptureEvaluations.map((e: { status: string }) => e.status), ['waiting_for_capture_input']);
    assert.equal(ruleHits().length, 1);
    assert.equal((await v1Processing(h, h.session, late.id, { status: 'ready', captureInput: 'hold' })).status, 200);
    await deliver(h);
    assert.deepEqual(ruleHits().map((b) => b.command), ['buy milk', 'call the plumber']);

    // 11:00 the owner edits the first capture: no second rule delivery.
    await v1Put(h, h.session, cap.id, { transcript: 'Todo buy oat milk' }, 3);
    await deliver(h);
    assert.equal(ruleHits().length, 2);

    // 12:00 a manual send of the edited capture: a manual_ event, delivered.
    const manual = await h.req('POST', `/api/v1/recordings/${cap.id}/deliveries`, {
      token: h.session, headers: { 'idempotency-key': 'resend-1' }, body: { webhookId: sub.json.webhook.id, expectedRevision: 4 },
    });
    assert.equal(manual.status, 200, manual.text);
    await deliver(h);
    const manualBody = ruleHits().find((b) => b.type === 'recording.manual');
    assert.ok(manualBody);
    assert.match(manualBody.eventId, /^manual_/);
    assert.deepEqual([manualBody.transcript, 'command' in manualBody], ['Todo buy oat milk', false]);
    const listed = await h.req('GET', `/api/v1/recordings/${cap.id}/deliveries`, { token: h.session });
    assert.deepEqual(
      listed.json.deliveries.filter((d: { webhookId: string }) => d.webhookId === sub.json.webhook.id).map((d: { type: string; status: string }) => [d.type, d.status]),
      [['recording.transcript_ready', 'delivered'], ['recording.manual', 'delivered']],
    );

    // v1 writes are v2 writes: v2 reads, the v2 feed and the v2 subscription see them; and back.
    const v2 = await h.req('GET', `/api/v2/recordings/${cap.id}`, { token: key });
    assert.deepEqual([v2.json.recording.type, v2.json.recording.transcript, v2.json.recording.deviceId], ['clip', 'Todo buy oat milk', 'ring-1']);
    const feed = await h.req('GET', '/api/v2/events?limit=1000', { token: key });
    const capEvents = feed.json.events.filter((e: { recordingId: string }) => e.recordingId === cap.id).map((e: { type: string }) => e.type);
    assert.deepEqual(capEvents, ['recording.created', 'recording.transcript_ready', 'recording.updated', 'recording.transcript_ready']);
    assert.equal(feed.json.events.some((e: { id: string }) => e.id.startsWith('manual_')), false, 'manual sends are not in the feed');
    const plainIds = verified(receiver, '/plain', plain.json.secret).map((b) => b.recordingId);
    assert.ok(plainIds.includes(cap.id) && plainIds.includes(imported.id), 'the v2 subscription got the v1 writes');
    const v2Patched = await h.req('PATCH', `/api/v2/recordings/${imported.id}`, { token: key, body: { title: 'From v2' }, headers: { 'if-match': '"1"' } });
    assert.equal(v2Patched.status, 200);
    assert.equal((await v1Get(h, key, imported.id)).json.recording.title, 'From v2');

    // 18:00 the owner deletes the first capture: the stored delivery text is erased.
    assert.equal((await v1Delete(h, h.session, cap.id, 4)).status, 200);
    const rows = h.services.core.db.prepare('SELECT body FROM deliveries WHERE recording_id = ?').all(cap.id) as Array<{ body: string | null }>;
    assert.ok(rows.length >= 3);
    assert.equal(rows.some((r) => r.body !== null && /milk/.test(r.body)), false, 'no delivery body keeps the text');
    const ruleRows = h.services.core.db.prepare("SELECT body FROM deliveries WHERE recording_id = ? AND kind IN ('rule', 'manual')").all(cap.id) as Array<{ body: string | null }>;
    assert.deepEqual(ruleRows.map((r) => r.body), [null, null]);
  });
});
