// Device shapes shared by the v2 and v1 routes (v1 lists devices and edits input mappings with them).
import * as v from 'valibot';
import { INPUT_NAMES, RECORDING_TYPES, type InputName } from '../../services/device-inputs';
import { DEVICE_MODELS } from '../../services/devices';

export const DeviceSchema = v.object({ id: v.string(), name: v.string(), model: v.picklist(DEVICE_MODELS) });
export const DevicesResponse = v.object({ devices: v.array(DeviceSchema) });

const InputType = v.optional(v.picklist(RECORDING_TYPES, 'must be "clip" or "memo"'));

/**
 * input name → clip|memo. A strict object (not a record) so that an unknown input is a 400 naming
 * it, even a name like "constructor" that a record would silently drop. Which of these a device
 * has is checked by the service (400 naming the input).
 */
export const InputsSchema = v.pipe(
  v.strictObject(Object.fromEntries(INPUT_NAMES.map((i) => [i, InputType])) as Record<InputName, typeof InputType>),
  v.description('Input name → "clip" | "memo". ring: hold, doubleTap, tripleTap, appRecord; pin and pendant: recordButton, appRecord.'),
);
