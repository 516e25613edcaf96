import { Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';

import { AuthPolicyGuard } from './auth/auth-policy';
import { MultipartOnlyWhereAccepted } from './http/multipart';
import { RouteMethods } from './http/route-methods';
import { ProblemFilter } from './problem/problem.filter';
import { ProblemTypesController } from './problem/problem-types.controller';
import { StrictValidationPipe } from './validation/strict-validation.pipe';

/**
 * What every route of every feature goes through: deny-by-default auth policies, DTO
 * validation, errors as problem documents (and the pages their types resolve to), 405 for
 * a known path asked with another method, and JSON-only bodies except on the routes that
 * take an upload. Imported once, by the app module.
 */
@Module({
  controllers: [ProblemTypesController],
  providers: [
    { provide: APP_GUARD, useClass: AuthPolicyGuard },
    { provide: APP_PIPE, useClass: StrictValidationPipe },
    { provide: APP_FILTER, useClass: ProblemFilter },
    RouteMethods,
    MultipartOnlyWhereAccepted,
  ],
})
export class CommonModule {}
