// docs/decisions.md §7, §15: v1 input-mapping revisions (immutable, merged by id) are the
// history behind v2 device settings; the newest revision of a device is its settings.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { harness, type TestResponse } from '../../helpers/harness';

const T0 = Date.UTC(2026, 0, 1);

function setup() {
  const h = harness();
  h.services.devices.add(h.accountId, { id: 'ring-1', name: 'Ring', model: 'ring' });
  h.services.devices.add(h.accountId, { id: 'pin-1', name: 'Pin', model: 'pin' });
  return h;
}
type H = ReturnType<typeof setup>;

const post = (h: H, revisions: unknown[], token = h.session) => h.req('POST', '/api/v1/input-mappings', { token, body: { revisions } });
const list = (h: H, query = '', token = h.session) => h.req('GET', `/api/v1/input-mappings${query}`, { token });
const settings = (h: H, id: string) => h.req('GET', `/api/v2/devices/${id}/settings`, { token: h.session });

function assertError(res: TestResponse, status: number, code: string, mentions?: string): void {
  assert.equal(res.status, status, res.text);
  assert.equal(res.json?.error?.code, code, res.text);
  if (mentions) assert.match(res.json.error.message, new RegExp(mentions), res.text);
}

const RING_DEFAULTS = { hold: 'clip', doubleTap: 'memo', tripleTap: 'memo', appRecord: 'memo' };

describe('GET /api/v1/input-mappings', () => {
  it('is { revisions: [] } before any revision and needs settings:read', async () => {
    const h = setup();
    const res = await list(h, '', h.key(['settings:read']));
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json, { revisions: [] });
    assertError(await list(h, '', h.key(['settings:write'])), 403, 'forbidden');
  });

  it('lists revisions oldest first as { id, deviceId, inputs, createdAt }, filterable by deviceId', async () => {
    const h = setup();
    await post(h, [
      { id: 'r2', deviceId: 'pin-1', inputs: { recordButton: 'clip' }, createdAt: T0 + 2 },
      { id: 'r1', deviceId: 'ring-1', inputs: { hold: 'memo' }, createdAt: T0 + 1 },
    ]);
    const all = await list(h);
    assert.deepEqual(all.json, {
      revisions: [
        { id: 'r1', deviceId: 'ring-1', inputs: { ...RING_DEFAULTS, hold: 'memo' }, createdAt: T0 + 1 },
        { id: 'r2', deviceId: 'pin-1', inputs: { recordButton: 'clip', appRecord: 'memo' }, createdAt: T0 + 2 },
      ],
    });
    assert.deepEqual((await list(h, '?deviceId=pin-1')).json.revisions.map((r: { id: string }) => r.id), ['r2']);
  });

  it('an unknown deviceId filter gives an empty list; a malformed one 400', async () => {
    const h = setup();
    await post(h, [{ id: 'r1', deviceId: 'ring-1', inputs: {} }]);
    assert.deepEqual((await list(h, '?deviceId=nope')).json, { revisions: [] });
    assertError(await list(h, '?deviceId='), 400, 'invalid_request', 'query.deviceId');
  });

  it("another account's revisions never appear", async () => {
    const h = setup();
    const other = h.services.auth.createAccount('other');
    h.services.devices.add(other.id, { id: 'ring-1', name: 'Their ring', model: 'ring' });
    h.services.deviceSettings.merge(other.id, [{ id: 'theirs', deviceId: 'ring-1', inputs: { hold: 'memo' } }]);
    assert.deepEqual((await list(h)).json, { revisions: [] });
    assert.deepEqual((await settings(h, 'ring-1')).json.settings.inputs, RING_DEFAULTS);
  });
});

describe('POST /api/v1/input-mappings', () => {
  it('stores new revisions and answers 200 with them as stored; createdAt defaults to now; needs settings:write', async () => {
    const h = setup();
    assertError(await post(h, [], h.key(['settings:read'])), 403, 'forbidden');
    const res = await post(h, [{ id: 'r1', deviceId: 'ring-1', inputs: { hold: 'memo' } }], h.key(['settings:write']));
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json, { revisions: [{ id: 'r1', deviceId: 'ring-1', inputs: { ...RING_DEFAULTS, hold: 'memo' }, createdAt: T0 }] });
  });

  it('the newest revision of a device is its v2 settings, and the ETag advances', async () => {
    const h = setup();
    await post(h, [{ id: 'r1', deviceId: 'ring-1', inputs: { tripleTap: 'clip' } }]);
    const s = await settings(h, 'ring-1');
    assert.deepEqual(s.json.settings.inputs, { ...RING_DEFAULTS, tripleTap: 'clip' });
    assert.equal(s.headers.get('etag'), '"2"');
  });

  it('a v2 PATCH holding the ETag from before a v1 merge gives 412', async () => {
    const h = setup();
    await post(h, [{ id: 'r1', deviceId: 'ring-1', inputs: { hold: 'memo' } }]);
    const res = await h.req('PATCH', '/api/v2/devices/ring-1/settings', { token: h.session, body: { inputs: { appRecord: 'clip' } }, headers: { 'if-match': '"1"' } });
    assertError(res, 412, 'precondition_failed');
  });

  it('a partial revision is completed from the revision before it by createdAt, else from the defaults', async () => {
    const h = setup();
    await post(h, [
      { id: 'a', deviceId: 'ring-1', inputs: { hold: 'memo' }, createdAt: T0 + 10 },
      { id: 'c', deviceId: 'ring-1', inputs: { doubleTap: 'clip' }, createdAt: T0 + 30 },
      { id: 'b', deviceId: 'ring-1', inputs: { tripleTap: 'clip' }, createdAt: T0 + 20 },
      { id: 'z', deviceId: 'ring-1', inputs: { appRecord: 'clip' }, createdAt: T0 },
    ]);
    const byId = Object.fromEntries((await list(h)).json.revisions.map((r: { id: string; inputs: unknown }) => [r.id, r.inputs]));
    assert.deepEqual(byId.z, { ...RING_DEFAULTS, appRecord: 'clip' });
    assert.deepEqual(byId.a, { ...RING_DEFAULTS, hold: 'memo' });
    assert.deepEqual(byId.c, { ...RING_DEFAULTS, hold: 'memo', doubleTap: 'clip' });
    assert.deepEqual(byId.b, { ...RING_DEFAULTS, hold: 'memo', tripleTap: 'clip' });
    // Newest by createdAt is c, whatever the arrival order.
    assert.deepEqual((await settings(h, 'ring-1')).json.settings.inputs, byId.c);
  });

  it('revisions with the same createdAt are ordered by arrival', async () => {
    const h = setup();
    await post(h, [
      { id: 'first', deviceId: 'pin-1', inputs: { recordButton: 'clip' }, createdAt: T0 },
      { id: 'second', deviceId: 'pin-1', inputs: { recordButton: 'memo' }, createdAt: T0 },
    ]);
    assert.equal((await settings(h, 'pin-1')).json.settings.inputs.recordButton, 'memo');
  });

  it('an older revision arriving late does not change the settings or the ETag', async () => {
    const h = setup();
    await post(h, [{ id: 'new', deviceId: 'ring-1', inputs: { hold: 'memo' }, createdAt: T0 + 100 }]);
    await post(h, [{ id: 'old', deviceId: 'ring-1', inputs: { appRecord: 'clip' }, createdAt: T0 + 50 }]);
    const s = await settings(h, 'ring-1');
    assert.deepEqual(s.json.settings.inputs, { ...RING_DEFAULTS, hold: 'memo' });
    assert.equal(s.headers.get('etag'), '"2"');
  });

  it('the same id with the same content is a no-op (also without createdAt, or with a subset of inputs)', async () => {
    const h = setup();
    const first = await post(h, [{ id: 'r1', deviceId: 'ring-1', inputs: { hold: 'memo' }, createdAt: T0 + 5 }]);
    h.clock.advance(60_000);
    for (const again of [
      { id: 'r1', deviceId: 'ring-1', inputs: { hold: 'memo' }, createdAt: T0 + 5 },
      { id: 'r1', deviceId: 'ring-1', inputs: { hold: 'memo' } },
      { id: 'r1', deviceId: 'ring-1', inputs: { hold: 'memo', doubleTap: 'memo' } },
    ]) {
      const res = await post(h, [again]);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.json, first.json);
    }
    assert.equal((await list(h)).json.revisions.length, 1);
    assert.equal((await settings(h, 'ring-1')).headers.get('etag'), '"2"');
  });

  it('the same id with other content gives 409 revision_conflict and stores nothing of the batch', async () => {
    const h = setup();
    await post(h, [{ id: 'r1', deviceId: 'ring-1', inputs: { hold: 'memo' }, createdAt: T0 }]);
    for (const other of [
      { id: 'r1', deviceId: 'ring-1', inputs: { hold: 'clip' } },
      { id: 'r1', deviceId: 'ring-1', inputs: { doubleTap: 'clip' } },
      { id: 'r1', deviceId: 'ring-1', inputs: { hold: 'memo' }, createdAt: T0 + 1 },
      { id: 'r1', deviceId: 'pin-1', inputs: {} },
    ]) {
      const res = await post(h, [{ id: 'fresh', deviceId: 'pin-1', inputs: { recordButton: 'clip' } }, other]);
      assertError(res, 409, 'revision_conflict', 'revisions\\[1\\]');
    }
    assert.deepEqual((await list(h)).json.revisions.map((r: { id: string }) => r.id), ['r1']);
  });

  it('an unknown device gives 404', async () => {
    const h = setup();
    assertError(await post(h, [{ id: 'r1', deviceId: 'nope', inputs: {} }]), 404, 'not_found', 'nope');
  });

  it('inputs the device does not have, unknown inputs and values give 400 naming them', async () => {
    const h = setup();
    assertError(await post(h, [{ id: 'r1', deviceId: 'ring-1', inputs: { recordButton: 'clip' } }]), 400, 'invalid_request', 'revisions\\[0\\]\\.inputs\\.recordButton');
    assertError(await post(h, [{ id: 'r1', deviceId: 'pin-1', inputs: { hold: 'clip' } }]), 400, 'invalid_request', 'inputs\\.hold');
    assertError(await post(h, [{ id: 'r1', deviceId: 'pin-1', inputs: { knock: 'clip' } }]), 400, 'invalid_request', 'inputs\\.knock');
    assertError(await post(h, [{ id: 'r1', deviceId: 'pin-1', inputs: { recordButton: 'audio' } }]), 400, 'invalid_request', 'inputs\\.recordButton');
  });

  it('malformed bodies give 400 naming the field', async () => {
    const h = setup();
    assertError(await h.req('POST', '/api/v1/input-mappings', { token: h.session, body: {} }), 400, 'invalid_request', 'body\\.revisions');
    assertError(await post(h, [{ id: 'bad id', deviceId: 'ring-1', inputs: {} }]), 400, 'invalid_request', 'revisions\\[0\\]\\.id');
    assertError(await post(h, [{ id: 'r', deviceId: 'ring-1', inputs: {}, createdAt: -1 }]), 400, 'invalid_request', 'createdAt');
    assertError(await post(h, [{ id: 'r', deviceId: 'ring-1', inputs: {}, createdAt: 1.5 }]), 400, 'invalid_request', 'createdAt');
    assertError(await post(h, [{ id: 'r', deviceId: 'ring-1', inputs: {}, extra: true }]), 400, 'invalid_request', 'extra');
  });
});

describe('v2 PATCH appends revisions', () => {
  const patch = (h: H, inputs: unknown, tag: string) =>
    h.req('PATCH', '/api/v2/devices/ring-1/settings', { token: h.session, body: { inputs }, headers: { 'if-match': tag } });

  it('each real change appends one complete, immutable revision visible in v1', async () => {
    const h = setup();
    await patch(h, { hold: 'memo' }, '"1"');
    h.clock.advance(1000);
    await patch(h, { hold: 'memo' }, '"2"'); // no change: no revision
    await patch(h, { doubleTap: 'clip' }, '"2"');
    const revs = (await list(h)).json.revisions;
    assert.equal(revs.length, 2);
    assert.deepEqual(revs[0].inputs, { ...RING_DEFAULTS, hold: 'memo' });
    assert.deepEqual(revs[1].inputs, { ...RING_DEFAULTS, hold: 'memo', doubleTap: 'clip' });
    assert.equal(revs[0].createdAt, T0);
    assert.equal(revs[1].createdAt, T0 + 1000);
    assert.match(revs[0].id, /^map_/);
  });

  it('still takes effect after a v1 revision stamped in the future', async () => {
    const h = setup();
    await post(h, [{ id: 'ahead', deviceId: 'ring-1', inputs: { hold: 'memo' }, createdAt: T0 + 3_600_000 }]);
    const res = await patch(h, { appRecord: 'clip' }, '"2"');
    assert.deepEqual(res.json.settings.inputs, { ...RING_DEFAULTS, hold: 'memo', appRecord: 'clip' });
    assert.deepEqual((await settings(h, 'ring-1')).json, res.json);
  });
});

describe('GET /api/v1/devices', () => {
  it('answers 200 { devices } like v2 and needs settings:read', async () => {
    const h = setup();
    const res = await h.req('GET', '/api/v1/devices', { token: h.key(['settings:read']) });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json, { devices: [{ id: 'pin-1', name: 'Pin', model: 'pin' }, { id: 'ring-1', name: 'Ring', model: 'ring' }] });
    assertError(await h.req('GET', '/api/v1/devices', { token: h.key(['events:read']) }), 403, 'forbidden');
  });
});
