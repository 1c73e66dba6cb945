// Spec "What the service does" 5 and "device settings": a capture's type is chosen by the current
// input mapping of the input that started it; settings apply to future captures only.
// typeForInput() is what the v1 capture code calls when a recording is created.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../src/errors';
import { harness } from '../helpers/harness';

function setup() {
  const h = harness();
  h.services.devices.add(h.accountId, { id: 'ring-1', name: 'Ring', model: 'ring' });
  h.services.devices.add(h.accountId, { id: 'pendant-1', name: 'Pendant', model: 'pendant' });
  return { h, s: h.services.deviceSettings };
}

const codeOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (e) {
    if (e instanceof AppError) return `${e.code}: ${e.message}`;
    throw e;
  }
  return 'ok';
};

describe('typeForInput', () => {
  it('uses the spec defaults while a device has no mapping', () => {
    const { h, s } = setup();
    assert.equal(s.typeForInput(h.accountId, 'ring-1', 'hold'), 'clip');
    assert.equal(s.typeForInput(h.accountId, 'ring-1', 'doubleTap'), 'memo');
    assert.equal(s.typeForInput(h.accountId, 'ring-1', 'tripleTap'), 'memo');
    assert.equal(s.typeForInput(h.accountId, 'ring-1', 'appRecord'), 'memo');
    assert.equal(s.typeForInput(h.accountId, 'pendant-1', 'recordButton'), 'memo');
  });

  it('follows the current mapping: a change applies to the next capture', () => {
    const { h, s } = setup();
    assert.equal(s.typeForInput(h.accountId, 'ring-1', 'hold'), 'clip');
    s.patch(h.accountId, 'ring-1', 1, { hold: 'memo' });
    assert.equal(s.typeForInput(h.accountId, 'ring-1', 'hold'), 'memo');
    s.merge(h.accountId, [{ id: 'v1-rev', deviceId: 'pendant-1', inputs: { recordButton: 'clip' } }]);
    assert.equal(s.typeForInput(h.accountId, 'pendant-1', 'recordButton'), 'clip');
  });

  it('an app capture without a device uses the input default (appRecord → memo)', () => {
    const { h, s } = setup();
    s.patch(h.accountId, 'ring-1', 1, { appRecord: 'clip' }); // a device mapping does not apply without that device
    assert.equal(s.typeForInput(h.accountId, null, 'appRecord'), 'memo');
    assert.equal(s.typeForInput(h.accountId, null, 'hold'), 'clip');
  });

  it('an input the device does not have or an unknown input is 400 naming captureInput; an unknown device 404', () => {
    const { h, s } = setup();
    assert.match(codeOf(() => s.typeForInput(h.accountId, 'ring-1', 'recordButton')), /^invalid_request: captureInput/);
    assert.match(codeOf(() => s.typeForInput(h.accountId, 'pendant-1', 'hold')), /^invalid_request: captureInput/);
    assert.match(codeOf(() => s.typeForInput(h.accountId, null, 'knock')), /^invalid_request: captureInput/);
    assert.match(codeOf(() => s.typeForInput(h.accountId, 'nope', 'hold')), /^not_found/);
  });

  it("another account's mapping of a device with the same id does not apply", () => {
    const { h, s } = setup();
    const other = h.services.auth.createAccount('other');
    h.services.devices.add(other.id, { id: 'ring-1', name: 'Theirs', model: 'ring' });
    s.patch(other.id, 'ring-1', 1, { hold: 'memo' });
    assert.equal(s.typeForInput(h.accountId, 'ring-1', 'hold'), 'clip');
    assert.equal(s.typeForInput(other.id, 'ring-1', 'hold'), 'memo');
  });
});
