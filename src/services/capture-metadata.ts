// Rules on an app capture's metadata (decisions.md §7, §15) that every entry point gets, because
// RecordingService applies them: the v1 API, the web app, MCP and `reclib captures simulate`.
//   - the type of an app capture is decided by the input mapping of the input that started it;
//   - capture metadata, at create or reported late, names a known device and an input it has;
//   - an edit may send the fixed fields back as it read them, but not change them (v1 PUT).
import { AppError, invalid } from '../errors';
import type { Principal } from '../permissions';
import type { RecordingType } from './device-inputs';
import type { CreateInput } from './recording-input';
import type { RecordingRow } from './recording-model';

/** The device input mappings (DeviceSettingsService). */
export interface InputMappings {
  /** The type by the device's current mapping (the input's default without a device); 404 unknown device, 400 unknown input. */
  typeForInput(accountId: string, deviceId: string | null, input: string): RecordingType;
}

/**
 * The type of a new recording. For a session create with captureInput (an app capture) the input
 * mapping decides and the type sent is overridden; a clip so decided may not carry audio.
 */
export function captureType(mappings: InputMappings, principal: Principal, input: CreateInput): RecordingType {
  if (principal.kind !== 'session' || input.captureInput === undefined) return input.type;
  const type = mappings.typeForInput(principal.accountId, input.deviceId ?? null, input.captureInput);
  if (type === 'clip' && (input.audio?.length ?? 0) > 0) {
    throw invalid(`audio: the ${input.captureInput} input makes this capture a clip, which keeps no audio`);
  }
  return type;
}

/** Capture metadata an app reports (late or not) passes the check a create with it passes. */
export function checkCaptureMetadata(mappings: InputMappings, principal: Principal, capture: { deviceId: string | null; captureInput: string | null }): void {
  if (principal.kind === 'session' && capture.captureInput !== null) mappings.typeForInput(principal.accountId, capture.deviceId, capture.captureInput);
}

/** Fixed fields an edit sent back as it read them (v1 names: `kind` is the type). */
export interface EchoedFields {
  kind?: RecordingType | undefined;
  recordedAt?: number | undefined;
  externalId?: string | undefined;
  deviceId?: string | undefined;
  source?: string | undefined;
  captureInput?: string | undefined;
}

/** 409 immutable_field for the first echoed field that differs from the stored row. */
export function checkEchoedFields(row: RecordingRow, echoed: EchoedFields): void {
  const fixed: Array<[string, unknown, unknown]> = [
    ['kind', echoed.kind, row.type],
    ['recordedAt', echoed.recordedAt, row.recorded_at],
    ['externalId', echoed.externalId, row.external_id],
    ['deviceId', echoed.deviceId, row.device_id],
    ['source', echoed.source, row.source],
    ['captureInput', echoed.captureInput, row.capture_input],
  ];
  for (const [field, sent, stored] of fixed) {
    if (sent !== undefined && sent !== stored) {
      throw new AppError('immutable_field', `${field}: cannot be changed by an edit; editable are title, transcript, summary, pinned`);
    }
  }
}
