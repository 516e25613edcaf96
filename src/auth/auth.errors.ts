import { declareProblemExample, UNAUTHENTICATED, UnauthenticatedError } from '../common/problem';
import { rateLimitHeaders } from '../common/rate-limit';
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
