import type { ApiEnvironment } from './api-key-codec';
import { ConflictError, DomainError, NotFoundError, UnauthenticatedError } from '../common/problem/problem';
import type { Permission } from './permissions';

export const API_KEY_CHALLENGE = 'ApiKey header="X-API-Key"';

export class InvalidApiKeyError extends UnauthenticatedError {
  constructor(detail = 'Send a valid, active region API key in the X-API-Key header.') {
    super(detail, API_KEY_CHALLENGE);
  }
}

/**
 * A well-formed key of the other environment (a sandbox key sent to live, or the reverse):
 * the detail says so, as the integrator's mistake is then the address, not the key.
 */
export class WrongEnvironmentApiKeyError extends InvalidApiKeyError {
  constructor(keyEnvironment: ApiEnvironment, serverEnvironment: ApiEnvironment) {
    super(
      keyEnvironment === 'sandbox'
        ? `This is a sandbox API key (rk_test_…), and this is the ${serverEnvironment} API: sandbox keys work only with the sandbox. Send it to the sandbox's address, or use a ${serverEnvironment} key here.`
        : `This is a live API key (rk_…), and this is the ${serverEnvironment} API: live keys work only with the live API. Send it to the live address, or use a ${serverEnvironment} key here (rk_test_…).`,
    );
  }
}

export class LastApiKeyError extends ConflictError {
  constructor() {
    super(
      'last-api-key',
      'Cannot remove the last managing API key',
      'A region must keep at least one active API key that holds keys:write and is not scheduled for revocation. ' +
        'Create another such key (or roll this one into one) first.',
    );
  }
}

export class ApiKeyLimitError extends ConflictError {
  constructor(limit: number) {
    super(
      'api-key-limit',
      'Too many API keys',
      `A region can hold at most ${limit} active API keys. Delete keys that are no longer used first.`,
    );
  }
}

export class ApiKeyNotFoundError extends NotFoundError {
  constructor() {
    super('No active API key with this id exists in your region.');
  }
}

export class RegionNotFoundError extends NotFoundError {
  constructor(regionId: string) {
    super(`No region with id ${regionId} exists.`);
  }
}

export class ApiKeyAlreadyRolledError extends ConflictError {
  constructor(revokesAt: Date) {
    super(
      'api-key-already-rolled',
      'API key already rolled',
      `This key was already rolled; it stops working at ${revokesAt.toISOString()}. Roll the key that replaced it instead.`,
    );
  }
}

/** The key authenticated, but lacks the permission the route needs, or asked to grant one it lacks. */
export class InsufficientPermissionError extends DomainError {
  readonly status = 403;
  readonly slug = 'insufficient-permission';
  readonly title = 'Insufficient permission';
}

export const missingPermission = (permission: Permission) =>
  new InsufficientPermissionError(`This API key does not hold the ${permission} permission, which this request needs.`);

export const ungrantablePermissions = (permissions: Permission[]) =>
  new InsufficientPermissionError(
    `A key can grant only permissions it holds itself; this one does not hold ${permissions.join(', ')}.`,
  );

/**
 * A valid key sent from an address outside its allowlist. Refused like a failed
 * authentication, and saying no more than that: the allowlist is not shown.
 */
export class AddressNotAllowedError extends DomainError {
  readonly status = 403;
  readonly slug = 'address-not-allowed';
  readonly title = 'Address not allowed';
  constructor() {
    super('This API key may not be used from your address.');
  }
}
