import { Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';

import { AuthPolicyGuard } from './auth/auth-policy';
import { RouteMethods } from './http/route-methods';
import { ProblemFilter } from './problem/problem.filter';
import { ProblemTypesController } from './problem/problem-types.controller';
import { StrictValidationPipe } from './validation/strict-validation.pipe';

/**
 * What every route of every feature goes through: deny-by-default auth policies, DTO
 * validation, errors as problem documents (and the pages their types resolve to), 405 for
 * a known path asked with another method. Imported once, by the app module; the Fastify
 * hooks around it are registered by createApp (http/edge.ts).
 */
@Module({
  controllers: [ProblemTypesController],
  providers: [
    { provide: APP_GUARD, useClass: AuthPolicyGuard },
    { provide: APP_PIPE, useClass: StrictValidationPipe },
    // Also by its class: the edge (http/edge.ts) registers its unknown-route hook.
    ProblemFilter,
    { provide: APP_FILTER, useExisting: ProblemFilter },
    RouteMethods,
  ],
})
export class CommonModule {}
