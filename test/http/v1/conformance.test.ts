// Conformance: docs/decisions.md §7 ("every v1 success response is 200"), docs/decisions.md §5 (If-Match forms
// "everywhere (v1, v2, device settings)") and Limits ("120 requests per minute per key", which the
// v1 interface shares with v2: one budget per key).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { harness } from '../../helpers/harness';
import { v1Created, v1Delete, v1Get, v1Put } from '../../helpers/v1-client';

describe('docs/decisions.md §7: every v1 success response is 200', () => {
  it('every v1 operation, used successfully, answers 200 (creates, deletes and manual sends included)', async () => {
    const h = harness({ webhookAllow: '127.0.0.1' });
    h.services.devices.add(h.accountId, { id: 'ring-1', name: 'Ring', model: 'ring' });
    const key = h.key();
    const s = h.session;
    const statuses: Array<[string, number]> = [];
    const step = async (name: string, res: Promise<{ status: number; text: string }>) => {
      const r = await res;
      statuses.push([name, r.status]);
      assert.equal(r.status, 200, `${name}: ${r.text}`);
      return r as Awaited<typeof res> & { json: any }; // eslint-disable-line @typescript-eslint/no-explicit-any -- response shapes vary
    };

    await step('listDevices', h.req('GET', '/api/v1/devices', { token: key }));
    const created = await step('createRecording', h.req('POST', '/api/v1/recordings', { token: key, body: { kind: 'memo', transcript: 'hello' }, headers: { 'idempotency-key': 'c-1' } }));
    const id = created.json.recording.id as string;
    await step('createRecording (replay)', h.req('POST', '/api/v1/recordings', { token: key, body: { kind: 'memo', transcript: 'hello' }, headers: { 'idempotency-key': 'c-1' } }));
    await step('listRecordings', h.req('GET', '/api/v1/recordings', { token: key }));
    await step('latestClip', h.req('GET', '/api/v1/recordings/latest-clip', { token: key }));
    await step('getRecording', h.req('GET', `/api/v1/recordings/${id}`, { token: key }));
    await step('updateRecording', h.req('PUT', `/api/v1/recordings/${id}`, { token: key, body: { title: 'greeting' }, headers: { 'if-match': '"1"' } }));
    await step('putProcessing', h.req('PUT', `/api/v1/recordings/${id}/processing`, { token: key, body: { status: 'ready', message: 'done' } }));
    await step('putAudioAsset', h.req('PUT', `/api/v1/recordings/${id}/audio-assets`, { token: key, body: { clientId: 'phone-1', fileId: 'f-1' } }));
    await step('getInputMappings', h.req('GET', '/api/v1/input-mappings', { token: key }));
    await step('putInputMappings', h.req('POST', '/api/v1/input-mappings', { token: key, body: { revisions: [{ id: 'map-1', deviceId: 'ring-1', inputs: { hold: 'memo' } }] } }));
    await step('listEvents', h.req('GET', '/api/v1/events', { token: key }));
    await step('listTokens', h.req('GET', '/api/v1/tokens', { token: s }));
    await step('createToken', h.req('POST', '/api/v1/tokens', { token: s, body: { name: 'tok', scopes: ['events:read'] } }));
    const hook = await step('POST /webhooks', h.req('POST', '/api/v1/webhooks', { token: s, body: { url: 'http://127.0.0.1:9/hook', payloadMode: 'text', events: ['recording.updated'] } }));
    const revision = (await v1Get(h, key, id)).json.recording.revision as number;
    const manual = { webhookId: hook.json.webhook.id, expectedRevision: revision };
    await step('POST deliveries', h.req('POST', `/api/v1/recordings/${id}/deliveries`, { token: s, body: manual, headers: { 'idempotency-key': 'm-1' } }));
    await step('POST deliveries (replay)', h.req('POST', `/api/v1/recordings/${id}/deliveries`, { token: s, body: manual, headers: { 'idempotency-key': 'm-1' } }));
    await step('GET deliveries', h.req('GET', `/api/v1/recordings/${id}/deliveries`, { token: s }));
    await step('deleteRecording', h.req('DELETE', `/api/v1/recordings/${id}`, { token: key, headers: { 'if-match': String(revision) } }));
    assert.equal(statuses.length, 19);
  });

  // docs/decisions.md §8 (fixed) gives the web app's two v1 additions other statuses, and the /api/session
  // routes (outside /api/v1, described in this document too) keep theirs.
  const CONTRACT_8 = new Map([['DELETE /webhooks/{id}', '204'], ['POST /webhooks/{id}/test', '202']]);

  it('the v1 OpenAPI document declares 200 as the only success status of every operation (but the ones docs/decisions.md §8 fixes)', async () => {
    const h = harness();
    const doc = (await h.req('GET', '/api/v1/openapi.json')).json;
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>)) {
      if (item.servers) continue;
      for (const [method, op] of Object.entries(item)) {
        const success = Object.keys(op.responses).filter((s) => /^[23]\d\d$/.test(s));
        const name = `${method.toUpperCase()} ${path}`;
        assert.deepEqual(success, [CONTRACT_8.get(name) ?? '200'], name);
      }
    }
  });
});

describe('docs/decisions.md §5: v1 If-Match accepts "3", W/"3" and 3 like v2', () => {
  it('updateRecording, putProcessing and deleteRecording take every form; a stale one is 412, a malformed one 400', async () => {
    const h = harness();
    const key = h.key();
    const r = await v1Created(h, key, { kind: 'memo', title: 'a' });
    assert.equal((await v1Put(h, key, r.id, { title: 'b' }, '"1"')).status, 200);
    const weak = await v1Put(h, key, r.id, { title: 'c' }, 'W/"2"');
    assert.equal(weak.status, 200, weak.text);
    assert.equal(weak.headers.get('etag'), '"3"');
    const processing = await h.req('PUT', `/api/v1/recordings/${r.id}/processing`, { token: key, body: { status: 'transcribing' }, headers: { 'if-match': '3' } });
    assert.equal(processing.status, 200, processing.text);
    const stale = await v1Put(h, key, r.id, { title: 'd' }, '3');
    assert.equal(stale.status, 412);
    assert.equal(stale.json.error.code, 'precondition_failed');
    const malformed = await v1Put(h, key, r.id, { title: 'd' }, '*');
    assert.equal(malformed.status, 400);
    assert.equal(malformed.json.error.code, 'invalid_request');
    assert.match(malformed.json.error.message, /If-Match/);
    assert.equal((await v1Delete(h, key, r.id, '4')).status, 200);
  });
});

describe('Limits: 120 requests per minute per key, on v1 as on v2', () => {
  it('the 121st v1 request of a key within a minute is 429 with Retry-After; v1 and v2 share the key budget; another key is unaffected', async () => {
    const h = harness();
    const key = h.key();
    for (let i = 0; i < 60; i++) assert.equal((await h.req('GET', '/api/v1/events', { token: key })).status, 200);
    for (let i = 0; i < 60; i++) assert.equal((await h.req('GET', '/api/v2/events', { token: key })).status, 200);
    const limited = await h.req('GET', '/api/v1/events', { token: key });
    assert.equal(limited.status, 429);
    assert.equal(limited.json.error.code, 'rate_limited');
    assert.match(limited.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
    assert.ok(limited.headers.get('x-request-id'));
    assert.equal((await h.req('GET', '/api/v2/events', { token: key })).status, 429, 'v2 sees the same budget');
    assert.equal((await h.req('GET', '/api/v1/events', { token: h.key() })).status, 200, 'another key has its own budget');
    h.clock.advance(60_000);
    assert.equal((await h.req('GET', '/api/v1/events', { token: key })).status, 200, 'the window has passed');
  });

  it('a v1 token made with POST /tokens is limited like any key', async () => {
    const h = harness();
    const made = await h.req('POST', '/api/v1/tokens', { token: h.session, body: { name: 't', scopes: ['recordings:read'] } });
    const token = made.json.secret as string;
    for (let i = 0; i < 120; i++) assert.equal((await h.req('GET', '/api/v1/recordings', { token })).status, 200);
    const limited = await h.req('GET', '/api/v1/recordings/latest-clip', { token });
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get('ratelimit-remaining'), '0');
  });
});
