import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { Public } from '../common/auth/auth-policy';
import { ServiceUnavailableError } from '../common/problem/problem';
import { ApiProblems } from '../common/swagger/api-problems.decorator';
import { HealthService } from './health.service';

class HealthDto {
  @ApiProperty({ example: 'ok' })
  status: 'ok';

  @ApiProperty({ example: 'up' })
  database: 'up';
}

@ApiTags('Health')
@Public()
@Controller('health')
export class HealthController {
  constructor(private readonly health: HealthService) {}

  @Get()
  @ApiOperation({ summary: 'Liveness and database check' })
  @ApiOkResponse({ type: HealthDto })
  @ApiProblems({ status: 503, description: 'The database does not answer.' })
  async check(): Promise<HealthDto> {
    if (!(await this.health.isDatabaseUp())) throw new ServiceUnavailableError('The database does not answer.', 5);
    return { status: 'ok', database: 'up' };
  }
}
