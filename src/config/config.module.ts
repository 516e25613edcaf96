import { DynamicModule, Module } from '@nestjs/common';

import { AppConfig, settingsOf } from './app-config';
import type { SettingsClass } from './settings';

@Module({})
export class ConfigModule {
  /** Provides the AppConfig validated at boot to every module. */
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: ConfigModule,
      global: true,
      providers: [{ provide: AppConfig, useValue: config }],
      exports: [AppConfig],
    };
  }

  /**
   * Provides a feature's settings, read from the same environment as the AppConfig, to the
   * module that imports it (validated at boot when the entry point lists the class).
   */
  static forFeature<T extends object>(Class: SettingsClass<T>): DynamicModule {
    return {
      module: ConfigModule,
      providers: [
        { provide: Class, inject: [AppConfig], useFactory: (config: AppConfig) => settingsOf(config, Class) },
      ],
      exports: [Class],
    };
  }
}
