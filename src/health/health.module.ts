import { Module } from '@nestjs/common';

import { RateLimitModule } from '../common/rate-limit';
import { HealthController } from './health.controller';
import { HealthService } from './health.service';

@Module({ imports: [RateLimitModule], controllers: [HealthController], providers: [HealthService] })
export class HealthModule {}
