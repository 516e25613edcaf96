import { Injectable } from '@nestjs/common';

/**
 * The time the rules of the service go by (when a scheduled key revocation takes effect,
 * when an event occurred). One injectable source, so tests can move time forward instead
 * of waiting for it, and so every comparison in a request uses the same instant.
 */
@Injectable()
export class Clock {
  now(): Date {
    return new Date();
  }
}
