// Key metadata as v2 /api-keys and v1 tokens show it.
import * as v from 'valibot';
import { UnixMs } from './numbers';

export const KeyMetadataSchema = v.object({
  id: v.string(),
  name: v.string(),
  permissions: v.array(v.string()),
  integrationId: v.string(),
  createdAt: UnixMs,
  expiresAt: UnixMs,
  lastUsedAt: v.nullable(UnixMs),
  revokedAt: v.nullable(UnixMs),
});
