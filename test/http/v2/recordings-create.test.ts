// POST /api/v2/recordings: docs/decisions.md §13, §14 and §5.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_RECORDED_AT } from '../../../src/services/recording-model';
import { harness } from '../../helpers/harness';
import { assertError, create, created, get, newKey, patch, remove } from '../../helpers/recording-client';

describe('POST /recordings creates', () => {
  it('answers 201 with Location, ETag "1" and exactly the spec fields', async () => {
    const h = harness();
    const token = h.key();
    const body = {
      type: 'memo', title: 'Standup', transcript: 'We shipped it', summary: 'Shipped', recordedAt: 1_700_000_000_123,
      externalId: 'ext-1', audio: [{ clientId: 'phone-1', fileId: 'f-1' }],
    };
    const res = await create(h, token, body);
    assert.equal(res.status, 201, res.text);
    const rec = res.json.recording;
    assert.equal(res.headers.get('etag'), '"1"');
    assert.equal(res.headers.get('location'), `/api/v2/recordings/${rec.id}`);
    assert.match(rec.id, /^rec_[A-Za-z0-9]{20}$/);
    assert.deepEqual(res.json, {
      recording: {
        id: rec.id, type: 'memo', title: 'Standup', transcript: 'We shipped it', summary: 'Shipped', recordedAt: 1_700_000_000_123,
        updatedAt: h.clock.now(), revision: 1, status: 'ready', pinned: false, audio: [{ clientId: 'phone-1', fileId: 'f-1' }], externalId: 'ext-1',
      },
    });
    assert.deepEqual((await get(h, token, rec.id)).json, res.json);
  });

  it('unset title, transcript and summary are "", deviceId and externalId are omitted, audio is []', async () => {
    const h = harness();
    const rec = await created(h, h.key(), { type: 'clip' });
    assert.deepEqual(Object.keys(rec), ['id', 'type', 'title', 'transcript', 'summary', 'recordedAt', 'updatedAt', 'revision', 'status', 'pinned', 'audio']);
    assert.equal(rec.title, '');
    assert.equal(rec.transcript, '');
    assert.equal(rec.summary, '');
    assert.deepEqual(rec.audio, []);
  });

  it('recordedAt defaults to the time of the create', async () => {
    const h = harness();
    h.clock.set(1_750_000_000_000);
    assert.equal((await created(h, h.key(), { type: 'clip' })).recordedAt, 1_750_000_000_000);
  });

  it('status is ready with a nonempty transcript, else pending', async () => {
    const h = harness();
    const token = h.key();
    assert.equal((await created(h, token, { type: 'clip', transcript: 'hi' })).status, 'ready');
    assert.equal((await created(h, token, { type: 'clip', transcript: '' })).status, 'pending');
    assert.equal((await created(h, token, { type: 'memo', title: 'only a title' })).status, 'pending');
  });

  it('a caller without recordings:read gets only { id, revision } back', async () => {
    const h = harness();
    const res = await create(h, h.key(['recordings:create']), { type: 'clip', transcript: 'secret' });
    assert.equal(res.status, 201);
    assert.deepEqual(Object.keys(res.json.recording), ['id', 'revision']);
    assert.equal(res.json.recording.revision, 1);
  });
});

describe('POST /recordings is idempotent', () => {
  it('Idempotency-Key is required', async () => {
    const h = harness();
    const res = await h.req('POST', '/api/v2/recordings', { token: h.key(), body: { type: 'clip' } });
    assertError(res, 400, 'invalid_request', 'Idempotency-Key');
  });

  it('Idempotency-Key is 1-255 characters', async () => {
    const h = harness();
    const token = h.key();
    assertError(await create(h, token, { type: 'clip' }, 'k'.repeat(256)), 400, 'invalid_request', 'Idempotency-Key');
    assert.equal((await create(h, token, { type: 'clip' }, 'k'.repeat(255))).status, 201);
  });

  it('the same key and body replays 200 with Idempotent-Replayed and the recording as it is now', async () => {
    const h = harness();
    const token = h.key();
    const first = await create(h, token, { type: 'clip', transcript: 'buy milk' }, 'retry-1');
    const id = first.json.recording.id;
    assert.equal((await patch(h, token, id, { title: 'Edited later' }, '"1"')).status, 200);
    const again = await create(h, token, { type: 'clip', transcript: 'buy milk' }, 'retry-1');
    assert.equal(again.status, 200, again.text);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(again.headers.get('etag'), '"2"');
    assert.equal(again.json.recording.id, id);
    assert.equal(again.json.recording.title, 'Edited later', 'edits are kept, not overwritten');
    const count = h.services.core.db.prepare('SELECT count(*) AS n FROM recordings').get() as { n: number };
    assert.equal(count.n, 1, 'no duplicate');
  });

  it('key order in the body does not make it another body', async () => {
    const h = harness();
    const token = h.key();
    await create(h, token, { type: 'memo', title: 't', audio: [{ clientId: 'c', fileId: 'f' }] }, 'order');
    const again = await create(h, token, { audio: [{ fileId: 'f', clientId: 'c' }], title: 't', type: 'memo' }, 'order');
    assert.equal(again.status, 200, again.text);
  });

  it('the same key with another body gives 409 idempotency_conflict', async () => {
    const h = harness();
    const token = h.key();
    await create(h, token, { type: 'clip', transcript: 'one' }, 'same');
    assertError(await create(h, token, { type: 'clip', transcript: 'two' }, 'same'), 409, 'idempotency_conflict');
  });

  it('a retry of a deleted recording gives 410, whatever the body', async () => {
    const h = harness();
    const token = h.key();
    const id = (await create(h, token, { type: 'clip' }, 'gone')).json.recording.id;
    assert.equal((await remove(h, token, id, '"1"')).status, 204);
    assertError(await create(h, token, { type: 'clip' }, 'gone'), 410, 'gone');
    assertError(await create(h, token, { type: 'memo' }, 'gone'), 410, 'gone');
  });

  it('the same externalId and body under another key reuses the recording', async () => {
    const h = harness();
    const token = h.key();
    const body = { type: 'memo', transcript: 'imported', externalId: 'notes-42' };
    const first = await create(h, token, body, 'import-a');
    const again = await create(h, token, body, 'import-b');
    assert.equal(again.status, 200, again.text);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(again.json.recording.id, first.json.recording.id);
    // The second key now names the same recording.
    assertError(await create(h, token, { type: 'clip' }, 'import-b'), 409, 'idempotency_conflict');
  });

  it('the same externalId with another body gives 409 idempotency_conflict', async () => {
    const h = harness();
    const token = h.key();
    await create(h, token, { type: 'memo', transcript: 'v1', externalId: 'notes-7' });
    assertError(await create(h, token, { type: 'memo', transcript: 'v2', externalId: 'notes-7' }), 409, 'idempotency_conflict', 'externalId');
  });

  it('a repeated import of a deleted externalId gives 410', async () => {
    const h = harness();
    const token = h.key();
    const body = { type: 'memo', externalId: 'notes-9' };
    const id = (await create(h, token, body)).json.recording.id;
    await remove(h, token, id, '1');
    assertError(await create(h, token, body), 410, 'gone');
  });

  it('keys and external ids are scoped to the integration identity of the key', async () => {
    const h = harness();
    const a = h.key();
    const b = h.key();
    const body = { type: 'memo', externalId: 'shared-ext' };
    const first = await create(h, a, body, 'shared-key');
    const other = await create(h, b, body, 'shared-key');
    assert.equal(other.status, 201, 'a new key is a new identity: its first use creates');
    assert.notEqual(other.json.recording.id, first.json.recording.id);
    assert.equal((await create(h, h.session, { type: 'clip' }, 'shared-key')).status, 201, 'the app identity is another scope too');
  });
});

describe('POST /recordings validates', () => {
  it('audio is accepted on a memo only; a clip with audio is 400', async () => {
    const h = harness();
    const token = h.key();
    assertError(await create(h, token, { type: 'clip', audio: [{ clientId: 'c', fileId: 'f' }] }), 400, 'invalid_request', 'audio');
    assert.deepEqual((await created(h, token, { type: 'clip', audio: [] })).audio, []);
  });

  const urls = ['sftp:files.example.com:recordings:a.m4a', 'SMB:nas:share:a.m4a', 'rtsp:cam.local:554', 'ipfs:QmXoypiz', 'javascript:void', 'C:a.m4a'];
  for (const bad of ['/data/a.m4a', 'https://cdn.example/a.m4a', 'file:a.m4a', 'data:audio/mp4;base64,AAAA', 'C:\\a.m4a', '../a', '', 'x'.repeat(257), ...urls]) {
    it(`an audio id that is a path, URL or bytes is 400: ${JSON.stringify(bad.slice(0, 30))}`, async () => {
      const h = harness();
      assertError(await create(h, h.key(), { type: 'memo', audio: [{ clientId: 'phone', fileId: bad }] }), 400, 'invalid_request', 'fileId');
    });
  }

  it('an opaque id with a colon that is no URL scheme or drive letter is kept as sent', async () => {
    const h = harness();
    const ids = ['ios:F3A9', 'rec-2024-05-01T10:00:00', 'urn:uuid:123e4567-e89b-12d3-a456-426614174000', 'ab:1'];
    const audio = ids.map((fileId) => ({ clientId: 'phone:7', fileId }));
    const stored = (await created(h, h.key(), { type: 'memo', audio })).audio as Array<{ fileId: string }>;
    assert.deepEqual(stored.map((a) => a.fileId), ids);
  });

  it('audio bytes or extra fields in a reference are 400', async () => {
    const h = harness();
    const token = h.key();
    assertError(await create(h, token, { type: 'memo', audio: [{ clientId: 'c', fileId: [1, 2, 3] }] }), 400, 'invalid_request');
    assertError(await create(h, token, { type: 'memo', audio: [{ clientId: 'c', fileId: 'f', url: 'https://x' }] }), 400, 'invalid_request');
    assertError(await create(h, token, { type: 'memo', audio: ['f1'] }), 400, 'invalid_request');
  });

  it('type is required and is clip or memo; unknown fields are 400', async () => {
    const h = harness();
    const token = h.key();
    assertError(await create(h, token, { title: 'x' }), 400, 'invalid_request', 'type');
    assertError(await create(h, token, { type: 'note' }), 400, 'invalid_request', 'type');
    assertError(await create(h, token, { type: 'clip', colour: 'red' }), 400, 'invalid_request', 'colour');
    assertError(await create(h, token, { type: 'clip', deviceId: 'ring-1' }), 400, 'invalid_request', 'deviceId');
  });

  it(`recordedAt is a whole number from 0 to ${MAX_RECORDED_AT}, and the message says so`, async () => {
    const h = harness();
    const token = h.key();
    for (const bad of [-1, 1.5, MAX_RECORDED_AT + 1, Number.MAX_SAFE_INTEGER, '1700000000000']) {
      assertError(await create(h, token, { type: 'clip', recordedAt: bad }), 400, 'invalid_request', 'recordedAt');
    }
    assertError(await create(h, token, { type: 'clip', recordedAt: MAX_RECORDED_AT + 1 }), 400, 'invalid_request', String(MAX_RECORDED_AT));
    assert.equal((await created(h, token, { type: 'clip', recordedAt: MAX_RECORDED_AT })).recordedAt, MAX_RECORDED_AT);
    assert.equal((await created(h, token, { type: 'clip', recordedAt: 0 })).recordedAt, 0);
  });

  it('1,024 recordings can share one capture millisecond; the next is 409 limit_reached, a defaulted time moves on', () => {
    const h = harness();
    const principal = h.services.auth.authenticate(h.key());
    const { recordings } = h.services;
    for (let i = 0; i < 1024; i++) recordings.create(principal, { type: 'clip', recordedAt: 5000 }, `slot-${i}`);
    assert.throws(() => recordings.create(principal, { type: 'clip', recordedAt: 5000 }, 'slot-x'), { code: 'limit_reached' });
    h.clock.set(5000);
    const moved = recordings.create(principal, { type: 'clip' }, 'slot-now').row;
    assert.equal(moved.recorded_at, 5001);
  });

  it('needs recordings:create', async () => {
    const h = harness();
    assertError(await create(h, h.key(['recordings:read', 'recordings:write']), { type: 'clip' }), 403, 'forbidden');
  });

  it('a refused create stores nothing: its key can be used afterwards', async () => {
    const h = harness();
    const token = h.key();
    const key = newKey();
    assertError(await create(h, token, { type: 'clip', audio: [{ clientId: 'c', fileId: 'f' }] }, key), 400, 'invalid_request');
    assert.equal((await create(h, token, { type: 'clip' }, key)).status, 201);
  });
});
