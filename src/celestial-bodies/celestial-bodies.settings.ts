import { Transform } from 'class-transformer';
import { IsBoolean, IsOptional, ValidateBy } from 'class-validator';

import { appConfigOf, emptyToUndefined, IntSetting, toBool } from '../config';

/** The settings of the planets: image uploads and the sample data. */
export class CelestialBodiesSettings {
  /** Planet image uploads stored at once on one instance, once received; more are refused (503). */
  @IntSetting({
    min: 1,
    max: 100,
    message: { min: 'UPLOAD_CONCURRENCY must be at least 1', max: 'UPLOAD_CONCURRENCY must be at most 100' },
  })
  UPLOAD_CONCURRENCY = 4;

  /**
   * Longest pause allowed between two pieces of an image upload's body; then 408. An upload
   * is read before it may take one of the UPLOAD_CONCURRENCY slots, so this is what keeps a
   * stalled client from holding its memory and socket until REQUEST_TIMEOUT_MS.
   */
  @IntSetting({
    min: 100,
    max: 600000,
    message: {
      min: 'UPLOAD_IDLE_TIMEOUT_MS must be at least 100 (milliseconds)',
      max: 'UPLOAD_IDLE_TIMEOUT_MS must be at most 600000 (milliseconds)',
    },
  })
  UPLOAD_IDLE_TIMEOUT_MS = 10000;

  /**
   * Sample planets for a first look. Unset: on the embedded database (no DATABASE_URL) and in
   * a sandbox. Either way at most once per database, and in auto mode only while it has no planets.
   */
  @Transform(({ value }) => (emptyToUndefined({ value }) === undefined ? undefined : toBool({ value })))
  @IsOptional()
  @IsBoolean()
  @ValidateBy({
    name: 'sandboxHasSamples',
    validator: {
      validate: (value: unknown, args) => value !== false || appConfigOf(args?.object).API_ENVIRONMENT !== 'sandbox',
      defaultMessage: () =>
        'SEED_SAMPLE_DATA cannot be false when API_ENVIRONMENT is sandbox: a sandbox always starts with sample data. Unset it',
    },
  })
  SEED_SAMPLE_DATA?: boolean;
}
