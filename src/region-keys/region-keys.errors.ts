import { type FailedCondition, preconditionFailedDetail } from '../common/http';
import {
  ConflictError,
  defineProblemType,
  DomainError,
  NotFoundError,
  PRECONDITION_FAILED,
  UnauthenticatedError,
  ValidationFailedError,
} from '../common/problem';
import { type RateLimitPolicy, tooMany, TooManyRequestsError } from '../common/rate-limit';
import type { ApiEnvironment } from './api-key-codec';
import { formatRateLimit, type KeyRateLimit } from './key-rate-limit';
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

export const LAST_API_KEY = defineProblemType({
  slug: 'last-api-key',
  status: 409,
  title: 'Cannot remove the last managing API key',
  meaning:
    'The change would leave the region without an active key that holds both region:read and keys:write, can be used from some address, does not expire and is not scheduled for revocation: ' +
    "deleting that key, rolling it into a key without one of those permissions or with an expiry, or a PATCH that takes any of that away. Without one, nobody could read and manage the region's keys over the API (a key grants only what it holds, so keys holding one permission each never make such a key again).",
  action: 'Create another key holding region:read and keys:write (or roll this one into one) first, then retry.',
  example: () => new LastApiKeyError(),
});

export const API_KEY_LIMIT = defineProblemType({
  slug: 'api-key-limit',
  status: 409,
  title: 'Too many API keys',
  meaning: 'The region already holds the maximum number of active keys (keys being rolled count until they stop).',
  action: 'Delete keys that are no longer used (their usage shows which), then retry.',
  example: () => new ApiKeyLimitError(100),
});

export const API_KEY_ALREADY_ROLLED = defineProblemType({
  slug: 'api-key-already-rolled',
  status: 409,
  title: 'API key already rolled',
  meaning: 'The key was rolled before: it has a replacement and is scheduled to stop. A key is rolled once.',
  action:
    "Roll the key that replaced it instead (its id is the `replacedBy.id` of this key's `api_key.rolled` in the region's events), or delete this one to stop it now.",
  example: () => new ApiKeyAlreadyRolledError(new Date('2026-11-22T11:15:00.000Z')),
});

export const INSUFFICIENT_PERMISSION = defineProblemType({
  slug: 'insufficient-permission',
  status: 403,
  title: 'Insufficient permission',
  meaning:
    'The API key is valid but does not hold the permission this request needs (region:read or keys:write), or it asked to grant a permission it does not hold itself (also by giving more reach, a wider allowlist or a later expiry, to a key that holds one).',
  action: 'Use a key that holds the permission named in the detail, or ask only for permissions the key holds.',
  example: () => missingPermission('keys:write'),
});

export const ADDRESS_NOT_ALLOWED = defineProblemType({
  slug: 'address-not-allowed',
  status: 403,
  title: 'Address not allowed',
  meaning:
    'The API key is valid but limited to networks (its allowedCidrs) that do not include the address the request came from.',
  action:
    'Send the request from an allowed network, or use a key whose allowlist includes this one. Behind a proxy, check that the server sees the real client address.',
  example: () => new AddressNotAllowedError(),
});

export const RATE_LIMIT_ABOVE_CALLER = defineProblemType({
  slug: 'rate-limit-above-caller',
  status: 403,
  title: 'Rate limit above your own',
  meaning:
    "The request would give a key a faster rate limit (more requests per second: requests / perSeconds) than the key making the request has: its own rateLimit, or the region's default when that is null. A key never grants more than it has, on create, roll (which keeps the old key's rateLimit unless another is asked for) or PATCH.",
  action:
    "Ask for a rateLimit no faster than your key's own (GET /auth/regions/me shows it), or make the request with a key whose limit is at least as fast.",
  example: () => rateLimitAboveCaller({ requests: 1200, perSeconds: 60 }, { requests: 600, perSeconds: 60 }),
});

export const CREDENTIALS_NOT_ACCEPTED = defineProblemType({
  slug: 'credentials-not-accepted',
  status: 400,
  title: 'Credentials not accepted here',
  meaning:
    'The request carried credentials (an X-API-Key or Authorization header) to a route that takes none: reporting ' +
    'leaked keys (POST /auth/region/api-keys/leaked) is open to anyone, and a key sent there would be one more ' +
    'copy of a secret in transit. Nothing was reported.',
  action: 'Send the report again without the X-API-Key and Authorization headers.',
  example: () => new CredentialsNotAcceptedError(),
});

/** Credentials sent to a route that takes none: refused, so that no caller comes to rely on sending them. */
export class CredentialsNotAcceptedError extends DomainError {
  constructor() {
    super(
      CREDENTIALS_NOT_ACCEPTED,
      'This route takes no credentials: send the request without the X-API-Key and Authorization headers.',
    );
  }
}

export class LastApiKeyError extends ConflictError {
  constructor() {
    super(
      LAST_API_KEY,
      'A region must keep at least one active API key that holds both region:read and keys:write, can be used from ' +
        'some address, does not expire and is not scheduled for revocation. Create another such key (or roll this ' +
        'one into one) first.',
    );
  }
}

export class ApiKeyLimitError extends ConflictError {
  constructor(limit: number) {
    super(
      API_KEY_LIMIT,
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
      API_KEY_ALREADY_ROLLED,
      `This key was already rolled; it stops working at ${revokesAt.toISOString()}. Roll the key that replaced it instead.`,
    );
  }
}

/** The key authenticated, but lacks the permission the route needs, or asked to grant one it lacks. */
export class InsufficientPermissionError extends DomainError {
  constructor(detail: string) {
    super(INSUFFICIENT_PERMISSION, detail);
  }
}

export const missingPermission = (permission: Permission) =>
  new InsufficientPermissionError(`This API key does not hold the ${permission} permission, which this request needs.`);

export const ungrantablePermissions = (permissions: Permission[]) =>
  new InsufficientPermissionError(
    `A key can grant only permissions it holds itself; this one does not hold ${permissions.join(', ')}.`,
  );

/** A roll that asks for no permissions keeps the old key's, which the caller may not hold all of. */
export const unkeepablePermissions = (permissions: Permission[]) =>
  new InsufficientPermissionError(
    `A roll keeps the old key's permissions unless others are asked for, and a key can grant only permissions ` +
      `it holds itself; the key being rolled holds ${permissions.join(', ')}, which this one does not.`,
  );

/**
 * A PATCH that lets a key be used from more addresses or for longer re-grants what the key
 * holds, so the caller must hold it too, as for a roll that keeps the old key's permissions.
 */
export const unwidenableKey = (permissions: Permission[]) =>
  new InsufficientPermissionError(
    `Lifting or widening a key's allowlist, or lifting or postponing its expiry, gives the key more reach, and a key ` +
      `can grant only permissions it holds itself; the key being changed holds ${permissions.join(', ')}, which ` +
      `this one does not.`,
  );

/** A key given a faster rate limit than the caller's own. */
export class RateLimitAboveCallerError extends DomainError {
  constructor(detail: string) {
    super(RATE_LIMIT_ABOVE_CALLER, detail);
  }
}

/** `kept`: a roll that asked for none, and would keep the old key's. */
export const rateLimitAboveCaller = (asked: KeyRateLimit, held: KeyRateLimit, kept = false) =>
  new RateLimitAboveCallerError(
    `${kept ? "A roll keeps the old key's rate limit unless another is asked for; the key being rolled has" : 'The key would have'} ` +
      `${formatRateLimit(asked)}, faster than this key's own ${formatRateLimit(held)}, and a key can grant only ` +
      'what it has. Ask for a rateLimit no faster than that.',
  );

/** A PATCH may only take permissions away: more is a new key (which the caller can create). */
export const unnarrowingPermissions = (permissions: Permission[]) =>
  new ValidationFailedError([
    {
      field: 'permissions',
      message:
        `permissions may only narrow the key's own; it does not hold ${permissions.join(', ')}. ` +
        'Create a new key for more',
    },
  ]);

/** If-Match names a version of the key it no longer has, or If-None-Match is `*` or its version. */
export class ApiKeyChangedError extends DomainError {
  constructor(failed: FailedCondition) {
    super(PRECONDITION_FAILED, preconditionFailedDetail('The API key', failed));
  }
}

/**
 * A valid key sent from an address outside its allowlist. Refused like a failed
 * authentication, and saying no more than that: the allowlist is not shown.
 */
export class AddressNotAllowedError extends DomainError {
  constructor() {
    super(ADDRESS_NOT_ALLOWED, 'This API key may not be used from your address.');
  }
}

/** The key made all the requests its rate limit allows in this window. */
export const tooManyKeyRequests = (policy: RateLimitPolicy, retryAfter: number) =>
  new TooManyRequestsError(
    `Too many requests with this API key: it may make ${policy.limit} every ${policy.windowSeconds} seconds. ` +
      `Retry in ${retryAfter} seconds.`,
    policy,
    retryAfter,
  );

/** Too many leak reports from one client address. */
export const tooManyLeakReports = tooMany('leak reports');
