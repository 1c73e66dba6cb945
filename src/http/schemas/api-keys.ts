// Key metadata as v2 /api-keys and v1 tokens show it.
import * as v from 'valibot';

export const KeyMetadataSchema = v.object({
  id: v.string(),
  name: v.string(),
  permissions: v.array(v.string()),
  integrationId: v.string(),
  createdAt: v.number(),
  expiresAt: v.number(),
  lastUsedAt: v.nullable(v.number()),
  revokedAt: v.nullable(v.number()),
});
