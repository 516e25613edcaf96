import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';

import { Public } from '../common/auth';
import { ServiceUnavailableError, UNAVAILABLE } from '../common/problem';
import { ApiProblems } from '../common/swagger';
import { LivenessDto, ReadinessDto } from './dto/health.dto';
import { HealthService } from './health.service';

const NOT_READY =
  'Not ready: the database does not answer (or refuses new connections), or the server is shutting down. The detail says which.';

/** What a readiness check finds down, worded for the 503. */
function reasonsDown({
  shuttingDown = false,
  databaseDown,
}: {
  shuttingDown?: boolean;
  databaseDown: string | null;
}): string[] {
  return [databaseDown, shuttingDown && 'the server is shutting down'].filter(
    (reason): reason is string => typeof reason === 'string',
  );
}

class NotReadyError extends ServiceUnavailableError {
  constructor(down: string[]) {
    super(`Not ready: ${down.join('; ')}.`, 5);
  }
}

const NOT_READY_RESPONSE = {
  types: [UNAVAILABLE],
  description: NOT_READY,
  examples: [() => new NotReadyError(reasonsDown({ databaseDown: 'the database does not answer' }))],
};

/**
 * Probes for orchestrators and load balancers. Written here rather than with @nestjs/terminus:
 * one check and a shutdown flag are a few lines, and the answers stay this API's problem
 * documents instead of terminus's own error shape.
 */
@ApiTags('Health')
@Public()
@Controller('health')
export class HealthController {
  constructor(private readonly health: HealthService) {}

  @Get('live')
  @ApiOperation({
    operationId: 'getLiveness',
    summary: 'Liveness: the process serves requests',
    description: 'Checks nothing outside the process; 200 also while shutting down.',
  })
  @ApiOkResponse({ type: LivenessDto })
  live(): LivenessDto {
    return { status: 'ok' };
  }

  @Get('ready')
  @ApiOperation({
    operationId: 'getReadiness',
    summary: 'Readiness: the database answers',
    description: `503 as soon as a shutdown begins, so a load balancer stops sending requests. The database check gives up after 2 s. Redis is reported, never a reason to be unready.`,
  })
  @ApiOkResponse({ type: ReadinessDto })
  @ApiProblems(NOT_READY_RESPONSE)
  ready(): Promise<ReadinessDto> {
    return this.readiness();
  }

  @Get()
  @ApiOperation({ operationId: 'getHealth', summary: 'Readiness (the same as /health/ready)' })
  @ApiOkResponse({ type: ReadinessDto })
  @ApiProblems(NOT_READY_RESPONSE)
  check(): Promise<ReadinessDto> {
    return this.readiness();
  }

  private async readiness(): Promise<ReadinessDto> {
    const { shuttingDown, databaseDown, redis } = await this.health.readiness();
    const down = reasonsDown({ shuttingDown, databaseDown });
    if (down.length > 0) throw new NotReadyError(down);
    return { status: 'ok', database: 'up', redis };
  }
}
