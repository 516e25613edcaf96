import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { FastifyRequest } from 'fastify';
import { Strategy } from 'passport-custom';

import { SecurityCounters } from '../common/metrics';
import { AppConfig } from '../config';
import { generatedKeyEnvironment, isWellFormedApiKey } from './api-key-codec';
import { KeyUsageCounter } from './key-usage/key-usage-counter';
import { AddressNotAllowedError, InvalidApiKeyError, WrongEnvironmentApiKeyError } from './region-keys.errors';
import { RegionKeysService } from './region-keys.service';
import { RegionPrincipal } from './region-keys.types';

const API_KEY_STRATEGY = 'region-api-key';
export const API_KEY_HEADER = 'x-api-key';

/** Accepts a region API key in the X-API-Key header, and nowhere else (not the query string). */
@Injectable()
export class ApiKeyStrategy extends PassportStrategy(Strategy, API_KEY_STRATEGY) {
  constructor(
    private readonly regionKeys: RegionKeysService,
    private readonly counters: SecurityCounters,
    private readonly config: AppConfig,
    private readonly usage: KeyUsageCounter,
  ) {
    super();
  }

  async validate(request: FastifyRequest): Promise<RegionPrincipal> {
    const presented = this.usableKey(request);
    let principal: RegionPrincipal | null;
    try {
      // request.ip is the client address as the TRUST_PROXY settings resolve it.
      principal = await this.regionKeys.authenticate(presented, request.ip);
    } catch (err) {
      this.counters.apiKeyAuthenticated(err instanceof AddressNotAllowedError ? 'address_not_allowed' : 'error');
      throw err;
    }
    if (!principal) {
      this.counters.apiKeyAuthenticated('unknown');
      throw new InvalidApiKeyError();
    }
    this.counters.apiKeyAuthenticated('success');
    this.usage.count(principal.apiKeyId);
    return principal;
  }

  /**
   * The key the request presents, or the refusal of one that no lookup could accept: none,
   * one of the other environment (live or sandbox), or one not in the issued format. No
   * database, no Passport: UnusableKeyRefusal calls it in a hook, as the cheapest refusal.
   */
  usableKey(request: FastifyRequest): string {
    const presented = request.headers[API_KEY_HEADER];
    if (typeof presented !== 'string' || presented.length === 0) {
      this.counters.apiKeyAuthenticated('missing');
      throw new InvalidApiKeyError('Send your region API key in the X-API-Key header.');
    }
    const environment = this.config.API_ENVIRONMENT;
    if (isWellFormedApiKey(presented, environment)) return presented;
    const keyEnvironment = generatedKeyEnvironment(presented);
    if (keyEnvironment !== null && keyEnvironment !== environment) {
      this.counters.apiKeyAuthenticated('wrong_environment');
      throw new WrongEnvironmentApiKeyError(keyEnvironment, environment);
    }
    this.counters.apiKeyAuthenticated('malformed');
    throw new InvalidApiKeyError();
  }
}
