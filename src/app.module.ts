import { DynamicModule, Module } from '@nestjs/common';
import { AuthModule } from './auth/auth.module';
import { CelestialBodiesModule } from './celestial-bodies/celestial-bodies.module';
import { ClockModule } from './common/clock/clock.module';
import { CommonModule } from './common/common.module';
import { AppConfig } from './config/app-config';
import { ConfigModule } from './config/config.module';
import { DatabaseModule } from './database/database.module';
import { MetricsModule } from './common/metrics/metrics.module';
import { HealthModule } from './health/health.module';
import { LifecycleModule } from './common/lifecycle/shutdown-state';
import { RegionKeysModule } from './region-keys/region-keys.module';
import { UsersModule } from './users/users.module';

@Module({})
export class AppModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [ConfigModule.forRoot(config), DatabaseModule, ClockModule, LifecycleModule, CommonModule, HealthModule, MetricsModule.forRoot(config), RegionKeysModule.forServer(), UsersModule, AuthModule, CelestialBodiesModule.forServer()],
    };
  }
}
