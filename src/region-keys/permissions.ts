/** What a region API key may do. Every route of the feature needs exactly one of these. */
export const PERMISSIONS = ['region:read', 'keys:write'] as const;
export type Permission = (typeof PERMISSIONS)[number];

/**
 * What keeps a region able to read and manage itself: the last-key rule counts keys holding all
 * of these. A key holding only keys:write cannot list the region's keys, and never grants the
 * region:read it lacks, so a region left with such keys alone could not read itself again.
 */
export const SELF_MANAGING: readonly Permission[] = PERMISSIONS;

/** Permissions in the order of PERMISSIONS, without duplicates: how they are stored and shown. */
export const normalisePermissions = (permissions: readonly Permission[]): Permission[] =>
  PERMISSIONS.filter((permission) => permissions.includes(permission));
