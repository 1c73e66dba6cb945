// The permission names (docs/decisions.md §16; = v1 token scopes) and who is calling.
export const PERMISSIONS = [
  'recordings:create',
  'recordings:read',
  'recordings:write',
  'recordings:delete',
  'settings:read',
  'settings:write',
  'events:read',
] as const;

export type Permission = (typeof PERMISSIONS)[number];

export const isPermission = (p: string): p is Permission => (PERMISSIONS as readonly string[]).includes(p);

/** The authenticated caller of one request. */
export interface Principal {
  accountId: string;
  kind: 'key' | 'session';
  /** key_… or ses_… */
  credentialId: string;
  /** The integration identity: the key's own, or the account's app identity for a session. */
  integrationId: string;
  permissions: ReadonlySet<Permission>;
}

export const can = (p: Principal, permission: Permission): boolean => p.permissions.has(permission);
