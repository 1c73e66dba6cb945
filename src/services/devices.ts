// Devices of an account. Devices are registered by the operator (CLI); the API lists them.
import type { Core } from '../context';
import { invalid, notFound } from '../errors';
import { ID_PATTERN } from '../ids';
import { DeviceStore, type DeviceRow } from '../store/device-store';

export const DEVICE_MODELS = ['ring', 'pin', 'pendant'] as const;
export type DeviceModel = (typeof DEVICE_MODELS)[number];

export interface Device {
  id: string;
  name: string;
  model: DeviceModel;
}

export const deviceJson = (d: DeviceRow): Device => ({ id: d.id, name: d.name, model: d.model as DeviceModel });

export class DeviceService {
  readonly store: DeviceStore;

  constructor(private readonly core: Core) {
    this.store = new DeviceStore(core.db);
  }

  add(accountId: string, input: { id: string; name: string; model: string }): Device {
    if (!ID_PATTERN.test(input.id) || input.id.length > 256) throw invalid(`device id must be 1-256 chars matching ${ID_PATTERN.source}`);
    if (!(DEVICE_MODELS as readonly string[]).includes(input.model)) throw invalid(`model must be one of ${DEVICE_MODELS.join(', ')}`);
    if (!input.name.trim()) throw invalid('name must not be empty');
    return this.core.writer.write(() => {
      if (this.store.get(accountId, input.id)) throw invalid(`device ${input.id} already exists`);
      const row: DeviceRow = { account_id: accountId, id: input.id, name: input.name, model: input.model, settings_revision: 1, created_at: this.core.writer.now };
      this.store.insert(row);
      return deviceJson(row);
    });
  }

  list(accountId: string): Device[] {
    return this.store.list(accountId).map(deviceJson);
  }

  /** The device row, or 404. */
  get(accountId: string, id: string): DeviceRow {
    const row = this.store.get(accountId, id);
    if (!row) throw notFound(`device ${id}`);
    return row;
  }
}
