// Conformance: the endpoint tables of docs/decisions.md §16 (v2) and §21 (v1) and the
// session-only operations of §16, row by row. Each row names its method, path and the permission it needs
// (or the signed-in session); the test checks the running app and the OpenAPI documents agree.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PERMISSIONS, type Permission } from '../../src/permissions';
import { harness, type Harness } from '../helpers/harness';

type Access = Permission | 'session';
interface Row {
  method: string;
  path: string;
  access: Access;
  operationId?: string;
}

// The v2 table (docs/decisions.md §16), verbatim.
const V2: Row[] = [
  { method: 'POST', path: '/recordings', access: 'recordings:create' },
  { method: 'GET', path: '/recordings/{id}', access: 'recordings:read' },
  { method: 'PATCH', path: '/recordings/{id}', access: 'recordings:write' },
  { method: 'DELETE', path: '/recordings/{id}', access: 'recordings:delete' },
  { method: 'GET', path: '/recordings', access: 'recordings:read' },
  { method: 'GET', path: '/devices', access: 'settings:read' },
  { method: 'GET', path: '/devices/{id}/settings', access: 'settings:read' },
  { method: 'PATCH', path: '/devices/{id}/settings', access: 'settings:write' },
  { method: 'POST', path: '/api-keys', access: 'session' },
  { method: 'GET', path: '/api-keys', access: 'session' },
  { method: 'DELETE', path: '/api-keys/{id}', access: 'session' },
  { method: 'POST', path: '/webhooks', access: 'session' },
  { method: 'GET', path: '/webhooks', access: 'session' },
  { method: 'DELETE', path: '/webhooks/{id}', access: 'session' },
  { method: 'GET', path: '/events', access: 'events:read' },
];

// The v1 table (docs/decisions.md §21), verbatim (the last three rows have no operation id there).
const V1: Row[] = [
  { operationId: 'listDevices', method: 'GET', path: '/devices', access: 'settings:read' },
  { operationId: 'listRecordings', method: 'GET', path: '/recordings', access: 'recordings:read' },
  { operationId: 'createRecording', method: 'POST', path: '/recordings', access: 'recordings:create' },
  { operationId: 'latestClip', method: 'GET', path: '/recordings/latest-clip', access: 'recordings:read' },
  { operationId: 'getRecording', method: 'GET', path: '/recordings/{id}', access: 'recordings:read' },
  { operationId: 'updateRecording', method: 'PUT', path: '/recordings/{id}', access: 'recordings:write' },
  { operationId: 'deleteRecording', method: 'DELETE', path: '/recordings/{id}', access: 'recordings:delete' },
  { operationId: 'putProcessing', method: 'PUT', path: '/recordings/{id}/processing', access: 'recordings:write' },
  { operationId: 'putAudioAsset', method: 'PUT', path: '/recordings/{id}/audio-assets', access: 'recordings:write' },
  { operationId: 'getInputMappings', method: 'GET', path: '/input-mappings', access: 'settings:read' },
  { operationId: 'putInputMappings', method: 'POST', path: '/input-mappings', access: 'settings:write' },
  { operationId: 'listEvents', method: 'GET', path: '/events', access: 'events:read' },
  { operationId: 'listTokens', method: 'GET', path: '/tokens', access: 'session' },
  { operationId: 'createToken', method: 'POST', path: '/tokens', access: 'session' },
  { method: 'POST', path: '/webhooks', access: 'session' },
  { method: 'POST', path: '/recordings/{id}/deliveries', access: 'session' },
  { method: 'GET', path: '/recordings/{id}/deliveries', access: 'session' },
];

const concrete = (path: string) => path.replace('{id}', 'missing-id-1');

async function call(h: Harness, prefix: string, row: Row, token?: string) {
  const write = row.method !== 'GET' && row.method !== 'DELETE';
  return h.req(row.method, prefix + concrete(row.path), { token, ...(write ? { body: {} } : {}) });
}

function checkTable(version: 'v1' | 'v2', rows: Row[]) {
  const prefix = `/api/${version}`;

  it('without credentials every operation of the table answers 401 unauthenticated', async () => {
    const h = harness();
    for (const row of rows) {
      const res = await call(h, prefix, row);
      assert.equal(res.status, 401, `${row.method} ${row.path}: ${res.text}`);
      assert.equal(res.json.error.code, 'unauthenticated');
    }
  });

  it('an operation listing a permission refuses a key lacking exactly it (403 forbidden) and admits a key holding only it', async () => {
    const h = harness();
    for (const row of rows) {
      if (row.access === 'session') continue;
      const lacking = h.key(PERMISSIONS.filter((p) => p !== row.access));
      const refused = await call(h, prefix, row, lacking);
      assert.equal(refused.status, 403, `${row.method} ${row.path} without ${row.access}: ${refused.text}`);
      assert.equal(refused.json.error.code, 'forbidden');
      assert.match(refused.json.error.message, new RegExp(row.access));
      const only = await call(h, prefix, row, h.key([row.access]));
      assert.ok(![401, 403].includes(only.status), `${row.method} ${row.path} with only ${row.access}: ${only.status} ${only.text}`);
      // Authentication 2: a signed-in session is accepted on operations that list a permission.
      const session = await call(h, prefix, row, h.session);
      assert.ok(![401, 403].includes(session.status), `${row.method} ${row.path} with a session: ${session.status} ${session.text}`);
    }
  });

  it('a session-only operation refuses a key holding every permission (403 session_required) and admits the session', async () => {
    const h = harness();
    const everything = h.key();
    for (const row of rows) {
      if (row.access !== 'session') continue;
      const refused = await call(h, prefix, row, everything);
      assert.equal(refused.status, 403, `${row.method} ${row.path}: ${refused.text}`);
      assert.equal(refused.json.error.code, 'session_required');
      const session = await call(h, prefix, row, h.session);
      assert.ok(![401, 403].includes(session.status), `${row.method} ${row.path} with a session: ${session.status} ${session.text}`);
    }
  });

  it('the OpenAPI document describes every row with the same access (and the spec operation ids)', async () => {
    const h = harness();
    const doc = (await h.req('GET', `${prefix}/openapi.json`)).json;
    for (const row of rows) {
      const op = doc.paths[row.path]?.[row.method.toLowerCase()];
      assert.ok(op, `${row.method} ${row.path} is documented`);
      if (row.operationId) assert.equal(op.operationId, row.operationId);
      if (row.access === 'session') {
        assert.deepEqual(op.security, [{ session: [] }, { sessionCookie: [] }], `${row.method} ${row.path} is session-only`);
      } else {
        assert.equal(op.description, `Permission: \`${row.access}\`.`, `${row.method} ${row.path}`);
      }
    }
  });
}

describe('v2 endpoint table (docs/decisions.md §16): each operation needs exactly the listed permission or a session', () => checkTable('v2', V2));
describe('v1 operation table (docs/decisions.md §21): each operation needs exactly the listed permission or a session', () => checkTable('v1', V1));
