// Late capture metadata (v1 putProcessing, docs/decisions.md §7) is checked like the same metadata on a
// create: an app capture's captureInput must be an input of its device (spec "device settings":
// recordButton is not accepted for the ring-type device) and its device must exist.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertError } from './helpers/recording-client';
import { v1Created, v1Get, v1Processing, withRing } from './helpers/v1-client';

describe('putProcessing: late capture metadata of an app capture', () => {
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
