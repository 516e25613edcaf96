import { Body, Controller, HttpCode, Post, Req, UseGuards } from '@nestjs/common';
import { ApiAcceptedResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';

import { Public } from '../common/auth';
import { UNAVAILABLE } from '../common/problem';
import { ApiTooManyRequests, RATE_LIMIT_HEADERS } from '../common/rate-limit';
import { ApiProblems, jsonBodyProblems } from '../common/swagger';
import { invalidBody } from '../common/validation';
import { LeakedKeysReceivedDto, ReportLeakedKeysDto } from './dto/leaked-keys.dto';
import { LEAK_REPORTS_POLICY, LeakReportGuard } from './leak-report.guard';
import { LeakedKeysService } from './leaked-keys.service';
import { CREDENTIALS_NOT_ACCEPTED, tooManyLeakReports } from './region-keys.errors';

/** The leak-report limit as the example of its refusal shows it. */
const SAMPLE_POLICY = { name: LEAK_REPORTS_POLICY, limit: 60, windowSeconds: 3600 };

/** Reports of leaked region API keys, from anyone: /auth/region/api-keys/leaked. */
@ApiTags('Region API keys')
@Controller('auth')
export class LeakedKeysController {
  constructor(private readonly leakedKeys: LeakedKeysService) {}

  /**
   * Report leaked API keys
   * @remarks For secret scanners and anyone who finds a key where it should not be: no credentials (a request with an X-API-Key or Authorization header is a 400). Each active key of this environment among those reported is revoked before the answer is sent, on every instance, and recorded in its region's events as `api_key.leak_reported` and `api_key.revoked`; the region's last managing key is not revoked but flagged (`leakReportedAt`), for its region to roll. The answer is the same whatever the strings are, and so is its timing: it never tells which were keys. Limited per client address (60 reports an hour by default), whatever the answer.
   */
  @Post('region/api-keys/leaked')
  @Public()
  @UseGuards(LeakReportGuard)
  @HttpCode(202)
  @ApiAcceptedResponse({
    type: LeakedKeysReceivedDto,
    description: 'Received; every active key among them is revoked (or flagged) already.',
    headers: RATE_LIMIT_HEADERS,
  })
  @ApiProblems(
    ...jsonBodyProblems(
      'Invalid input: `keys` missing, not a list of 1 to 100 strings of 1 to 256 characters, or an unknown field.',
      invalidBody(ReportLeakedKeysDto, { keys: [] }),
    ),
    {
      types: [CREDENTIALS_NOT_ACCEPTED],
      description: 'The request carried an X-API-Key or Authorization header.',
      // Counted like any report: a 400 the guard let through carries the limit's headers too.
      headers: RATE_LIMIT_HEADERS,
    },
  )
  @ApiTooManyRequests('Too many reports from this client; see Retry-After.', () =>
    tooManyLeakReports(SAMPLE_POLICY, 42),
  )
  @ApiProblems({ types: [UNAVAILABLE], description: 'The database is temporarily unavailable; retry shortly.' })
  async reportLeakedKeys(
    @Body() body: ReportLeakedKeysDto,
    @Req() request: FastifyRequest,
  ): Promise<LeakedKeysReceivedDto> {
    const origin = { actor: { type: 'reporter' as const }, clientAddress: request.ip, requestId: String(request.id) };
    return { received: await this.leakedKeys.report(body.keys, origin) };
  }
}
