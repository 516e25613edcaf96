import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { FastifyRequest } from 'fastify';
import { Strategy } from 'passport-custom';
import { AuthService } from '../auth.service';
import type { AuthenticatedUser } from '../authenticated-user';
import { parseBasicAuthorization } from '../basic-credentials';

export const BASIC_STRATEGY = 'basic';

/**
 * `Authorization: Basic base64(email:password)`, read by parseBasicAuthorization, which
 * splits at the first colon as RFC 7617 says. passport-http's BasicStrategy cannot be
 * used: it splits at every colon and refuses a password that begins with one before any
 * code of ours runs. passport-custom hands the whole request to the one parser instead;
 * anything that is not Basic credentials fails here, and the guard tries Bearer.
 */
@Injectable()
export class BasicStrategy extends PassportStrategy(Strategy, BASIC_STRATEGY) {
  constructor(private readonly auth: AuthService) {
    super();
  }

  async validate(request: FastifyRequest): Promise<AuthenticatedUser | null> {
    const credentials = parseBasicAuthorization(request.headers.authorization);
    if (!credentials) return null;
    return this.auth.signInBasic(credentials.email, credentials.password, request.ip);
  }
}
