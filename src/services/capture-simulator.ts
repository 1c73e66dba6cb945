// `reclib captures simulate` (docs/decisions.md §12): a native capture made the way a device app makes it
// over v1, so capture rules and text webhooks can be tried without hardware. Same services, same
// order: a session of the account creates a metadata-only pending capture (deviceId and
// captureInput; the input mapping decides clip or memo), then saves its transcript as a second
// write, which announces it and lets the rules decide.
import { randomUUID } from 'node:crypto';
import { AppError } from '../errors';
import { PERMISSIONS, type Principal } from '../permissions';
import type { Services } from '.';
import { isInputName, MODEL_INPUTS } from './device-inputs';
import type { DeviceModel } from './devices';
import type { RecordingRow } from './recording-model';

export interface SimulatedCapture {
  accountId: string;
  deviceId: string;
  input: string;
  transcript: string;
}

/** What a signed-in device app is: the account's app identity with every permission. */
function appPrincipal(s: Services, accountId: string): Principal {
  const account = s.auth.account(accountId);
  return { accountId, kind: 'session', credentialId: 'cli-capture-simulator', integrationId: account.app_integration, permissions: new Set(PERMISSIONS) };
}

export function simulateCapture(s: Services, c: SimulatedCapture): RecordingRow {
  const principal = appPrincipal(s, c.accountId);
  const device = s.devices.store.get(c.accountId, c.deviceId);
  if (!device) {
    const known = s.devices.list(c.accountId).map((d) => d.id);
    throw new AppError('not_found', `device ${c.deviceId} not found in account ${c.accountId} (devices: ${known.length ? known.join(', ') : 'none; add one with reclib devices add'})`);
  }
  const inputs = MODEL_INPUTS[device.model as DeviceModel];
  if (!isInputName(c.input) || !inputs.includes(c.input)) {
    throw new AppError('invalid_request', `--input ${c.input} is not an input of ${device.id} (a ${device.model}: ${inputs.join(', ')})`);
  }
  if (c.transcript.trim() === '') throw new AppError('invalid_request', '--transcript must not be empty');
  // As over v1, the type sent is overridden: RecordingService lets the input mapping decide it.
  const { row: pending } = s.recordings.create(principal, { type: 'memo', deviceId: device.id, captureInput: c.input }, `simulate-${randomUUID()}`);
  return s.recordings.update(principal, pending.id, { transcript: c.transcript }, pending.revision);
}
