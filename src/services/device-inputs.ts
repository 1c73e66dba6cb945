// Device inputs (docs/decisions.md §15): which inputs each model has and the type each one captures by default.
// Pure: the settings service, capture code and webhook rules share these tables.
import { invalid } from '../errors';
import { RECORDING_TYPES, type RecordingType } from '../store/recording-row';
import type { DeviceModel } from './devices';

export const INPUT_NAMES = ['hold', 'doubleTap', 'tripleTap', 'recordButton', 'appRecord'] as const;
export type InputName = (typeof INPUT_NAMES)[number];

export { RECORDING_TYPES, type RecordingType };

/** A device's complete mapping: every supported input, in the order of MODEL_INPUTS. */
export type InputMapping = Partial<Record<InputName, RecordingType>>;

export const INPUT_DEFAULTS: Readonly<Record<InputName, RecordingType>> = {
  hold: 'clip',
  doubleTap: 'memo',
  tripleTap: 'memo',
  recordButton: 'memo',
  appRecord: 'memo',
};

/** The ring has gestures; pin and pendant have a physical record button (docs/decisions.md §2). */
export const MODEL_INPUTS: Readonly<Record<DeviceModel, readonly InputName[]>> = {
  ring: ['hold', 'doubleTap', 'tripleTap', 'appRecord'],
  pin: ['recordButton', 'appRecord'],
  pendant: ['recordButton', 'appRecord'],
};

export const isInputName = (s: string): s is InputName => (INPUT_NAMES as readonly string[]).includes(s);
const isRecordingType = (s: string): s is RecordingType => (RECORDING_TYPES as readonly string[]).includes(s);

export function defaultMapping(model: DeviceModel): InputMapping {
  return Object.fromEntries(MODEL_INPUTS[model].map((i) => [i, INPUT_DEFAULTS[i]]));
}

/**
 * Checks inputs sent for a device: each name must be an input of that model and each value clip
 * or memo. `where` prefixes the message so the caller's field is named ("inputs.hold: …").
 */
export function checkInputs(model: DeviceModel, inputs: Readonly<Record<string, string>>, where: string): InputMapping {
  const supported = MODEL_INPUTS[model];
  const out: InputMapping = {};
  for (const [name, value] of Object.entries(inputs)) {
    if (!isInputName(name)) throw invalid(`${where}.${name}: unknown input; inputs are ${INPUT_NAMES.join(', ')}`);
    if (!supported.includes(name)) throw invalid(`${where}.${name}: not an input of a ${model} device (${supported.join(', ')})`);
    if (!isRecordingType(value)) throw invalid(`${where}.${name}: must be "clip" or "memo"`);
    out[name] = value;
  }
  return out;
}

/** The complete mapping of a model: `changes` over `base` over the defaults, in canonical order. */
export function completeMapping(model: DeviceModel, base: InputMapping, changes: InputMapping): InputMapping {
  return Object.fromEntries(MODEL_INPUTS[model].map((i) => [i, changes[i] ?? base[i] ?? INPUT_DEFAULTS[i]]));
}

export function sameMapping(a: InputMapping, b: InputMapping): boolean {
  return INPUT_NAMES.every((i) => a[i] === b[i]);
}
