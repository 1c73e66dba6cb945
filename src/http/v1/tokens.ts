// v1 /tokens: the same objects as v2 keys, with "scopes" for "permissions" (docs/decisions.md §3).
import * as v from 'valibot';
import type { KeyMetadata } from '../../services/auth';
import type { HttpDeps } from '../env';
import type { ApiRouter } from '../router';
import { KeyMetadataSchema } from '../schemas/api-keys';
import { Expiry, Name, Permissions } from '../schemas';

// The v2 key metadata with "scopes" in place of "permissions": one definition of the shape.
const TokenSchema = v.object({ ...v.omit(KeyMetadataSchema, ['permissions']).entries, scopes: KeyMetadataSchema.entries.permissions });

const asToken = ({ permissions, ...rest }: KeyMetadata) => ({ ...rest, scopes: permissions });

export function registerTokens(r: ApiRouter, deps: HttpDeps): void {
  const { auth } = deps.services;
  r.add(
    {
      method: 'get', path: '/tokens', operationId: 'listTokens', tag: 'tokens', access: 'session',
      summary: 'List integration tokens without secrets',
      responses: { 200: { description: 'Tokens', schema: v.object({ tokens: v.array(TokenSchema) }) } },
    },
    (c, { principal }) => c.json({ tokens: auth.listKeys(principal.accountId).map(asToken) }),
  );
  r.add(
    {
      method: 'post', path: '/tokens', operationId: 'createToken', tag: 'tokens', access: 'session',
      summary: 'Create an integration token; the secret is returned once',
      body: v.strictObject({ name: Name, scopes: Permissions, expiry: Expiry }),
      responses: { 200: { description: 'Created', schema: v.object({ token: TokenSchema, secret: v.string() }) } },
    },
    (c, { body, principal }) => {
      const { key, secret } = auth.createKey(principal.accountId, { name: body.name, permissions: body.scopes, expiry: body.expiry });
      return c.json({ token: asToken(key), secret });
    },
  );
}
