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
  private readonly refusals: Readonly<Record<'missing' | 'malformed' | 'otherEnvironment', InvalidApiKeyError>>;

  constructor(
    private readonly regionKeys: RegionKeysService,
    private readonly counters: SecurityCounters,
    private readonly config: AppConfig,
    private readonly usage: KeyUsageCounter,
  ) {
    super();
    const environment = config.API_ENVIRONMENT;
    this.refusals = {
      missing: new InvalidApiKeyError('Send your region API key in the X-API-Key header.'),
      malformed: new InvalidApiKeyError(),
      otherEnvironment: new WrongEnvironmentApiKeyError(environment === 'live' ? 'sandbox' : 'live', environment),
    };
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
    this.usage.count(principal.apiKeyId, request.ip, request.headers['user-agent']);
    return principal;
  }

  /**
   * The refusal of the key the request presents when no lookup could accept it: none, one
   * of the other environment (live or sandbox), or one not in the issued format; null for a
   * key worth looking up. Counted here. No database, no Passport and no throw:
   * UnusableKeyRefusal sends it from a hook as the cheapest refusal, where throwing it would
   * add a stack capture, a large part of the answer's CPU. The errors are made once and shared, so
   * they are sent, never thrown: usableKey throws a fresh one.
   */
  unusableKeyRefusal(request: FastifyRequest): InvalidApiKeyError | null {
    const presented = request.headers[API_KEY_HEADER];
    if (typeof presented !== 'string' || presented.length === 0) {
      this.counters.apiKeyAuthenticated('missing');
      return this.refusals.missing;
    }
    const environment = this.config.API_ENVIRONMENT;
    if (isWellFormedApiKey(presented, environment)) return null;
    const keyEnvironment = generatedKeyEnvironment(presented);
    if (keyEnvironment !== null && keyEnvironment !== environment) {
      this.counters.apiKeyAuthenticated('wrong_environment');
      return this.refusals.otherEnvironment;
    }
    this.counters.apiKeyAuthenticated('malformed');
    return this.refusals.malformed;
  }

  /** The key the request presents, for a lookup; throws the refusal of one no lookup could accept. */
  private usableKey(request: FastifyRequest): string {
    const refusal = this.unusableKeyRefusal(request);
    if (refusal) throw new InvalidApiKeyError(refusal.message);
    return request.headers[API_KEY_HEADER] as string;
  }
}
