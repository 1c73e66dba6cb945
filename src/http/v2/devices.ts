// v2 /devices and /devices/{id}/settings (docs/decisions.md §15, §5).
import * as v from 'valibot';
import type { HttpDeps } from '../env';
import { etag } from '../if-match';
import type { ApiRouter } from '../router';
import { IdParams } from '../schemas';
import { DevicesResponse, InputsSchema } from '../schemas/devices';
import { ifMatchFor } from '../request-headers';

const SettingsResponse = v.object({ settings: v.object({ inputs: InputsSchema }) });


export function registerDevices(r: ApiRouter, deps: HttpDeps): void {
  const { devices, deviceSettings } = deps.services;
  r.add(
    {
      method: 'get', path: '/devices', operationId: 'listDevices', tag: 'devices', access: { permission: 'settings:read' },
      summary: 'List the devices of the account',
      responses: { 200: { description: 'Devices', schema: DevicesResponse } },
    },
    (c, { principal }) => c.json({ devices: devices.list(principal.accountId) }),
  );
  r.add(
    {
      method: 'get', path: '/devices/{id}/settings', operationId: 'getDeviceSettings', tag: 'devices', access: { permission: 'settings:read' },
      summary: 'Input settings of a device (only its supported inputs); the ETag header is the settings revision',
      params: IdParams,
      responses: { 200: { description: 'Settings, with ETag', schema: SettingsResponse, headers: ['ETag'] }, 404: { description: 'Unknown device' } },
    },
    (c, { params, principal }) => {
      const s = deviceSettings.get(principal.accountId, params.id);
      c.header('ETag', etag(s.revision));
      return c.json({ settings: { inputs: s.inputs } });
    },
  );
  r.add(
    {
      method: 'patch', path: '/devices/{id}/settings', operationId: 'updateDeviceSettings', tag: 'devices', access: { permission: 'settings:write' },
      summary: 'Change some inputs of a device; send only the changed inputs. Applies to future captures only',
      params: IdParams,
      body: v.strictObject({ inputs: InputsSchema }),
      headers: [{ name: 'If-Match', required: true, description: 'The ETag of the settings GET ("3", W/"3" or 3), at most 100 characters. Missing: 428; stale: 412, read again.' }],
      responses: {
        200: { description: 'The settings after the change, with the new ETag. A change to nothing keeps the revision.', schema: SettingsResponse, headers: ['ETag'] },
        404: { description: 'Unknown device' },
        412: { description: 'The settings changed since the ETag was read' },
        428: { description: 'If-Match missing' },
      },
    },
    (c, { params, body, principal }) => {
      const expected = ifMatchFor(c, () => devices.get(principal.accountId, params.id));
      const s = deviceSettings.patch(principal.accountId, params.id, expected, body.inputs);
      c.header('ETag', etag(s.revision));
      return c.json({ settings: { inputs: s.inputs } });
    },
  );
}
