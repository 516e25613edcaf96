import { Injectable, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { RouteConfig } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { UnsupportedMediaTypeError } from './celestial-bodies.errors';

const ACCEPTS_MULTIPART = 'acceptsMultipart';

/** Marks a route that reads a multipart/form-data body (an upload). */
export const AcceptsMultipart = () => RouteConfig({ [ACCEPTS_MULTIPART]: true });

/**
 * @fastify/multipart (registered for the upload route) adds its content-type parser to the
 * whole server. Without this hook a JSON route would then take a multipart request as an
 * empty body instead of refusing it; with it, every route not marked @AcceptsMultipart()
 * answers such a request with the 415 it gave before. JSON parsing and its 64 KiB limit are
 * not touched: multipart bodies never go through that parser.
 */
@Injectable()
export class MultipartOnlyWhereAccepted implements OnModuleInit {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    // Hooks added before Fastify is ready apply to every route, also those already declared.
    fastify.addHook('preValidation', async (request: FastifyRequest) => {
      const isMultipart = (request as FastifyRequest & { isMultipart?: () => boolean }).isMultipart?.() === true;
      const config = request.routeOptions.config as unknown as Record<string, unknown> | undefined;
      if (isMultipart && config?.[ACCEPTS_MULTIPART] !== true) throw new UnsupportedMediaTypeError();
    });
  }
}
