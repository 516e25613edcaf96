import { Body, Controller, Post, Res, UseGuards } from '@nestjs/common';
import { ApiCreatedResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';

import { Public } from '../common/auth';
import { absoluteUrl, locationHeader } from '../common/http';
import { Idempotent } from '../common/idempotency';
import { ApiSignupRateLimited, ClientThrottlerGuard, RATE_LIMIT_HEADERS } from '../common/rate-limit';
import { ApiProblems, jsonBodyProblems } from '../common/swagger';
import { invalidBody } from '../common/validation';
import { AppConfig } from '../config';
import { SignUpDto } from './dto/sign-up.dto';
import { UserDto } from './dto/user.dto';
import { EMAIL_TAKEN } from './users.errors';
import { UsersService } from './users.service';

@ApiTags('Authentication')
@Controller('user')
export class UsersController {
  constructor(
    private readonly users: UsersService,
    private readonly config: AppConfig,
  ) {}

  @Post('signup')
  @Public()
  @UseGuards(ClientThrottlerGuard)
  // A sign-up is one statement, and a second one with the same email is refused anyway.
  @Idempotent({ scope: 'client-address' })
  @ApiOperation({
    operationId: 'createUser',
    summary: 'Create a user',
    description:
      'Creates an account. Then get a token with POST /auth/token, or send the email and password as Basic credentials. ' +
      'Location is the URI where a user reads their account, GET /me (with those credentials). ' +
      "A password under 8 bytes is refused (400), the Galaxy's example Hans's included.",
  })
  @ApiCreatedResponse({
    type: UserDto,
    description: 'The new user.',
    headers: {
      ...locationHeader('The URI of the account: GET /me, with its credentials.', '/me'),
      ...RATE_LIMIT_HEADERS,
    },
  })
  @ApiProblems(
    ...jsonBodyProblems(
      'Invalid input: a bad email (invisible, control or bidirectional characters, or mixed Latin/Cyrillic/Greek letters included), ' +
        'a password outside 8..72 bytes, a missing or unknown field.',
      invalidBody(SignUpDto, { email: 'ada@example.com', password: 'short' }),
    ),
    {
      types: [EMAIL_TAKEN],
      description: 'An account with this email, in any spelling of the same canonical form, already exists.',
    },
  )
  @ApiSignupRateLimited()
  async signUp(@Body() body: SignUpDto, @Res({ passthrough: true }) reply: FastifyReply): Promise<UserDto> {
    const user = UserDto.from(await this.users.signUp(body));
    reply.header('Location', absoluteUrl(reply.request, this.config.ownBaseUrl, '/me'));
    return user;
  }
}
