import { declareProblemExample, TOO_MANY_REQUESTS, UNAUTHENTICATED, UnauthenticatedError } from '../common/problem';
import { ApiRateLimited, rateLimitHeaders, tooMany } from '../common/rate-limit';
import type { LoginAllowance } from './login-throttle';

/** Both schemes /me and every user route accept, so a client knows what it may send. */
export const USER_CHALLENGE = 'Basic realm="api", charset="UTF-8", Bearer';

export class UserUnauthenticatedError extends UnauthenticatedError {
  constructor(
    detail = 'Send your email and password (Basic) or a token from POST /auth/token (Bearer) in the Authorization header.',
  ) {
    super(detail, USER_CHALLENGE);
  }
}
declareProblemExample(UNAUTHENTICATED, () => new UserUnauthenticatedError());

/**
 * One answer for an unknown email and a wrong password alike, so the response does not
 * tell who has an account.
 */
export class InvalidCredentialsError extends UnauthenticatedError {
  constructor(allowance: LoginAllowance) {
    super('The email or password is wrong.', USER_CHALLENGE);
    Object.assign(this.headers, allowanceHeaders(allowance));
  }
}

/** What is left of the failed-sign-in allowance, for the rate-limit response headers. */
export const allowanceHeaders = ({ policy, remaining, reset }: LoginAllowance): Record<string, string> =>
  rateLimitHeaders(policy, { remaining, reset });

/** The name of the per-address-and-email failed-sign-in limit, in its counters and RateLimit-Policy. */
export const LOGIN_FAILURES_POLICY = 'login-failures';

/** Too many failed sign-ins for one email from one client address. */
export const tooManyLoginFailures = tooMany('failed sign-in attempts for this email');
/** Too many failed sign-ins from one client address, whatever the email. */
export const tooManyAddressLoginFailures = tooMany('failed sign-in attempts');

const loginRefusal = () => tooManyLoginFailures({ name: LOGIN_FAILURES_POLICY, limit: 10, windowSeconds: 900 }, 42);
declareProblemExample(TOO_MANY_REQUESTS, loginRefusal);

/** The 429 (and 503) of the failed-sign-in limit, on POST /auth/token and every route Basic reaches. */
export const ApiLoginRateLimited = (
  description = 'Too many failed sign-ins from this client, for this email or for any; see Retry-After.',
) => ApiRateLimited(description, loginRefusal);
