import { randomUUID } from 'node:crypto';

import { type INestApplication, RequestMethod } from '@nestjs/common';
import { ModulesContainer, Reflector } from '@nestjs/core';

import { AUTH_POLICY, type AuthPolicy } from '../../src/common/auth/auth-policy';
import { requiredPermissionOf } from '../../src/region-keys/region-key-auth.decorator';

/** A route of the running app, as its controllers declare it. */
export interface AppRoute {
  /** `GET /planets/:planetId`: how tables of routes name it. */
  key: string;
  method: string;
  /** The path template in Nest's form, e.g. `/planets/:planetId`. */
  path: string;
  /** Undefined when neither the handler nor its controller declares one (the AuthPolicyGuard refuses the route). */
  policy: AuthPolicy | undefined;
  /** The region-key permission the route requires (@RegionKeyAuth(permission)), if any. */
  permission: string | undefined;
}

type Controller = new (...args: unknown[]) => object;

const trimSlashes = (path: string | undefined) => (path ?? '').replace(/^\/|\/$/g, '');

/**
 * Every route of the app, read from the controllers' metadata: the routes the app serves,
 * so that tables of routes kept in tests cannot silently miss a new one.
 */
export function appRoutes(app: INestApplication): AppRoute[] {
  const reflector = app.get(Reflector);
  const routes: AppRoute[] = [];
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as Controller | undefined;
      if (!controller) continue;
      const base = trimSlashes(Reflect.getMetadata('path', controller));
      for (const name of Object.getOwnPropertyNames(controller.prototype)) {
        const handler: unknown = (controller.prototype as Record<string, unknown>)[name];
        if (typeof handler !== 'function' || Reflect.getMetadata('method', handler) === undefined) continue;
        const method = RequestMethod[Reflect.getMetadata('method', handler) as number];
        const sub = trimSlashes(Reflect.getMetadata('path', handler));
        const path = `/${[base, sub].filter(Boolean).join('/')}`;
        routes.push({
          key: `${method} ${path}`,
          method,
          path,
          policy: reflector.getAllAndOverride<AuthPolicy | undefined>(AUTH_POLICY, [handler, controller]),
          permission: requiredPermissionOf(handler),
        });
      }
    }
  }
  return routes;
}

/** `/planets/:planetId` as the OpenAPI document writes it: `/planets/{planetId}`. */
export const openApiPath = (path: string): string => path.replace(/:([^/]+)/g, '{$1}');

/** The names of a path template's parameters, either form, each once. */
export const pathParams = (path: string): string[] => [
  ...new Set([...path.matchAll(/:([^/]+)|\{([^}]+)\}/g)].map((m) => m[1] ?? m[2])),
];

/** The routes a table of routes lacks, and the entries it has for routes that do not exist. */
export function tableDrift(routes: AppRoute[], table: Record<string, unknown>): { missing: string[]; extra: string[] } {
  const keys = new Set(routes.map((r) => r.key));
  return {
    missing: [...keys].filter((key) => !(key in table)),
    extra: Object.keys(table).filter((key) => !keys.has(key)),
  };
}

interface Schema {
  $ref?: string;
  properties?: Record<string, unknown>;
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
  format?: string;
  example?: unknown;
  examples?: unknown[];
}
interface Parameter {
  in: string;
  name: string;
  schema?: Schema;
}
interface Operation {
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema?: Schema }> };
}
export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}

/** What the OpenAPI document says a route takes. */
export interface DocumentedInput {
  body: 'none' | 'json' | 'multipart';
  /** The JSON body's fields: of its schema, or of every schema a oneOf, anyOf or allOf names. */
  fields: string[];
  query: string[];
  /** Valid values of each path parameter: the document's examples, and any UUID for a UUID. */
  params: Record<string, string[]>;
}

function fieldsOf(schema: Schema | undefined, document: OpenApiDocument): string[] {
  if (!schema) return [];
  if (schema.$ref) return fieldsOf(document.components?.schemas?.[schema.$ref.split('/').pop() ?? ''], document);
  const parts = [...(schema.oneOf ?? []), ...(schema.anyOf ?? []), ...(schema.allOf ?? [])];
  return [...new Set([...Object.keys(schema.properties ?? {}), ...parts.flatMap((part) => fieldsOf(part, document))])];
}

function examplesOf({ schema = {} }: Parameter): string[] {
  const values = [...(schema.examples ?? []), ...(schema.example === undefined ? [] : [schema.example])].map(String);
  return schema.format === 'uuid' ? [...values, randomUUID()] : values;
}

export function documentedInput(document: OpenApiDocument, route: Pick<AppRoute, 'method' | 'path'>): DocumentedInput {
  const operation = document.paths[openApiPath(route.path)]?.[route.method.toLowerCase()] ?? {};
  const content = operation.requestBody?.content ?? {};
  const parameters = operation.parameters ?? [];
  return {
    body: 'application/json' in content ? 'json' : 'multipart/form-data' in content ? 'multipart' : 'none',
    fields: fieldsOf(content['application/json']?.schema, document),
    query: parameters.filter((p) => p.in === 'query').map((p) => p.name),
    params: Object.fromEntries(parameters.filter((p) => p.in === 'path').map((p) => [p.name, examplesOf(p)])),
  };
}
