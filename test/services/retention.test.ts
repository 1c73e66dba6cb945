// Conformance: what is kept and what is erased. docs/decisions.md §14 ("idempotency keys are kept
// as long as the recording: a device app may retry after days offline") and §18 with
// docs/decisions.md §5 (deleting a recording erases its text everywhere, including the snapshot a
// capture rule holds while it waits for the capture input).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { harness } from '../helpers/harness';
import { create } from '../helpers/recording-client';
import { v1Create, v1Created, v1Delete, v1Put } from '../helpers/v1-client';

describe('idempotency keys live as long as the recording', () => {
  it('a key retrying 300 days later still gets the replay (v2 and v1), and 410 once the recording is deleted', async () => {
    const h = harness();
    const key = h.services.auth.createKey(h.accountId, { name: 'long-lived', permissions: ['recordings:create', 'recordings:read', 'recordings:delete'], expiry: 365 }).secret;
    const first = await create(h, key, { type: 'memo', transcript: 'offline for a while' }, 'long-retry');
    const v1First = await v1Create(h, key, { kind: 'clip', transcript: 'also offline' }, 'long-retry-v1');
    h.clock.advance(300 * 86_400_000);
    const again = await create(h, key, { type: 'memo', transcript: 'offline for a while' }, 'long-retry');
    assert.equal(again.status, 200, again.text);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(again.json.recording.id, first.json.recording.id);
    const v1Again = await v1Create(h, key, { kind: 'clip', transcript: 'also offline' }, 'long-retry-v1');
    assert.deepEqual([v1Again.status, v1Again.json.recording.id], [200, v1First.json.recording.id]);
    await h.req('DELETE', `/api/v2/recordings/${first.json.recording.id}`, { token: key, headers: { 'if-match': '1' } });
    assert.equal((await create(h, key, { type: 'memo', transcript: 'offline for a while' }, 'long-retry')).status, 410);
  });

  it('a session (the app identity, which does not expire with a key) replays a create made 400 days earlier', async () => {
    const h = harness();
    const first = await v1Create(h, h.session, { kind: 'memo', transcript: 'captured offline' }, 'app-retry');
    assert.equal(first.status, 200);
    h.clock.advance(400 * 86_400_000);
    const session = h.services.auth.createSession(h.accountId).token;
    const again = await v1Create(h, session, { kind: 'memo', transcript: 'captured offline' }, 'app-retry');
    assert.equal(again.status, 200);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(again.json.recording.id, first.json.recording.id);
    await v1Delete(h, session, first.json.recording.id, 1);
    const gone = await v1Create(h, session, { kind: 'memo', transcript: 'captured offline' }, 'app-retry');
    assert.equal(gone.status, 410);
    assert.equal(gone.json.error.code, 'gone');
  });
});

describe('deleting a recording erases the text a waiting capture rule holds', () => {
  it('a snapshot waiting for the capture input is dropped with the recording: no text left in evaluations or deliveries', async () => {
    const h = harness({ webhookAllow: '127.0.0.1' });
    h.services.devices.add(h.accountId, { id: 'ring-1', name: 'Ring', model: 'ring' });
    const hook = await h.req('POST', '/api/v1/webhooks', { token: h.session, body: { url: 'http://127.0.0.1:9/hook', payloadMode: 'text', rules: { prefix: 'todo', captureInput: 'hold' } } });
    assert.equal(hook.status, 200, hook.text);
    const cap = await v1Created(h, h.session, { kind: 'clip', deviceId: 'ring-1' });
    await v1Put(h, h.session, cap.id, { transcript: 'Todo whisperedsecret' }, 1);
    const waiting = await h.req('GET', `/api/v1/recordings/${cap.id}/deliveries`, { token: h.session });
    assert.deepEqual(waiting.json.pendingCaptureEvaluations.map((e: { status: string }) => e.status), ['waiting_for_capture_input']);
    const dump = () => JSON.stringify([h.services.core.db.prepare('SELECT * FROM capture_evaluations').all(), h.services.core.db.prepare('SELECT * FROM deliveries').all()]);
    assert.match(dump(), /whisperedsecret/, 'the snapshot is stored while it waits');
    assert.equal((await v1Delete(h, h.session, cap.id, 2)).status, 200);
    assert.doesNotMatch(dump(), /whisperedsecret/);
    assert.deepEqual(h.services.core.db.prepare('SELECT count(*) AS n FROM capture_evaluations').get(), { n: 0 });
  });
});
