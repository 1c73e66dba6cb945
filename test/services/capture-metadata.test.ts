// The rules on an app capture's metadata hold in RecordingService (src/services/capture-metadata.ts),
// so MCP, the CLI and the web app get them as v1 does: these tests call the service, not a route.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { withRing } from '../helpers/v1-client';

function setup() {
  const h = withRing();
  const app = h.services.auth.authenticate(h.session);
  const key = h.services.auth.authenticate(h.key());
  return { h, app, key, svc: h.services.recordings };
}

describe('capture metadata rules in the recording service', () => {
  it("the input mapping decides an app capture's type, whatever type was sent; an import keeps its type", () => {
    const { h, app, key, svc } = setup();
    h.services.deviceSettings.patch(h.accountId, 'ring-1', 1, { hold: 'memo' });
    assert.equal(svc.create(app, { type: 'clip', deviceId: 'ring-1', captureInput: 'hold' }, 'a').row.type, 'memo');
    assert.equal(svc.create(app, { type: 'memo', deviceId: 'ring-1', captureInput: 'tripleTap', transcript: 'x' }, 'b').row.type, 'memo');
    assert.equal(svc.create(key, { type: 'clip', deviceId: 'ring-1', captureInput: 'hold' }, 'c').row.type, 'clip', 'a key imports: no mapping applies');
  });

  it('an app capture that the mapping makes a clip may not carry audio; an unknown device is 404, an input it lacks 400', () => {
    const { app, svc } = setup();
    const audio = [{ clientId: 'phone', fileId: 'f1' }];
    assert.throws(() => svc.create(app, { type: 'memo', deviceId: 'ring-1', captureInput: 'hold', audio }, 'a'), { code: 'invalid_request', message: /^audio: the hold input makes this capture a clip/ });
    assert.throws(() => svc.create(app, { type: 'memo', deviceId: 'ring-9', captureInput: 'hold' }, 'b'), { code: 'not_found' });
    assert.throws(() => svc.create(app, { type: 'memo', deviceId: 'ring-1', captureInput: 'recordButton' }, 'c'), { code: 'invalid_request', message: /^captureInput/ });
  });

  it('capture metadata reported late passes the check a create passes, and nothing is stored when it fails', () => {
    const { app, svc } = setup();
    const { row } = svc.create(app, { type: 'memo', transcript: 'x' }, 'p');
    assert.throws(() => svc.reportProcessing(app, row.id, { status: 'ready', deviceId: 'ring-1', captureInput: 'recordButton' }), { code: 'invalid_request', message: /^captureInput/ });
    assert.throws(() => svc.reportProcessing(app, row.id, { status: 'ready', deviceId: 'ring-9', captureInput: 'hold' }), { code: 'not_found' });
    assert.equal(svc.get(app, row.id).revision, 1);
    const after = svc.reportProcessing(app, row.id, { status: 'ready', deviceId: 'ring-1', captureInput: 'hold' });
    assert.deepEqual([after.capture_input, after.device_id, after.revision], ['hold', 'ring-1', 2]);
  });

  it('an edit may echo the fixed fields as stored; a different value is 409 immutable_field, before not_editable and the revision check', () => {
    const { h, app, svc } = setup();
    const { row } = svc.create(app, { type: 'memo', deviceId: 'ring-1', captureInput: 'doubleTap', source: 'ring-app' }, 'e');
    const echoed = { kind: row.type, recordedAt: row.recorded_at, deviceId: 'ring-1', source: 'ring-app', captureInput: 'doubleTap' };
    const other = h.services.auth.authenticate(h.key());
    // A pending capture of another app, at a stale revision: the changed field is named first.
    assert.throws(() => svc.update(other, row.id, { title: 't' }, 9, { echoed: { ...echoed, captureInput: 'hold' } }), { code: 'immutable_field', message: /^captureInput/ });
    assert.throws(() => svc.update(app, row.id, { title: 't' }, 1, { echoed: { kind: 'clip' } }), { code: 'immutable_field', message: /^kind/ });
    assert.throws(() => svc.update(app, row.id, { title: 't' }, 1, { echoed: { externalId: 'x' } }), { code: 'immutable_field', message: /^externalId/ });
    assert.equal(svc.update(app, row.id, { transcript: 'saved' }, 1, { echoed }).revision, 2);
  });

  it('echoed fixed fields are compared with the row the edit writes: metadata committed after the call, before the grouped write, counts', async () => {
    const { app, svc } = setup();
    const { row } = svc.create(app, { type: 'memo', transcript: 'x' }, 'g');
    // Queued for the next group commit; the app's late capture metadata is committed first.
    const edit = svc.updateGrouped(app, row.id, { title: 'late' }, 2, { echoed: { captureInput: 'doubleTap', deviceId: 'ring-1' } });
    svc.reportProcessing(app, row.id, { status: 'ready', deviceId: 'ring-1', captureInput: 'doubleTap' });
    const edited = await edit;
    assert.deepEqual([edited.title, edited.capture_input, edited.revision], ['late', 'doubleTap', 3]);
  });
});
