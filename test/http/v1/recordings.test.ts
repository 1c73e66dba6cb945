// v1 recording operations (docs/decisions.md §7, §21): shapes, every success
// 200, the query constraints, Idempotency-Key, If-Match, latest-clip, and one library shared with v2.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_RECORDED_AT } from '../../../src/services/recording-model';
import { harness } from '../../helpers/harness';
import { assertError, created as v2Created, get as v2Get, patch as v2Patch } from '../../helpers/recording-client';
import { feedTypes, v1Create, v1Created, v1Delete, v1Get, v1List, v1Put } from '../../helpers/v1-client';

describe('v1 listRecordings query constraints', () => {
  const bad: Array<[string, Record<string, string>]> = [
    ['kind', { kind: 'video' }],
    ['source', { source: '' }],
    ['source', { source: '-bad' }],
    ['source', { source: 'a'.repeat(257) }],
    ['deviceId', { deviceId: 'has space' }],
    ['deviceId', { deviceId: 'x'.repeat(257) }],
    ['status', { status: 'done' }],
    ['q', { q: 'x'.repeat(201) }],
    ['from', { from: '-1' }],
    ['from', { from: '9007199254740992' }],
    ['from', { from: 'soon' }],
    ['to', { to: '1.5' }],
    ['to', { to: '9007199254740992' }],
    ['cursor', { cursor: 'c'.repeat(1025) }],
    ['limit', { limit: '0' }],
    ['limit', { limit: '101' }],
    ['limit', { limit: '' }],
  ];
  for (const [field, query] of bad) {
    it(`${field}=${JSON.stringify(Object.values(query)[0]).slice(0, 24)} gives 400 naming ${field}`, async () => {
      const h = harness();
      assertError(await v1List(h, h.key(), query), 400, 'invalid_request', field);
    });
  }

  it('accepts the bounds: q of 0 and 200 chars, cursor of 0 chars, from/to 0..9007199254740991, limit 1 and 100', async () => {
    const h = harness();
    const key = h.key();
    const ok: Array<Record<string, string | number>> = [{ q: '' }, { q: 'x'.repeat(200) }, { cursor: '' }, { from: 0, to: 9007199254740991 }, { limit: 1 }, { limit: 100 }];
    for (const query of ok) {
      const res = await v1List(h, key, query);
      assert.equal(res.status, 200, `${JSON.stringify(query)}: ${res.text}`);
      assert.deepEqual(Object.keys(res.json), ['recordings', 'nextCursor']);
    }
  });

  it('filters by kind, source, deviceId, status, q and inclusive from/to, newest first, and pages with nextCursor', async () => {
    const h = harness();
    const key = h.key();
    const a = await v1Created(h, key, { kind: 'clip', transcript: 'buy milk', source: 'ringapp', recordedAt: 1000 });
    const b = await v1Created(h, key, { kind: 'memo', transcript: 'meeting notes', deviceId: 'pin-1', recordedAt: 2000 });
    const c = await v1Created(h, key, { kind: 'clip', recordedAt: 3000 });
    const ids = async (q: Record<string, string | number>) => (await v1List(h, key, q)).json.recordings.map((r: { id: string }) => r.id);
    assert.deepEqual(await ids({}), [c.id, b.id, a.id]);
    assert.deepEqual(await ids({ kind: 'clip' }), [c.id, a.id]);
    assert.deepEqual(await ids({ source: 'ringapp' }), [a.id]);
    assert.deepEqual(await ids({ deviceId: 'pin-1' }), [b.id]);
    assert.deepEqual(await ids({ status: 'pending' }), [c.id]);
    assert.deepEqual(await ids({ q: 'meet' }), [b.id]);
    assert.deepEqual(await ids({ from: 1000, to: 2000 }), [b.id, a.id]);
    const first = await v1List(h, key, { limit: 2 });
    assert.equal(first.json.recordings.length, 2);
    const second = await v1List(h, key, { limit: 2, cursor: first.json.nextCursor });
    assert.deepEqual(second.json.recordings.map((r: { id: string }) => r.id), [a.id]);
    assert.equal(second.json.nextCursor, null);
    assertError(await v1List(h, key, { kind: 'clip', cursor: first.json.nextCursor }), 400, 'invalid_request', 'cursor');
  });
});

describe('v1 createRecording', () => {
  it('requires an Idempotency-Key of 1-128 characters', async () => {
    const h = harness();
    const key = h.key();
    assertError(await h.req('POST', '/api/v1/recordings', { token: key, body: { kind: 'clip' } }), 400, 'invalid_request', 'Idempotency-Key');
    assertError(await v1Create(h, key, { kind: 'clip' }, 'k'.repeat(129)), 400, 'invalid_request', 'Idempotency-Key');
    assert.equal((await v1Create(h, key, { kind: 'clip' }, 'k'.repeat(128))).status, 200);
  });

  it('requires a body, kind, and refuses unknown fields and paths as audio ids', async () => {
    const h = harness();
    const key = h.key();
    assertError(await h.req('POST', '/api/v1/recordings', { token: key, headers: { 'idempotency-key': 'x' } }), 400, 'invalid_request', 'body');
    assertError(await v1Create(h, key, { title: 'no kind' }), 400, 'invalid_request', 'kind');
    assertError(await v1Create(h, key, { kind: 'clip', type: 'clip' }), 400, 'invalid_request', 'type');
    assertError(await v1Create(h, key, { kind: 'memo', audio: [{ clientId: 'phone', fileId: '/sdcard/a.m4a' }] }), 400, 'invalid_request', 'fileId');
    assertError(await v1Create(h, key, { kind: 'clip', audio: [{ clientId: 'phone', fileId: 'f1' }] }), 400, 'invalid_request', 'audio');
  });

  it('answers 200 with the v1 shape: kind, source, captureInput, processing, audioAssets, revision; ETag and Location', async () => {
    const h = harness();
    h.clock.set(5000);
    const res = await v1Create(h, h.key(), {
      kind: 'memo', title: 'Standup', transcript: 'notes', recordedAt: 4000, source: 'importer', externalId: 'ext-1',
      audio: [{ clientId: 'phone-1', fileId: 'file-9' }],
    });
    assert.equal(res.status, 200, res.text);
    const r = res.json.recording;
    assert.deepEqual(r, {
      id: r.id, kind: 'memo', title: 'Standup', transcript: 'notes', summary: '', recordedAt: 4000, updatedAt: 5000, revision: 1,
      status: 'ready', pinned: false, audio: [{ clientId: 'phone-1', fileId: 'file-9' }], externalId: 'ext-1', source: 'importer',
      processing: { status: 'ready', updatedAt: 5000 }, audioAssets: [{ clientId: 'phone-1', fileId: 'file-9', reportedAt: 5000 }],
    });
    assert.equal(res.headers.get('etag'), '"1"');
    assert.equal(res.headers.get('location'), `/api/v1/recordings/${r.id}`);
  });

  it('a replay with the same key and body answers 200 with the recording as it is now; another body gives 409; deleted gives 410', async () => {
    const h = harness();
    const key = h.key();
    const first = await v1Create(h, key, { kind: 'clip', transcript: 'a' }, 'same');
    const id = first.json.recording.id;
    await v1Put(h, key, id, { title: 'edited' }, 1);
    const again = await v1Create(h, key, { kind: 'clip', transcript: 'a' }, 'same');
    assert.equal(again.status, 200);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual([again.json.recording.id, again.json.recording.title, again.json.recording.revision], [id, 'edited', 2]);
    assertError(await v1Create(h, key, { kind: 'clip', transcript: 'b' }, 'same'), 409, 'idempotency_conflict');
    await v1Delete(h, key, id, 2);
    assertError(await v1Create(h, key, { kind: 'clip', transcript: 'a' }, 'same'), 410, 'gone');
  });

  it('a caller without recordings:read gets only { id, revision } back from writes', async () => {
    const h = harness();
    const writer = h.key(['recordings:create', 'recordings:write', 'recordings:delete']);
    const res = await v1Create(h, writer, { kind: 'memo', transcript: 'secret' });
    assert.deepEqual(Object.keys(res.json.recording).sort(), ['id', 'revision']);
    const put = await v1Put(h, writer, res.json.recording.id, { title: 't' }, 1);
    assert.deepEqual(put.json.recording, { id: res.json.recording.id, revision: 2 });
    assertError(await v1Get(h, writer, res.json.recording.id), 403, 'forbidden');
  });
});

describe('v1 latestClip', () => {
  it('returns { recording: null } when there is no clip', async () => {
    const h = harness();
    const key = h.key();
    await v1Created(h, key, { kind: 'memo', transcript: 'a memo' });
    const res = await h.req('GET', '/api/v1/recordings/latest-clip', { token: key });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json, { recording: null });
  });

  it('is the newest clip by capture time, includes pending captures, and takes source, deviceId, q, from, to', async () => {
    const h = harness();
    const key = h.key();
    h.services.devices.add(h.accountId, { id: 'ring-1', name: 'Ring', model: 'ring' });
    const old = await v1Created(h, key, { kind: 'clip', transcript: 'call mom', source: 'ringapp', recordedAt: 1000 });
    await v1Created(h, key, { kind: 'memo', transcript: 'newer memo', recordedAt: 5000 });
    const pending = await v1Created(h, h.session, { kind: 'clip', deviceId: 'ring-1', captureInput: 'hold', recordedAt: 3000 });
    const latest = async (q: Record<string, string | number> = {}) => {
      const res = await v1List(h, key, q, '/api/v1/recordings/latest-clip');
      assert.equal(res.status, 200, res.text);
      return res.json.recording?.id ?? null;
    };
    assert.equal(await latest(), pending.id, 'a pending capture counts');
    assert.equal((await v1List(h, key, {}, '/api/v1/recordings/latest-clip')).json.recording.status, 'pending');
    assert.equal(await latest({ source: 'ringapp' }), old.id);
    assert.equal(await latest({ deviceId: 'ring-1' }), pending.id);
    assert.equal(await latest({ q: 'mom' }), old.id);
    assert.equal(await latest({ to: 2999 }), old.id);
    assert.equal(await latest({ from: 3001 }), null);
    assertError(await v1List(h, key, { kind: 'memo' }, '/api/v1/recordings/latest-clip'), 400, 'invalid_request', 'kind');
    assertError(await v1List(h, key, { q: 'x'.repeat(201) }, '/api/v1/recordings/latest-clip'), 400, 'invalid_request', 'q');
  });
});

describe('v1 getRecording, updateRecording, deleteRecording', () => {
  it('getRecording includes processing and local audio metadata and the ETag', async () => {
    const h = harness();
    const key = h.key();
    const r = await v1Created(h, key, { kind: 'memo', audio: [{ clientId: 'phone', fileId: 'f1' }] });
    const res = await v1Get(h, key, r.id);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('etag'), '"1"');
    assert.deepEqual(res.json.recording.processing, { status: 'pending', updatedAt: r.updatedAt });
    assert.deepEqual(res.json.recording.audioAssets, [{ clientId: 'phone', fileId: 'f1', reportedAt: r.updatedAt }]);
    assertError(await v1Get(h, key, 'no/such'), 404, 'not_found');
    assertError(await v1Get(h, key, '-bad'), 400, 'invalid_request', 'id');
  });

  it('updateRecording needs If-Match (428), refuses a stale one (412) and updates the text', async () => {
    const h = harness();
    const key = h.key();
    const r = await v1Created(h, key, { kind: 'clip', transcript: 'one' });
    assertError(await v1Put(h, key, r.id, { transcript: 'two' }), 428, 'precondition_required');
    assertError(await v1Put(h, key, r.id, { transcript: 'two' }, 7), 412, 'precondition_failed');
    const res = await v1Put(h, key, r.id, { transcript: 'two', title: 'T', pinned: true }, '"1"');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual([res.json.recording.transcript, res.json.recording.title, res.json.recording.pinned, res.json.recording.revision], ['two', 'T', true, 2]);
    assert.equal(res.headers.get('etag'), '"2"');
  });

  it('updateRecording accepts fixed fields echoed unchanged and gives 409 immutable_field for a different value', async () => {
    const h = harness();
    const key = h.key();
    const r = await v1Created(h, key, { kind: 'clip', transcript: 'one', source: 'app', recordedAt: 10 });
    assert.equal((await v1Put(h, key, r.id, { kind: 'clip', source: 'app', recordedAt: 10, title: 'x' }, 1)).status, 200);
    assertError(await v1Put(h, key, r.id, { kind: 'memo' }, 2), 409, 'immutable_field', 'kind');
    assertError(await v1Put(h, key, r.id, { captureInput: 'hold' }, 2), 409, 'immutable_field', 'captureInput');
    assertError(await v1Put(h, key, r.id, { audio: [] }, 2), 400, 'invalid_request', 'audio');
    // A value no recording could have is a 400 naming it, before any comparison.
    assertError(await v1Put(h, key, r.id, { recordedAt: 1.5 }, 2), 400, 'invalid_request', 'recordedAt');
    assertError(await v1Put(h, key, r.id, { externalId: '' }, 2), 400, 'invalid_request', 'externalId');
    assertError(await v1Put(h, key, r.id, { source: 'a/b' }, 2), 400, 'invalid_request', 'source');
    // Echoing a full v1 recording back as read still works: an app capture with all six fixed
    // fields set, the latest capture time included.
    h.services.devices.add(h.accountId, { id: 'ring-1', name: 'Ring', model: 'ring' });
    const fields = { kind: 'clip', deviceId: 'ring-1', captureInput: 'hold', externalId: 'ext:1', source: 'ring-app', recordedAt: MAX_RECORDED_AT };
    const cap = await v1Created(h, h.session, { ...fields, transcript: 'hi' });
    const read = (await h.req('GET', `/api/v1/recordings/${cap.id}`, { token: key })).json.recording;
    const echo = Object.fromEntries(Object.keys(fields).map((k) => [k, read[k]]));
    assert.deepEqual(echo, fields);
    assert.equal((await v1Put(h, key, cap.id, { ...echo, title: 'y' }, 1)).status, 200);
  });

  it('deleteRecording needs If-Match, answers 200, and later access answers 410', async () => {
    const h = harness();
    const key = h.key();
    const r = await v1Created(h, key, { kind: 'clip', transcript: 'bye' });
    assertError(await v1Delete(h, key, r.id), 428, 'precondition_required');
    assertError(await v1Delete(h, key, r.id, 9), 412, 'precondition_failed');
    const res = await v1Delete(h, key, r.id, 1);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json, { recording: { id: r.id, revision: 2 } });
    assertError(await v1Get(h, key, r.id), 410, 'gone');
    assertError(await v1Put(h, key, r.id, { title: 'x' }, 2), 410, 'gone');
    // Without If-Match too: 410 (and 404 for an unknown id) comes before 428.
    assertError(await v1Put(h, key, r.id, { title: 'x' }), 410, 'gone');
    assertError(await v1Delete(h, key, r.id), 410, 'gone');
    assertError(await v1Delete(h, key, 'rec_nope'), 404, 'not_found');
  });
});

describe('one library for v1 and v2', () => {
  it('v1 writes appear in v2 reads and the v2 feed; v2 writes appear in v1 reads', async () => {
    const h = harness();
    const key = h.key();
    const r = await v1Created(h, key, { kind: 'clip', transcript: 'from v1' });
    const v2 = await v2Get(h, key, r.id);
    assert.deepEqual([v2.json.recording.type, v2.json.recording.transcript, v2.json.recording.revision], ['clip', 'from v1', 1]);
    assert.equal((await v2Patch(h, key, r.id, { title: 'from v2' }, '"1"')).status, 200);
    const back = await v1Get(h, key, r.id);
    assert.deepEqual([back.json.recording.title, back.json.recording.revision], ['from v2', 2]);
    await v1Put(h, key, r.id, { transcript: 'edited in v1' }, 2);
    await v1Delete(h, key, r.id, 3);
    assert.deepEqual(feedTypes(h, r.id), [
      'recording.created@1', 'recording.transcript_ready@1', 'recording.updated@2', 'recording.updated@3', 'recording.transcript_ready@3', 'recording.deleted@4',
    ]);
    const made = await v2Created(h, key, { type: 'memo', transcript: 'from v2' });
    const listed = await v1List(h, key, { kind: 'memo' });
    assert.deepEqual(listed.json.recordings.map((x: { id: string; kind: string }) => [x.id, x.kind]), [[made.id, 'memo']]);
    const feed = await h.req('GET', '/api/v1/events?after=0&limit=100', { token: key });
    assert.equal(feed.json.events.filter((e: { recordingId: string }) => e.recordingId === r.id).length, 6, 'the v1 feed has the same events');
  });

  it('the v1 OpenAPI document lists every recording operation with its operation id', async () => {
    const h = harness();
    const doc = (await h.req('GET', '/api/v1/openapi.json')).json;
    const ids = Object.values(doc.paths as Record<string, Record<string, { operationId: string }>>).flatMap((p) => Object.values(p).map((o) => o.operationId));
    for (const id of ['listRecordings', 'createRecording', 'latestClip', 'getRecording', 'updateRecording', 'deleteRecording', 'putProcessing', 'putAudioAsset']) {
      assert.ok(ids.includes(id), id);
    }
  });
});
