import { Controller, Get, Param, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';

import { AppConfig } from '../../config/app-config';
import { Public } from '../auth/auth-policy';
import { ApiProblems } from '../swagger/api-problems.decorator';
import { invalidParam } from '../validation/invalid-samples';
import { NotFoundError } from './problem';
import { problemTypePage, problemTypesPage } from './problem-pages';
import { NOT_FOUND, problemTypeBySlug, VALIDATION } from './problem-types';

const HTML = 'text/html; charset=utf-8';
/** The pages change only with a new release. */
const CACHE_CONTROL = 'public, max-age=86400';
/** The pages load nothing and run nothing: only their own inline style. */
const PAGE_POLICY = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'";
const HTML_RESPONSE = { content: { 'text/html': { schema: { type: 'string' } } } } as const;

class UnknownProblemTypeError extends NotFoundError {
  constructor(slug: string) {
    super(`There is no problem type named ${slug}.`);
  }
}

/** The pages problem `type` URIs resolve to. */
@ApiTags('Problems')
@Public()
@Controller('problems')
export class ProblemTypesController {
  private readonly baseUrl: string | undefined;

  constructor(config: AppConfig) {
    this.baseUrl = config.ownBaseUrl;
  }

  @Get()
  @ApiOperation({
    operationId: 'listProblemTypes',
    summary: 'List the problem types',
    description: 'An HTML page listing every problem type the API answers with.',
  })
  @ApiOkResponse({ description: 'The list, as an HTML page.', ...HTML_RESPONSE })
  list(@Res({ passthrough: true }) reply: FastifyReply): string {
    reply.type(HTML).headers({ 'Cache-Control': CACHE_CONTROL, 'Content-Security-Policy': PAGE_POLICY });
    return problemTypesPage(this.baseUrl);
  }

  @Get(':slug')
  @ApiOperation({
    operationId: 'getProblemType',
    summary: 'Describe a problem type',
    description:
      "The page a problem document's `type` resolves to: what the problem means and what to do about it (HTML).",
  })
  @ApiParam({ name: 'slug', description: 'The last segment of the problem type URI.', example: 'last-api-key' })
  @ApiOkResponse({ description: 'The problem type, as an HTML page.', ...HTML_RESPONSE })
  @ApiProblems(
    {
      types: [NOT_FOUND],
      description: 'No problem type has this name.',
      examples: [() => new UnknownProblemTypeError('no-such-type')],
    },
    // Every path parameter is refused before any route runs when it holds a NUL character.
    {
      types: [VALIDATION],
      description: 'The slug holds a NUL character (%00).',
      examples: [invalidParam('slug', 'last-api-key\u0000')],
    },
  )
  get(@Param('slug') slug: string, @Res({ passthrough: true }) reply: FastifyReply): string {
    const type = problemTypeBySlug(slug);
    if (!type) throw new UnknownProblemTypeError(slug);
    reply.type(HTML).headers({ 'Cache-Control': CACHE_CONTROL, 'Content-Security-Policy': PAGE_POLICY });
    return problemTypePage(type, this.baseUrl);
  }
}
