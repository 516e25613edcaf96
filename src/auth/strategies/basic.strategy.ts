import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { FastifyRequest } from 'fastify';
import { BasicStrategy as HttpBasicStrategy } from 'passport-http';
import { AuthService } from '../auth.service';
import type { AuthenticatedUser } from '../authenticated-user';
import { parseBasicAuthorization } from '../basic-credentials';

export const BASIC_STRATEGY = 'basic';

/**
 * `Authorization: Basic base64(email:password)`. passport-http decides whether the header
 * is Basic at all (and steps aside for Bearer); the credentials are then read again from
 * the header by parseBasicAuthorization, because passport-http cuts a password at its
 * first colon.
 */
@Injectable()
export class BasicStrategy extends PassportStrategy(HttpBasicStrategy, BASIC_STRATEGY) {
  constructor(private readonly auth: AuthService) {
    super({ passReqToCallback: true, realm: 'api' });
  }

  async validate(request: FastifyRequest): Promise<AuthenticatedUser | null> {
    const credentials = parseBasicAuthorization(request.headers.authorization);
    if (!credentials) return null;
    return this.auth.signInBasic(credentials.email, credentials.password, request.ip);
  }
}
