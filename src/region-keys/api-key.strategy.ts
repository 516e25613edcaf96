import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { FastifyRequest } from 'fastify';
import { Strategy } from 'passport-custom';
import { InvalidApiKeyError } from './region-keys.errors';
import { RegionKeysService, RegionPrincipal } from './region-keys.service';

const API_KEY_STRATEGY = 'region-api-key';
export const API_KEY_HEADER = 'x-api-key';

/** Accepts a region API key in the X-API-Key header, and nowhere else (not the query string). */
@Injectable()
export class ApiKeyStrategy extends PassportStrategy(Strategy, API_KEY_STRATEGY) {
  constructor(private readonly regionKeys: RegionKeysService) {
    super();
  }

  async validate(request: FastifyRequest): Promise<RegionPrincipal> {
    const presented = request.headers[API_KEY_HEADER];
    if (typeof presented !== 'string' || presented.length === 0) {
      throw new InvalidApiKeyError('Send your region API key in the X-API-Key header.');
    }
    const principal = await this.regionKeys.authenticate(presented);
    if (!principal) throw new InvalidApiKeyError();
    return principal;
  }
}
