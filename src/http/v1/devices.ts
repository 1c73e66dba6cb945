// v1 listDevices: the same devices as v2 (docs/decisions.md §7 `{ devices }`).
import type { HttpDeps } from '../env';
import type { ApiRouter } from '../router';
import { DevicesResponse } from '../schemas/devices';

export function registerDevicesV1(r: ApiRouter, deps: HttpDeps): void {
  const { devices } = deps.services;
  r.add(
    {
      method: 'get', path: '/devices', operationId: 'listDevices', tag: 'devices', access: { permission: 'settings:read' },
      summary: 'List the devices of the account',
      responses: { 200: { description: 'Devices', schema: DevicesResponse } },
    },
    (c, { principal }) => c.json({ devices: devices.list(principal.accountId) }),
  );
}
