// App captures over v1 (docs/decisions.md §7): native captures, metadata-only pending captures,
// the input mapping deciding the kind, processing reports with their allowed moves and late capture
// metadata (checked as on a create), processing after an edit, audio references, and the
// importing-application rule.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { harness } from '../../helpers/harness';
import { assertError } from '../../helpers/recording-client';
import { feedTypes, v1Audio, v1Created, v1Get, v1Processing, v1Put, withRing } from '../../helpers/v1-client';

describe('app captures', () => {
  it('a session create with deviceId or captureInput and no text is a pending capture: no recording.created until its text is saved', async () => {
    const h = withRing();
    const cap = await v1Created(h, h.session, { kind: 'clip', deviceId: 'ring-1', captureInput: 'hold' });
    assert.deepEqual([cap.status, cap.deviceId, cap.captureInput], ['pending', 'ring-1', 'hold']);
    const byInput = await v1Created(h, h.session, { kind: 'memo', captureInput: 'appRecord' });
    assert.deepEqual(feedTypes(h), [], 'metadata-only captures are not announced');
    const saved = await v1Put(h, h.session, cap.id, { transcript: 'remind me' }, 1);
    assert.equal(saved.json.recording.status, 'ready');
    assert.deepEqual(feedTypes(h), ['recording.created@2', 'recording.transcript_ready@2']);
    assert.equal(feedTypes(h, byInput.id).length, 0);
  });

  it('source alone does not make a native capture: the create is announced at once', async () => {
    const h = harness();
    const r = await v1Created(h, h.session, { kind: 'clip', source: 'ring-app' });
    assert.deepEqual(feedTypes(h, r.id), ['recording.created@1']);
  });

  it('a pending capture cannot be edited by anyone but the capturing app until it is saved (409 not_editable)', async () => {
    const h = withRing();
    const key = h.key();
    const cap = await v1Created(h, h.session, { kind: 'clip', deviceId: 'ring-1', captureInput: 'hold' });
    assertError(await v1Put(h, key, cap.id, { title: 'mine now' }, 1), 409, 'not_editable');
    assertError(await h.req('PATCH', `/api/v2/recordings/${cap.id}`, { token: key, body: { title: 'x' }, headers: { 'if-match': '1' } }), 409, 'not_editable');
    assert.equal((await v1Put(h, h.session, cap.id, { transcript: 'saved' }, 1)).status, 200);
    assert.equal((await v1Put(h, key, cap.id, { title: 'now editable' }, 2)).status, 200);
  });

  it("the kind of an app capture follows the device's input mapping for the input that started it", async () => {
    const h = withRing();
    const asked = await v1Created(h, h.session, { kind: 'memo', deviceId: 'ring-1', captureInput: 'hold', transcript: 'x' });
    assert.equal(asked.kind, 'clip', 'hold is a clip by default; the mapping overrides kind');
    const settings = await h.req('PATCH', '/api/v2/devices/ring-1/settings', { token: h.session, body: { inputs: { hold: 'memo' } }, headers: { 'if-match': '1' } });
    assert.equal(settings.status, 200, settings.text);
    const after = await v1Created(h, h.session, { kind: 'clip', deviceId: 'ring-1', captureInput: 'hold' });
    assert.equal(after.kind, 'memo', 'settings apply to future captures');
    assert.equal((await v1Get(h, h.session, asked.id)).json.recording.kind, 'clip', 'existing recordings keep their type');
    assert.equal((await v1Created(h, h.session, { kind: 'clip', captureInput: 'appRecord' })).kind, 'memo', 'without a device: the input default');
    assert.equal((await v1Created(h, h.key(), { kind: 'clip', deviceId: 'ring-1', captureInput: 'doubleTap' })).kind, 'clip', 'an API import keeps its kind');
    assertError(await h.req('POST', '/api/v1/recordings', { token: h.session, body: { kind: 'clip', deviceId: 'ring-1', captureInput: 'recordButton' }, headers: { 'idempotency-key': 'rb' } }), 400, 'invalid_request', 'captureInput');
    assertError(await h.req('POST', '/api/v1/recordings', { token: h.session, body: { kind: 'clip', captureInput: 'squeeze' }, headers: { 'idempotency-key': 'sq' } }), 400, 'invalid_request', 'captureInput');
  });

  it('a replay of an app capture after a settings change still replays (the kind was decided once)', async () => {
    const h = withRing();
    const body = { kind: 'clip', deviceId: 'ring-1', captureInput: 'hold' };
    const first = await h.req('POST', '/api/v1/recordings', { token: h.session, body, headers: { 'idempotency-key': 'cap-1' } });
    await h.req('PATCH', '/api/v2/devices/ring-1/settings', { token: h.session, body: { inputs: { hold: 'memo' } }, headers: { 'if-match': '1' } });
    const again = await h.req('POST', '/api/v1/recordings', { token: h.session, body, headers: { 'idempotency-key': 'cap-1' } });
    assert.equal(again.status, 200, again.text);
    assert.deepEqual([again.json.recording.id, again.json.recording.kind], [first.json.recording.id, 'clip']);
  });
});

describe('putProcessing', () => {
  it('moves pending → transcribing → ready | no_speech | failed and refuses other moves with 409 not_editable', async () => {
    const h = withRing();
    const cap = await v1Created(h, h.session, { kind: 'clip', deviceId: 'ring-1', captureInput: 'hold' });
    const step = (status: string) => v1Processing(h, h.session, cap.id, { status });
    assert.equal((await step('transcribing')).json.recording.processing.status, 'transcribing');
    assertError(await step('pending'), 409, 'not_editable', 'transcribing');
    assert.equal((await step('failed')).status, 200);
    assertError(await step('ready'), 409, 'not_editable', 'failed');
    assert.equal((await step('transcribing')).status, 200, 'a failed transcription may be retried');
    const done = await v1Processing(h, h.session, cap.id, { status: 'no_speech', message: 'silence' });
    assert.deepEqual(done.json.recording.processing, { status: 'no_speech', updatedAt: done.json.recording.updatedAt, message: 'silence' });
    assertError(await step('ready'), 409, 'not_editable');
    assertError(await v1Processing(h, h.session, cap.id, { status: 'done' }), 400, 'invalid_request', 'status');
  });

  it('capture metadata may arrive after the transcript; once set it is immutable (409 immutable_field when different)', async () => {
    const h = withRing();
    const cap = await v1Created(h, h.session, { kind: 'clip', deviceId: 'ring-1', transcript: 'Todo call Bob' });
    assert.equal(cap.captureInput, undefined);
    const late = await v1Processing(h, h.session, cap.id, { status: 'ready', captureInput: 'hold' });
    assert.equal(late.status, 200, late.text);
    assert.equal(late.json.recording.captureInput, 'hold');
    assert.equal((await v1Processing(h, h.session, cap.id, { status: 'ready', captureInput: 'hold', deviceId: 'ring-1' })).status, 200, 'the same value again is fine');
    assertError(await v1Processing(h, h.session, cap.id, { status: 'ready', captureInput: 'doubleTap' }), 409, 'immutable_field', 'captureInput');
    assertError(await v1Processing(h, h.session, cap.id, { status: 'ready', deviceId: 'ring-2' }), 409, 'immutable_field', 'deviceId');
  });

  it('an API key may report only for recordings its own integration imported (403 wrong_application)', async () => {
    const h = harness();
    const key = h.key();
    const app = await v1Created(h, h.session, { kind: 'clip', transcript: 'by the app' });
    assertError(await v1Processing(h, key, app.id, { status: 'ready' }), 403, 'wrong_application');
    assertError(await v1Audio(h, key, app.id, { clientId: 'c', fileId: 'f' }), 403, 'wrong_application');
    const own = await v1Created(h, key, { kind: 'memo' });
    assert.equal((await v1Processing(h, key, own.id, { status: 'transcribing' })).status, 200);
    assertError(await v1Processing(h, h.key(), own.id, { status: 'ready' }), 403, 'wrong_application', undefined);
  });

  it('a report that changes the recording bumps the revision and emits recording.updated; repeating it changes nothing', async () => {
    const h = harness();
    const key = h.key();
    const r = await v1Created(h, key, { kind: 'memo' });
    const moved = await v1Processing(h, key, r.id, { status: 'transcribing' });
    assert.equal(moved.json.recording.revision, 2);
    const same = await v1Processing(h, key, r.id, { status: 'transcribing' });
    assert.equal(same.json.recording.revision, 2);
    assert.deepEqual(feedTypes(h, r.id), ['recording.created@1', 'recording.updated@2']);
    assertError(await h.req('PUT', `/api/v1/recordings/${r.id}/processing`, { token: key, body: { status: 'ready' }, headers: { 'if-match': '1' } }), 412, 'precondition_failed');
  });
});

describe('ids that name things (device, external, source) follow the spec pattern only', () => {
  it('a registered device "r:1" captures, and externalId / source with a colon are kept (audio ids alone refuse URL schemes)', async () => {
    const h = harness();
    h.services.devices.add(h.accountId, { id: 'r:1', name: 'Ring', model: 'ring' });
    const cap = await v1Created(h, h.session, { kind: 'clip', deviceId: 'r:1', captureInput: 'hold', externalId: 'x:42', source: 'ph:1', transcript: 'hi' });
    assert.deepEqual([cap.deviceId, cap.externalId, cap.source], ['r:1', 'x:42', 'ph:1']);
  });
});

describe('putAudioAsset', () => {
  it('reports and withdraws opaque references of a memo, with reportedAt', async () => {
    const h = harness();
    const key = h.key();
    const memo = await v1Created(h, key, { kind: 'memo', transcript: 'long talk' });
    h.clock.advance(10);
    const added = await v1Audio(h, key, memo.id, { clientId: 'phone-1', fileId: 'rec-77' });
    assert.equal(added.status, 200, added.text);
    assert.deepEqual(added.json.recording.audioAssets, [{ clientId: 'phone-1', fileId: 'rec-77', reportedAt: h.clock.now() }]);
    assert.deepEqual((await h.req('GET', `/api/v2/recordings/${memo.id}`, { token: key })).json.recording.audio, [{ clientId: 'phone-1', fileId: 'rec-77' }]);
    assert.equal((await v1Audio(h, key, memo.id, { clientId: 'phone-1', fileId: 'rec-77' })).json.recording.revision, 2, 'reporting it again changes nothing');
    const gone = await v1Audio(h, key, memo.id, { clientId: 'phone-1', fileId: 'rec-77', available: false });
    assert.deepEqual([gone.json.recording.audioAssets, gone.json.recording.revision], [[], 3]);
    assert.deepEqual(feedTypes(h, memo.id), ['recording.created@1', 'recording.transcript_ready@1', 'recording.updated@2', 'recording.updated@3']);
  });

  it('a clip refuses audio with 409 not_editable; paths and URLs are 400', async () => {
    const h = harness();
    const key = h.key();
    const clip = await v1Created(h, key, { kind: 'clip' });
    assertError(await v1Audio(h, key, clip.id, { clientId: 'phone', fileId: 'f' }), 409, 'not_editable');
    const memo = await v1Created(h, key, { kind: 'memo' });
    assertError(await v1Audio(h, key, memo.id, { clientId: 'phone', fileId: '/data/rec.m4a' }), 400, 'invalid_request', 'fileId');
    assertError(await v1Audio(h, key, memo.id, { clientId: 'phone', fileId: 'https:example.com' }), 400, 'invalid_request', 'fileId');
    assertError(await v1Audio(h, key, memo.id, { clientId: 'phone', fileId: 'smb:nas:share:a.m4a' }), 400, 'invalid_request', 'fileId');
    assertError(await v1Audio(h, key, memo.id, { clientId: 'phone', fileId: 'f', bytes: 'AAAA' }), 400, 'invalid_request', 'bytes');
  });

  it('a reference stored before the URL rule (smb:…) can still be withdrawn', async () => {
    const h = harness();
    const key = h.key();
    const memo = await v1Created(h, key, { kind: 'memo' });
    const old = [{ clientId: 'phone', fileId: 'smb:nas:a.m4a', reportedAt: 1 }];
    h.services.core.db.prepare('UPDATE recordings SET audio = ? WHERE id = ?').run(JSON.stringify(old), memo.id);
    const res = await v1Audio(h, key, memo.id, { clientId: 'phone', fileId: 'smb:nas:a.m4a', available: false });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json.recording.audioAssets, []);
  });
});

// Late capture metadata (v1 putProcessing, docs/decisions.md §7) is checked like the same metadata on a
// create: an app capture's captureInput must be an input of its device (spec "device settings":
// recordButton is not accepted for the ring-type device) and its device must exist.
describe('putProcessing: late capture metadata is checked as on a create', () => {
  it('refuses an input the device does not have, as createRecording does (400), and stores nothing', async () => {
    const h = withRing();
    assertError(
      await h.req('POST', '/api/v1/recordings', { token: h.session, body: { kind: 'memo', deviceId: 'ring-1', captureInput: 'recordButton' }, headers: { 'idempotency-key': 'c1' } }),
      400, 'invalid_request', 'captureInput',
    );
    const cap = await v1Created(h, h.session, { kind: 'memo', deviceId: 'ring-1' });
    assertError(await v1Processing(h, h.session, cap.id, { status: 'transcribing', captureInput: 'recordButton' }), 400, 'invalid_request', 'captureInput');
    const both = await v1Created(h, h.session, { kind: 'memo' });
    assertError(await v1Processing(h, h.session, both.id, { status: 'transcribing', deviceId: 'ring-1', captureInput: 'recordButton' }), 400, 'invalid_request', 'captureInput');
    const read = (await v1Get(h, h.session, cap.id)).json.recording;
    assert.deepEqual([read.captureInput, read.revision, read.status], [undefined, 1, 'pending']);
  });

  it('refuses an unknown device with a captureInput, as createRecording does (404)', async () => {
    const h = withRing();
    const cap = await v1Created(h, h.session, { kind: 'memo' });
    assertError(await v1Processing(h, h.session, cap.id, { status: 'transcribing', deviceId: 'ghost', captureInput: 'hold' }), 404, 'not_found');
    assert.equal((await v1Get(h, h.session, cap.id)).json.recording.deviceId, undefined);
  });

  it('accepts metadata that fits the device', async () => {
    const h = withRing();
    const cap = await v1Created(h, h.session, { kind: 'memo', deviceId: 'ring-1' });
    const ok = await v1Processing(h, h.session, cap.id, { status: 'transcribing', captureInput: 'doubleTap' });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.json.recording.captureInput, 'doubleTap');
  });
});

// v1 `processing: { status, updatedAt, message? }` (docs/decisions.md §7) after an edit that moves the
// status: saving a nonempty transcript makes the recording ready (spec "Recording status"), so the
// processing state changed then; its updatedAt follows and the earlier status's message goes.
describe('an edit that makes the recording ready moves processing to ready', () => {
  it('processing.updatedAt is the time of the change and the failed report message is gone', async () => {
    const h = harness();
    const key = h.key();
    const r = await v1Created(h, key, { kind: 'memo', title: 'call' });
    h.clock.advance(1000);
    const failed = await v1Processing(h, key, r.id, { status: 'failed', message: 'no network' });
    assert.deepEqual(failed.json.recording.processing, { status: 'failed', updatedAt: h.clock.now(), message: 'no network' });
    h.clock.advance(1000);
    const saved = await v1Put(h, key, r.id, { transcript: 'typed by hand' }, failed.json.recording.revision);
    assert.equal(saved.status, 200, saved.text);
    assert.deepEqual(saved.json.recording.processing, { status: 'ready', updatedAt: h.clock.now() });
  });

  it('an edit that keeps the status leaves processing as reported', async () => {
    const h = harness();
    const key = h.key();
    const r = await v1Created(h, key, { kind: 'memo', transcript: 'first' });
    const at = h.clock.now();
    h.clock.advance(1000);
    const saved = await v1Put(h, key, r.id, { title: 'renamed' }, 1);
    assert.deepEqual(saved.json.recording.processing, { status: 'ready', updatedAt: at });
  });
});
