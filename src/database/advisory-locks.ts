/**
 * Every PostgreSQL advisory lock id the service takes, in one place so that no two uses
 * share a number by accident (they are one namespace per database).
 */
export const ADVISORY_LOCKS = {
  migrations: 7_240_611,
  firstRegion: 7_240_612,
  sampleData: 7_240_613,
  sandboxReset: 7_240_614,
} as const;
