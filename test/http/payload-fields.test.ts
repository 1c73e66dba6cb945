// Conformance: create headers (docs/decisions.md §5 Location, ETag, Idempotent-Replayed), the event feed
// and webhook payloads carrying exactly their listed fields and never text (docs/decisions.md
// §17, §18), and the ten-subscription limit counting every active subscription (§18).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { harness, type Harness } from '../helpers/harness';
import { create, patch, remove } from '../helpers/recording-client';
import { v1Create, v1Created, v1Put } from '../helpers/v1-client';

const DEFAULT_FIELDS = ['id', 'type', 'recordingId', 'revision', 'createdAt'];
const TEXT_FIELDS = [...DEFAULT_FIELDS, 'eventId', 'kind', 'title', 'transcript', 'summary', 'recordedAt', 'fetchUrl'];
const SECRET_WORDS = ['zanzibarword', 'quokkaword', 'marmotword'];

const bodies = (h: Harness, recordingId: string) =>
  h.services.webhooks.deliveries.forRecording(h.accountId, recordingId).map((d) => ({ webhookId: d.webhook_id, body: d.body === null ? null : (JSON.parse(d.body) as Record<string, unknown>) }));

async function subscribe(h: Harness, version: 'v1' | 'v2', body: Record<string, unknown>): Promise<string> {
  const res = await h.req('POST', `/api/${version}/webhooks`, { token: h.session, body: { url: 'http://127.0.0.1:9/hook', ...body } });
  assert.ok(res.status === 200 || res.status === 201, res.text);
  return res.json.webhook.id;
}

describe('docs/decisions.md §5: create headers', () => {
  it('a first create has Location (which reads the recording back) and ETag, and no Idempotent-Replayed; only the replay carries it', async () => {
    const h = harness();
    const key = h.key();
    const first = await create(h, key, { type: 'clip', transcript: 'x' }, 'loc-1');
    assert.equal(first.status, 201);
    assert.equal(first.headers.get('idempotent-replayed'), null);
    assert.equal(first.headers.get('etag'), '"1"');
    const location = first.headers.get('location') ?? '';
    const read = await h.req('GET', location, { token: key });
    assert.equal(read.status, 200);
    assert.deepEqual(read.json, first.json);
    const replay = await create(h, key, { type: 'clip', transcript: 'x' }, 'loc-1');
    assert.equal(replay.status, 200);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');

    const v1 = await v1Create(h, key, { kind: 'clip', transcript: 'y' }, 'loc-2');
    assert.equal(v1.headers.get('idempotent-replayed'), null);
    const v1Read = await h.req('GET', v1.headers.get('location') ?? '', { token: key });
    assert.equal(v1Read.status, 200);
    assert.equal(v1Read.json.recording.id, v1.json.recording.id);
  });
});

describe('docs/decisions.md §17: the feed and the default payload carry exactly the listed fields and never text', () => {
  it('v2 and v1 feed items and default deliveries have only id, type, recordingId, revision, createdAt; no title, transcript or summary words anywhere', async () => {
    const h = harness({ webhookAllow: '127.0.0.1' });
    await subscribe(h, 'v2', { events: ['recording.created', 'recording.updated', 'recording.deleted'] });
    const key = h.key();
    const [title, transcript, summary] = SECRET_WORDS;
    const r = (await create(h, key, { type: 'memo', title, transcript, summary, audio: [{ clientId: 'clientaudioref', fileId: 'fileaudioref' }] })).json.recording;
    await patch(h, key, r.id, { transcript: `${transcript} again` }, '"1"');
    await remove(h, key, r.id, '"2"');

    const v2 = await h.req('GET', '/api/v2/events', { token: key });
    const v1 = await h.req('GET', '/api/v1/events', { token: key });
    const items = [...v2.json.events, ...v1.json.events, ...bodies(h, r.id).map((b) => b.body)];
    // created, transcript_ready, updated, transcript_ready, deleted in each feed; three default deliveries.
    assert.equal(items.length, 5 + 5 + 3);
    for (const item of items) assert.deepEqual(Object.keys(item), DEFAULT_FIELDS);
    const all = v2.text + v1.text + JSON.stringify(bodies(h, r.id));
    for (const word of [...SECRET_WORDS, 'clientaudioref', 'fileaudioref', 'rlk_', 'rls_', 'whsec_']) assert.equal(all.includes(word), false, word);
  });

  it('Feed 4: events stay after the recording is deleted', async () => {
    const h = harness();
    const key = h.key();
    const r = (await create(h, key, { type: 'clip', transcript: 'keep the history' })).json.recording;
    await patch(h, key, r.id, { title: 't' }, '"1"');
    await remove(h, key, r.id, '"2"');
    const types = (await h.req('GET', '/api/v2/events', { token: key })).json.events.map((e: { type: string; revision: number }) => `${e.type}@${e.revision}`);
    assert.deepEqual(types, ['recording.created@1', 'recording.transcript_ready@1', 'recording.updated@2', 'recording.deleted@3']);
  });

  it('recording.manual is never in the v2 or v1 feed', async () => {
    const h = harness({ webhookAllow: '127.0.0.1' });
    const hook = await subscribe(h, 'v2', { events: ['recording.created'] });
    const key = h.key();
    const r = await v1Created(h, key, { kind: 'clip', transcript: 'x' });
    const sent = await h.req('POST', `/api/v1/recordings/${r.id}/deliveries`, { token: h.session, body: { webhookId: hook, expectedRevision: 1 }, headers: { 'idempotency-key': 'k' } });
    assert.equal(sent.status, 200);
    assert.match(sent.json.delivery.eventId, /^manual_/);
    const v2 = (await h.req('GET', '/api/v2/events?limit=1000', { token: key })).json.events.map((e: { type: string }) => e.type);
    const v1 = (await h.req('GET', '/api/v1/events?limit=1000', { token: key })).json.events.map((e: { type: string }) => e.type);
    assert.deepEqual(v2, ['recording.created', 'recording.transcript_ready']);
    assert.deepEqual(v1, v2);
  });
});

describe('docs/decisions.md §18 text payload: exactly the default fields plus the listed text fields', () => {
  it('an event delivery has exactly the text fields; a capture-rule delivery adds only command', async () => {
    const h = harness({ webhookAllow: '127.0.0.1' });
    h.services.devices.add(h.accountId, { id: 'ring-1', name: 'Ring', model: 'ring' });
    const events = await subscribe(h, 'v1', { payloadMode: 'text', events: ['recording.created'] });
    const rule = await subscribe(h, 'v1', { payloadMode: 'text', rules: { prefix: 'todo' } });
    const cap = await v1Created(h, h.session, { kind: 'clip', deviceId: 'ring-1', captureInput: 'hold' });
    await v1Put(h, h.session, cap.id, { transcript: 'Todo buy milk' }, 1);
    const got = bodies(h, cap.id);
    const ofEvents = got.find((b) => b.webhookId === events)!.body!;
    const ofRule = got.find((b) => b.webhookId === rule)!.body!;
    assert.deepEqual(Object.keys(ofEvents), TEXT_FIELDS);
    assert.deepEqual(Object.keys(ofRule), [...TEXT_FIELDS, 'command']);
    assert.equal(ofRule.command, 'buy milk');
    assert.equal(ofRule.transcript, 'Todo buy milk');
    for (const body of [ofEvents, ofRule]) {
      assert.equal(typeof body.eventId, 'string');
      assert.equal(typeof body.recordedAt, 'number');
      assert.equal(body.fetchUrl, `${h.config.publicUrl}/api/v1/recordings/${cap.id}`);
    }
  });

  it('a deletion text payload has the same fields with empty text and null kind and recordedAt', async () => {
    const h = harness({ webhookAllow: '127.0.0.1' });
    await subscribe(h, 'v1', { payloadMode: 'text', events: ['recording.deleted'] });
    const key = h.key();
    const r = await v1Created(h, key, { kind: 'memo', title: 'T', transcript: 'words', summary: 'S' });
    await h.req('DELETE', `/api/v1/recordings/${r.id}`, { token: key, headers: { 'if-match': '1' } });
    const [deleted] = bodies(h, r.id);
    assert.deepEqual(Object.keys(deleted!.body!), TEXT_FIELDS);
    assert.deepEqual(
      [deleted!.body!.kind, deleted!.body!.recordedAt, deleted!.body!.title, deleted!.body!.transcript, deleted!.body!.summary],
      [null, null, '', '', ''],
    );
  });
});

describe('docs/decisions.md §18: at most ten active subscriptions', () => {
  it('text-mode subscriptions count toward the ten although the v2 list leaves them out; disabled ones do not count', async () => {
    const h = harness({ webhookAllow: '127.0.0.1' });
    const text: string[] = [];
    for (let i = 0; i < 5; i++) text.push(await subscribe(h, 'v1', { payloadMode: 'text', events: ['recording.created'] }));
    for (let i = 0; i < 5; i++) await subscribe(h, 'v2', { events: ['recording.created'] });
    assert.equal((await h.req('GET', '/api/v2/webhooks', { token: h.session })).json.webhooks.length, 5);
    const eleventh = await h.req('POST', '/api/v2/webhooks', { token: h.session, body: { url: 'http://127.0.0.1:9/x', events: ['recording.created'] } });
    assert.equal(eleventh.status, 409);
    assert.equal(eleventh.json.error.code, 'limit_reached');
    const v1Eleventh = await h.req('POST', '/api/v1/webhooks', { token: h.session, body: { url: 'http://127.0.0.1:9/x', payloadMode: 'text', events: ['recording.created'] } });
    assert.equal(v1Eleventh.status, 409);
    assert.equal((await h.req('DELETE', `/api/v2/webhooks/${text[0]}`, { token: h.session })).status, 204);
    assert.equal((await h.req('POST', '/api/v2/webhooks', { token: h.session, body: { url: 'http://127.0.0.1:9/x', events: ['recording.created'] } })).status, 201);
  });
});
