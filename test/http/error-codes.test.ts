// Conformance: docs/decisions.md §4's code table (status → codes) is the one error map, and both OpenAPI
// documents publish it (the contract decides what the spec leaves "not shown": the set of
// error.code values, which clients branch on).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { errorStatus } from '../../src/errors';
import { harness } from '../helpers/harness';

// docs/decisions.md §4, verbatim.
const CONTRACT_CODES: Record<string, number> = {
  invalid_request: 400,
  unauthenticated: 401,
  forbidden: 403,
  session_required: 403,
  wrong_application: 403,
  not_found: 404,
  idempotency_conflict: 409,
  revision_conflict: 409,
  immutable_field: 409,
  not_editable: 409,
  limit_reached: 409,
  webhook_disabled: 409,
  gone: 410,
  precondition_failed: 412,
  payload_too_large: 413,
  precondition_required: 428,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
};

describe('docs/decisions.md §4: error codes', () => {
  it('the error map holds exactly the contract codes, each with its status', () => {
    assert.deepEqual({ ...errorStatus }, CONTRACT_CODES);
  });

  it('both OpenAPI documents list every code with its status in the Error envelope, referenced by every operation', async () => {
    const h = harness();
    for (const version of ['v1', 'v2']) {
      const doc = (await h.req('GET', `/api/${version}/openapi.json`)).json;
      const code = doc.components.schemas.Error.properties.error.properties.code;
      assert.deepEqual([...code.enum].sort(), Object.keys(CONTRACT_CODES).sort());
      for (const [name, status] of Object.entries(CONTRACT_CODES)) assert.match(code.description, new RegExp(`\\b${name} \\(${status}\\)`));
      for (const item of Object.values<Record<string, { responses?: Record<string, { description: string }> }>>(doc.paths)) {
        for (const op of Object.values(item)) {
          if (op.responses) assert.match(op.responses.default!.description, /components\.schemas\.Error/);
        }
      }
    }
  });
});
