// The account's devices as the library last loaded them, so that a recording's page can name its
// device without loading the list again on every visit (the session's requests are rate limited).
import { api } from './api';
import type { Device } from './api-types';

let last: Device[] | undefined;

/** The list, loaded now (the library does on each visit, so a device added meanwhile shows). */
export function loadDevices(): Promise<Device[]> {
  return api.devices().then((list) => (last = list));
}

/** The list that knows `id`: the one last loaded if it does, else a fresh one. */
export function devicesKnowing(id: string): Promise<Device[]> {
  return last?.some((d) => d.id === id) ? Promise.resolve(last) : loadDevices();
}
