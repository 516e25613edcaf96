import { AuthSettings } from './auth';
import { CelestialBodiesSettings } from './celestial-bodies';
import type { SettingsClass } from './config/settings';
import { RegionKeysSettings } from './region-keys';
import { UsersSettings } from './users';

/**
 * Each feature's settings class. Every entry point passes them to loadConfig, so that one
 * message names every bad variable and a bad one stops the start before anything is opened.
 */
export const FEATURE_SETTINGS: readonly SettingsClass[] = [
  RegionKeysSettings,
  UsersSettings,
  AuthSettings,
  CelestialBodiesSettings,
];
