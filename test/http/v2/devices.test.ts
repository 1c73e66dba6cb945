// docs/decisions.md §15, §2 and §5: the v2 device list
// and per-device input settings with ETag / If-Match.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { harness, type TestResponse } from '../../helpers/harness';

function setup() {
  const h = harness();
  h.services.devices.add(h.accountId, { id: 'ring-1', name: 'My ring', model: 'ring' });
  h.clock.advance(1);
  h.services.devices.add(h.accountId, { id: 'pin-1', name: 'My pin', model: 'pin' });
  h.clock.advance(1);
  h.services.devices.add(h.accountId, { id: 'pendant-1', name: 'My pendant', model: 'pendant' });
  return h;
}

function assertError(res: TestResponse, status: number, code: string, mentions?: string): void {
  assert.equal(res.status, status, res.text);
  assert.equal(res.json?.error?.code, code, res.text);
  if (mentions) assert.match(res.json.error.message, new RegExp(mentions), res.text);
}

const patch = (h: ReturnType<typeof setup>, id: string, inputs: unknown, ifMatch: string | undefined, token = h.session) =>
  h.req('PATCH', `/api/v2/devices/${id}/settings`, { token, body: { inputs }, headers: ifMatch === undefined ? {} : { 'if-match': ifMatch } });

describe('GET /devices', () => {
  it('lists the account devices as { devices: [{ id, name, model }] }, oldest first', async () => {
    const h = setup();
    const res = await h.req('GET', '/api/v2/devices', { token: h.key(['settings:read']) });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json, {
      devices: [
        { id: 'ring-1', name: 'My ring', model: 'ring' },
        { id: 'pin-1', name: 'My pin', model: 'pin' },
        { id: 'pendant-1', name: 'My pendant', model: 'pendant' },
      ],
    });
  });

  it('needs settings:read', async () => {
    const h = setup();
    assertError(await h.req('GET', '/api/v2/devices', { token: h.key(['settings:write']) }), 403, 'forbidden');
  });

  it("another account's devices are not listed", async () => {
    const h = setup();
    const other = h.services.auth.createAccount('other');
    h.services.devices.add(other.id, { id: 'theirs', name: 'Their ring', model: 'ring' });
    const res = await h.req('GET', '/api/v2/devices', { token: h.session });
    assert.deepEqual(res.json.devices.map((d: { id: string }) => d.id), ['ring-1', 'pin-1', 'pendant-1']);
    assertError(await h.req('GET', '/api/v2/devices/theirs/settings', { token: h.session }), 404, 'not_found');
  });
});

describe('GET /devices/{id}/settings', () => {
  it('a ring returns its four inputs with the spec defaults and ETag "1"', async () => {
    const h = setup();
    const res = await h.req('GET', '/api/v2/devices/ring-1/settings', { token: h.key(['settings:read']) });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('etag'), '"1"');
    assert.deepEqual(res.json, { settings: { inputs: { hold: 'clip', doubleTap: 'memo', tripleTap: 'memo', appRecord: 'memo' } } });
  });

  it('pin and pendant return only recordButton and appRecord, both memo', async () => {
    const h = setup();
    for (const id of ['pin-1', 'pendant-1']) {
      const res = await h.req('GET', `/api/v2/devices/${id}/settings`, { token: h.session });
      assert.deepEqual(res.json, { settings: { inputs: { recordButton: 'memo', appRecord: 'memo' } } });
    }
  });

  it('an unknown device gives 404', async () => {
    const h = setup();
    assertError(await h.req('GET', '/api/v2/devices/nope/settings', { token: h.session }), 404, 'not_found');
  });

  it('a path id off the pattern gives 400', async () => {
    const h = setup();
    assertError(await h.req('GET', '/api/v2/devices/-bad/settings', { token: h.session }), 400, 'invalid_request', 'path.id');
  });

  it('needs settings:read', async () => {
    const h = setup();
    assertError(await h.req('GET', '/api/v2/devices/ring-1/settings', { token: h.key(['settings:write']) }), 403, 'forbidden');
  });
});

describe('PATCH /devices/{id}/settings', () => {
  it('changes only the sent inputs, returns the whole settings and the next ETag', async () => {
    const h = setup();
    const res = await patch(h, 'ring-1', { doubleTap: 'clip' }, '"1"', h.key(['settings:write']));
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('etag'), '"2"');
    assert.deepEqual(res.json, { settings: { inputs: { hold: 'clip', doubleTap: 'clip', tripleTap: 'memo', appRecord: 'memo' } } });
    const read = await h.req('GET', '/api/v2/devices/ring-1/settings', { token: h.session });
    assert.equal(read.headers.get('etag'), '"2"');
    assert.deepEqual(read.json, res.json);
  });

  it('doubleTap and tripleTap are independent', async () => {
    const h = setup();
    const res = await patch(h, 'ring-1', { tripleTap: 'clip' }, '"1"');
    assert.equal(res.json.settings.inputs.doubleTap, 'memo');
    assert.equal(res.json.settings.inputs.tripleTap, 'clip');
  });

  it('If-Match accepts "1", W/"1" and 1', async () => {
    for (const tag of ['"1"', 'W/"1"', '1']) {
      const h = setup();
      const res = await patch(h, 'pin-1', { recordButton: 'clip' }, tag);
      assert.equal(res.status, 200, `${tag}: ${res.text}`);
    }
  });

  it('without If-Match gives 428 precondition_required (an unknown device 404)', async () => {
    const h = setup();
    assertError(await patch(h, 'ring-1', { hold: 'memo' }, undefined), 428, 'precondition_required', 'If-Match');
    // An unknown device is 404 with or without it: no If-Match could make that write succeed.
    assertError(await patch(h, 'ring-9', { hold: 'memo' }, undefined), 404, 'not_found');
  });

  it('a stale If-Match gives 412 precondition_failed and changes nothing', async () => {
    const h = setup();
    assert.equal((await patch(h, 'ring-1', { hold: 'memo' }, '"1"')).status, 200);
    assertError(await patch(h, 'ring-1', { appRecord: 'clip' }, '"1"'), 412, 'precondition_failed');
    const read = await h.req('GET', '/api/v2/devices/ring-1/settings', { token: h.session });
    assert.equal(read.headers.get('etag'), '"2"');
    assert.equal(read.json.settings.inputs.appRecord, 'memo');
  });

  it('If-Match over 100 characters gives 400', async () => {
    const h = setup();
    assertError(await patch(h, 'ring-1', { hold: 'memo' }, `"${'1'.padStart(100, '0')}"`), 400, 'invalid_request', 'If-Match');
  });

  it('a malformed If-Match gives 400', async () => {
    const h = setup();
    for (const tag of ['abc', '"1', '*', '"1", "2"', '']) {
      assertError(await patch(h, 'ring-1', { hold: 'memo' }, tag), 400, 'invalid_request', 'If-Match');
    }
  });

  it('recordButton on a ring gives 400 naming the input', async () => {
    const h = setup();
    assertError(await patch(h, 'ring-1', { recordButton: 'clip' }, '"1"'), 400, 'invalid_request', 'inputs\\.recordButton');
  });

  it('ring gestures on a pin or pendant give 400 naming the input', async () => {
    const h = setup();
    assertError(await patch(h, 'pin-1', { hold: 'clip' }, '"1"'), 400, 'invalid_request', 'inputs\\.hold');
    assertError(await patch(h, 'pendant-1', { doubleTap: 'clip' }, '"1"'), 400, 'invalid_request', 'inputs\\.doubleTap');
  });

  it('an unknown input or value gives 400 naming it', async () => {
    const h = setup();
    assertError(await patch(h, 'ring-1', { quadTap: 'clip' }, '"1"'), 400, 'invalid_request', 'inputs\\.quadTap');
    assertError(await patch(h, 'ring-1', JSON.parse('{"constructor":"clip"}'), '"1"'), 400, 'invalid_request', 'inputs\\.constructor');
    assertError(await patch(h, 'ring-1', { hold: 'note' }, '"1"'), 400, 'invalid_request', 'inputs\\.hold');
  });

  it('a body without inputs or with unknown fields gives 400', async () => {
    const h = setup();
    const send = (body: unknown) => h.req('PATCH', '/api/v2/devices/ring-1/settings', { token: h.session, body, headers: { 'if-match': '"1"' } });
    assertError(await send({}), 400, 'invalid_request', 'body\\.inputs');
    assertError(await send({ inputs: {}, extra: 1 }), 400, 'invalid_request', 'body\\.extra');
  });

  it('a PATCH that changes nothing keeps the revision', async () => {
    const h = setup();
    const same = await patch(h, 'ring-1', { hold: 'clip' }, '"1"');
    assert.equal(same.status, 200, same.text);
    assert.equal(same.headers.get('etag'), '"1"');
    const empty = await patch(h, 'ring-1', {}, '"1"');
    assert.equal(empty.headers.get('etag'), '"1"');
    assert.deepEqual(h.services.deviceSettings.revisions(h.accountId), []);
  });

  it('an unknown device gives 404', async () => {
    const h = setup();
    assertError(await patch(h, 'nope', { hold: 'memo' }, '"1"'), 404, 'not_found');
  });

  it('needs settings:write', async () => {
    const h = setup();
    assertError(await patch(h, 'ring-1', { hold: 'memo' }, '"1"', h.key(['settings:read'])), 403, 'forbidden');
  });

  it('settings are per device: changing one device leaves the others alone', async () => {
    const h = setup();
    await patch(h, 'pin-1', { recordButton: 'clip' }, '"1"');
    const pendant = await h.req('GET', '/api/v2/devices/pendant-1/settings', { token: h.session });
    assert.equal(pendant.json.settings.inputs.recordButton, 'memo');
    assert.equal(pendant.headers.get('etag'), '"1"');
  });
});
