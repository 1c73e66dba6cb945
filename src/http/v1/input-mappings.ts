// v1 getInputMappings / putInputMappings: the app's input-mapping history as immutable
// revisions (docs/decisions.md §7). The newest revision of a device is what v2 settings show and edit.
import * as v from 'valibot';
import type { HttpDeps } from '../env';
import type { ApiRouter } from '../router';
import { Id } from '../schemas';
import { InputsSchema } from '../schemas/devices';
import { UnixMs } from '../schemas/numbers';

const Revision = v.object({
  id: v.string(),
  deviceId: v.string(),
  inputs: InputsSchema,
  createdAt: UnixMs,
});
const RevisionsResponse = v.object({ revisions: v.array(Revision) });

const RevisionInput = v.strictObject({
  id: Id,
  deviceId: Id,
  inputs: InputsSchema,
  createdAt: v.optional(
    v.pipe(
      v.number(),
      v.integer('must be a whole number of milliseconds'),
      v.minValue(0, 'must be at least 0'),
      v.maxValue(Number.MAX_SAFE_INTEGER, 'must be at most 9007199254740991'),
      v.description('Unix ms; default: now. Orders the revisions of a device (ties: arrival order).'),
    ),
  ),
});

export function registerInputMappings(r: ApiRouter, deps: HttpDeps): void {
  const { deviceSettings } = deps.services;
  r.add(
    {
      method: 'get', path: '/input-mappings', operationId: 'getInputMappings', tag: 'input-mappings', access: { permission: 'settings:read' },
      summary: 'Input mapping history, oldest first; every revision carries the complete mapping of its device. An unknown deviceId gives an empty list',
      query: v.object({ deviceId: v.optional(Id) }),
      responses: { 200: { description: 'Revisions', schema: RevisionsResponse } },
    },
    (c, { query, principal }) => c.json({ revisions: deviceSettings.revisions(principal.accountId, query.deviceId) }),
  );
  r.add(
    {
      method: 'post', path: '/input-mappings', operationId: 'putInputMappings', tag: 'input-mappings', access: { permission: 'settings:write' },
      summary:
        'Merge immutable revisions by id, all or nothing. A known id with the same content is a no-op; with other content 409 revision_conflict. ' +
        'A new revision may list only some inputs: the rest is taken from the revision before it (by createdAt) or the defaults',
      body: v.strictObject({ revisions: v.pipe(v.array(RevisionInput), v.maxLength(1000, 'must hold at most 1000 revisions')) }),
      responses: {
        200: { description: 'The posted revisions as stored (complete mappings), in the order posted', schema: RevisionsResponse },
        404: { description: 'Unknown device' },
        409: { description: 'An id already holds other content' },
      },
    },
    (c, { body, principal }) => c.json({ revisions: deviceSettings.merge(principal.accountId, body.revisions) }),
  );
}
