import { DynamicModule, Module, Type } from '@nestjs/common';

import { AuthModule } from './auth';
import { CelestialBodiesModule } from './celestial-bodies';
import { ClockModule } from './common/clock/clock.module';
import { CommonModule } from './common/common.module';
import { LifecycleModule } from './common/lifecycle/shutdown-state';
import { MetricsModule } from './common/metrics/metrics.module';
import { AppConfig } from './config/app-config';
import { ConfigModule } from './config/config.module';
import { DatabaseModule } from './database/database.module';
import { HealthModule } from './health';
import { RegionKeysModule } from './region-keys';
import { UsersModule } from './users';

@Module({})
export class AppModule {
  /** `modules`: more to import besides the features (a test adds a module of its own). */
  static forRoot(config: AppConfig, modules: Type[] = []): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule.forServer(),
        ClockModule,
        LifecycleModule,
        CommonModule,
        HealthModule,
        MetricsModule.forRoot(config),
        RegionKeysModule,
        UsersModule,
        AuthModule,
        CelestialBodiesModule,
        ...modules,
      ],
    };
  }
}
