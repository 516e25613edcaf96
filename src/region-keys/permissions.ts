/** What a region API key may do. Every route of the feature needs exactly one of these. */
export const PERMISSIONS = ['region:read', 'keys:write'] as const;
export type Permission = (typeof PERMISSIONS)[number];

/** The permission that keeps a region manageable: the last-key rule counts keys holding it. */
export const MANAGE_KEYS: Permission = 'keys:write';

/** Permissions in the order of PERMISSIONS, without duplicates: how they are stored and shown. */
export const normalisePermissions = (permissions: readonly Permission[]): Permission[] =>
  PERMISSIONS.filter((permission) => permissions.includes(permission));
