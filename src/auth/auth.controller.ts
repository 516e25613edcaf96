import { Body, Controller, Get, Ip, Post, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';

import { Public } from '../common/auth';
import { SecretResponse } from '../common/http';
import { UNAUTHENTICATED } from '../common/problem';
import { RATE_LIMIT_HEADERS } from '../common/rate-limit';
import { ApiProblems, jsonBodyProblems } from '../common/swagger';
import { invalidBody } from '../common/validation';
import { UserDto } from '../users';
import { allowanceHeaders, ApiLoginRateLimited, InvalidCredentialsError, LOGIN_FAILURES_POLICY } from './auth.errors';
import { AuthService } from './auth.service';
import type { AuthenticatedUser } from './authenticated-user';
import { CredentialsDto, TokenDto } from './dto/credentials.dto';
import { TokenService } from './token.service';
import { CurrentUser, UserAuth } from './user-auth.decorator';

/** The failed-sign-in limit as the example of a wrong password shows it. */
const SAMPLE_LOGIN_POLICY = { name: LOGIN_FAILURES_POLICY, limit: 10, windowSeconds: 60 };

@ApiTags('Authentication')
@Controller()
export class AuthController {
  constructor(
    private readonly auth: AuthService,
    private readonly tokens: TokenService,
  ) {}

  @Post('auth/token')
  @Public()
  @SecretResponse()
  @ApiOperation({
    operationId: 'getToken',
    summary: 'Get a token',
    description:
      'Exchanges email and password for a JWT to send as `Authorization: Bearer <token>`. ' +
      'Failed attempts are limited per client address and email (10 a minute by default; X-RateLimit-* count them) ' +
      'and per client address whatever the email (30 a minute by default).',
  })
  @ApiCreatedResponse({ type: TokenDto, description: 'A token.', headers: RATE_LIMIT_HEADERS })
  @ApiProblems(
    ...jsonBodyProblems(
      'Invalid input: a missing or malformed email or password, or an unknown field.',
      invalidBody(CredentialsDto, { email: 'ada@example.com' }),
    ),
    {
      types: [UNAUTHENTICATED],
      description: 'The email or password is wrong (one answer for both).',
      examples: [() => new InvalidCredentialsError({ policy: SAMPLE_LOGIN_POLICY, remaining: 9, reset: 60 })],
    },
  )
  @ApiLoginRateLimited()
  async getToken(
    @Body() body: CredentialsDto,
    @Ip() ip: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<TokenDto> {
    const { user, allowance } = await this.auth.signIn(body.email, body.password, ip);
    reply.headers(allowanceHeaders(allowance));
    return { token: await this.tokens.issue(user) };
  }

  @Get('me')
  @UserAuth()
  @ApiOperation({
    operationId: 'getMe',
    summary: 'Get the authenticated user',
    description:
      "With Basic credentials or a Bearer token. Unlike the Galaxy's, no API key (a region API key never " +
      'authenticates a user route) and no OAuth2 or OpenID Connect token: those are 401.',
  })
  @ApiOkResponse({ type: UserDto, description: 'You.' })
  getMe(@CurrentUser() user: AuthenticatedUser): UserDto {
    return UserDto.from(user);
  }
}
