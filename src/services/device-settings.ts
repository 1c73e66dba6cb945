// Per-device input settings, kept as immutable input-mapping revisions (docs/decisions.md §7). The newest
// revision of a device (by createdAt, then insertion order) is its v2 settings; a device without
// one uses the defaults of docs/decisions.md §15. devices.settings_revision is the settings ETag and advances
// whenever the effective mapping changes, whether through a v2 PATCH or a v1 merge, so a v2
// client holding an old ETag cannot overwrite a change it has not seen.
import type { Core } from '../context';
import { AppError, invalid } from '../errors';
import { newId } from '../ids';
import type { DeviceRow } from '../store/device-store';
import { InputMappingStore, type InputMappingRow } from '../store/input-mapping-store';
import {
  INPUT_DEFAULTS,
  MODEL_INPUTS,
  checkInputs,
  completeMapping,
  defaultMapping,
  isInputName,
  sameMapping,
  type InputMapping,
  type RecordingType,
} from './device-inputs';
import type { DeviceModel, DeviceService } from './devices';

export interface DeviceSettings {
  inputs: InputMapping;
  /** The ETag value. */
  revision: number;
}

export interface InputMappingRevision {
  id: string;
  deviceId: string;
  inputs: InputMapping;
  createdAt: number;
}

export interface RevisionInput {
  id: string;
  deviceId: string;
  inputs: Record<string, string>;
  createdAt?: number | undefined;
}

const revisionJson = (r: InputMappingRow): InputMappingRevision => ({
  id: r.id,
  deviceId: r.device_id,
  inputs: JSON.parse(r.inputs) as InputMapping,
  createdAt: r.created_at,
});

const modelOf = (d: DeviceRow): DeviceModel => d.model as DeviceModel;

export class DeviceSettingsService {
  readonly store: InputMappingStore;

  constructor(
    private readonly core: Core,
    private readonly devices: DeviceService,
  ) {
    this.store = new InputMappingStore(core.db);
  }

  /** The current mapping of a device: its newest revision, else the defaults of its model. */
  private current(accountId: string, device: DeviceRow): InputMapping {
    const latest = this.store.latest(accountId, device.id);
    return latest ? (JSON.parse(latest.inputs) as InputMapping) : defaultMapping(modelOf(device));
  }

  /** v2 GET /devices/{id}/settings. */
  get(accountId: string, deviceId: string): DeviceSettings {
    const device = this.devices.get(accountId, deviceId);
    return { inputs: this.current(accountId, device), revision: device.settings_revision };
  }

  /**
   * v2 PATCH: `changes` holds only the inputs to change. Appends a complete revision and advances
   * the ETag, unless nothing changes (then nothing is written).
   */
  patch(accountId: string, deviceId: string, expectedRevision: number, changes: Readonly<Record<string, string>>): DeviceSettings {
    return this.core.writer.write(() => {
      const device = this.devices.get(accountId, deviceId);
      const checked = checkInputs(modelOf(device), changes, 'inputs');
      if (device.settings_revision !== expectedRevision) {
        throw new AppError(
          'precondition_failed',
          `If-Match "${expectedRevision}" is stale: the settings are at revision "${device.settings_revision}"; read them again`,
        );
      }
      const latest = this.store.latest(accountId, device.id);
      const before = this.current(accountId, device);
      const after = completeMapping(modelOf(device), before, checked);
      if (sameMapping(before, after)) return { inputs: before, revision: device.settings_revision };
      // Never older than the newest revision: one posted by a v1 client with a clock ahead of ours
      // would otherwise stay newest and the PATCH would have no effect.
      const createdAt = Math.max(this.core.writer.now, latest?.created_at ?? 0);
      this.store.insert(accountId, newId('map'), device.id, JSON.stringify(after), createdAt);
      return { inputs: after, revision: this.devices.store.bumpSettingsRevision(accountId, device.id) };
    });
  }

  /** v1 GET /input-mappings: the history, oldest first, optionally of one device. */
  revisions(accountId: string, deviceId?: string): InputMappingRevision[] {
    return this.store.list(accountId, deviceId).map(revisionJson);
  }

  /**
   * v1 POST /input-mappings: merges revisions by id, in the order given, all or nothing.
   * A new revision may be partial; it is completed from the revision it follows (by createdAt)
   * or the defaults. A known id is a no-op when the posted revision agrees with the stored one
   * (same device, every posted input equal, createdAt equal if given), else 409.
   */
  merge(accountId: string, revisions: readonly RevisionInput[]): InputMappingRevision[] {
    return this.core.writer.write(() => {
      const now = this.core.writer.now;
      const touched = new Map<string, { device: DeviceRow; before: InputMapping }>();
      const out = revisions.map((r, i) => {
        const where = `revisions[${i}]`;
        const device = this.devices.get(accountId, r.deviceId);
        const checked = checkInputs(modelOf(device), r.inputs, `${where}.inputs`);
        const existing = this.store.byId(accountId, r.id);
        if (existing) {
          const stored = revisionJson(existing);
          const agrees =
            stored.deviceId === r.deviceId &&
            Object.entries(checked).every(([k, val]) => stored.inputs[k as keyof InputMapping] === val) &&
            (r.createdAt === undefined || r.createdAt === stored.createdAt);
          if (!agrees) throw new AppError('revision_conflict', `${where}.id: revision ${r.id} already exists with other content; revisions are immutable`);
          return stored;
        }
        if (!touched.has(device.id)) touched.set(device.id, { device, before: this.current(accountId, device) });
        const createdAt = r.createdAt ?? now;
        const prev = this.store.latestUpTo(accountId, device.id, createdAt);
        const base = prev ? (JSON.parse(prev.inputs) as InputMapping) : {};
        const inputs = completeMapping(modelOf(device), base, checked);
        return revisionJson(this.store.insert(accountId, r.id, device.id, JSON.stringify(inputs), createdAt));
      });
      for (const { device, before } of touched.values()) {
        if (!sameMapping(before, this.current(accountId, device))) this.devices.store.bumpSettingsRevision(accountId, device.id);
      }
      return out;
    });
  }

  /**
   * The type a capture gets from the input that started it, by the device's current mapping.
   * Without a device (a capture started in the app alone) no device mapping applies, so the
   * input's default is used: appRecord → memo. Unknown device → 404; an input the device does
   * not have, or an unknown input → 400 naming captureInput.
   */
  typeForInput(accountId: string, deviceId: string | null, input: string): RecordingType {
    if (!isInputName(input)) throw invalid(`captureInput: unknown input ${JSON.stringify(input)}`);
    if (deviceId === null) return INPUT_DEFAULTS[input];
    const device = this.devices.get(accountId, deviceId);
    if (!MODEL_INPUTS[modelOf(device)].includes(input)) {
      throw invalid(`captureInput: ${input} is not an input of a ${device.model} device`);
    }
    return this.current(accountId, device)[input] ?? INPUT_DEFAULTS[input];
  }
}
