// v2 /api-keys: session-only key management (docs/decisions.md §3).
import * as v from 'valibot';
import type { HttpDeps } from '../env';
import type { ApiRouter } from '../router';
import { Expiry, IdParams, Name, Permissions } from '../schemas';
import { KeyMetadataSchema } from '../schemas/api-keys';

export function registerApiKeys(r: ApiRouter, deps: HttpDeps): void {
  const { auth } = deps.services;
  r.add(
    {
      method: 'post', path: '/api-keys', operationId: 'createApiKey', tag: 'api-keys', access: 'session',
      summary: 'Create an API key; the secret is returned once',
      body: v.strictObject({ name: Name, permissions: Permissions, expiry: Expiry }),
      responses: { 201: { description: 'Created', schema: v.object({ key: KeyMetadataSchema, secret: v.string() }) } },
    },
    (c, { body, principal }) => c.json(auth.createKey(principal.accountId, body), 201),
  );
  r.add(
    {
      method: 'get', path: '/api-keys', operationId: 'listApiKeys', tag: 'api-keys', access: 'session',
      summary: 'List API keys (active and revoked), without secrets',
      responses: { 200: { description: 'Keys', schema: v.object({ keys: v.array(KeyMetadataSchema) }) } },
    },
    (c, { principal }) => c.json({ keys: auth.listKeys(principal.accountId) }),
  );
  r.add(
    {
      method: 'delete', path: '/api-keys/{id}', operationId: 'revokeApiKey', tag: 'api-keys', access: 'session',
      summary: 'Revoke an API key; later requests with it get 401',
      params: IdParams,
      responses: { 204: { description: 'Revoked' } },
    },
    (c, { params, principal }) => {
      auth.revokeKey(principal.accountId, params.id);
      return c.body(null, 204);
    },
  );
}
