import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { FastifyRequest } from 'fastify';
import { BasicStrategy as HttpBasicStrategy } from 'passport-http';

import { AuthService } from '../auth.service';
import type { AuthenticatedUser } from '../authenticated-user';
import { parseBasicAuthorization } from '../basic-credentials';

export const BASIC_STRATEGY = 'basic';
const REALM = 'api';

type Verify = (req: unknown, email: string, password: string, done: (err: unknown, user?: unknown) => void) => void;

/**
 * passport-http's BasicStrategy, with the credentials read as RFC 7617 says. Its own
 * authenticate() splits the decoded text at every colon and refuses a password that
 * begins with one before any code of ours runs. Here a header that parseBasicAuthorization
 * accepts goes straight to the verify callback; anything else (no header, another scheme,
 * a malformed one) still gets passport-http's own answer, and the guard then tries Bearer.
 */
class Rfc7617BasicStrategy extends HttpBasicStrategy {
  override authenticate(req: Parameters<HttpBasicStrategy['authenticate']>[0], options?: object): void {
    const credentials = parseBasicAuthorization(req.headers.authorization);
    if (!credentials) return super.authenticate(req, options);
    // passport-http keeps the verify callback (Nest's bridge to validate()) as _verify.
    const verify = (this as unknown as { _verify: Verify })._verify;
    const self = this as unknown as {
      error(err: unknown): void;
      success(user: unknown): void;
      fail(challenge: string): void;
    };
    verify(req, credentials.email, credentials.password, (err, user) => {
      if (err) self.error(err);
      else if (user) self.success(user);
      else self.fail(`Basic realm="${REALM}"`);
    });
  }
}

/** `Authorization: Basic base64(email:password)`. */
@Injectable()
export class BasicStrategy extends PassportStrategy(Rfc7617BasicStrategy, BASIC_STRATEGY) {
  constructor(private readonly auth: AuthService) {
    super({ passReqToCallback: true, realm: REALM });
  }

  // The header is read again by the one strict parser: passport-http may still call this
  // with its own split of a header that parser refuses (lenient base64), which fails here.
  async validate(request: FastifyRequest): Promise<AuthenticatedUser | null> {
    const credentials = parseBasicAuthorization(request.headers.authorization);
    if (!credentials) return null;
    return this.auth.signInBasic(credentials.email, credentials.password, request.ip);
  }
}
