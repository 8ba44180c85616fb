/**
 * Each route's Fastify schema, from its declaration in the route table: the same schemas validate
 * requests (validation.ts) and make the OpenAPI 3.1 document (@fastify/swagger).
 */
import type { FastifySchema } from 'fastify';
import { PLATFORM_VERSION } from '../lib/service/kernel.js';
import { PROBLEM_MEDIA_TYPE } from '../lib/http/request-problem.js';
import type { JsonSchema, QueryParameter, Route, ServiceRoutes } from './route-table.js';

const QUERY_SCHEMAS: Record<QueryParameter['type'], JsonSchema> = {
  string: { type: 'string', maxLength: 1024 },
  integer: { type: 'integer' },
  boolean: { type: 'boolean' },
  'date-time': { type: 'string', format: 'date-time' },
  interval: { type: 'string', format: 'interval', description: 'RFC 3339 interval start/end; either end may be empty or "..".' },
};

const PROBLEM_TITLES: Record<number, string> = {
  400: 'Malformed request (bad JSON, unknown or ill-typed parameter or member)',
  401: 'No or invalid bearer token',
  403: 'The token lacks the required role',
  404: 'No such resource',
  405: 'Method not allowed (see Allow)',
  409: 'Conflict with the current state',
  413: 'Body too large',
  415: 'Body is not application/json',
  422: 'Well-formed but invalid',
  502: 'An upstream answer could not be used',
  503: 'The database or the gateway does not answer (see Retry-After)',
};

/** Problems every route may answer: a bad path or query, no such resource, a missing database. */
const EVERY_ROUTE = [400, 404, 405, 503];

const PROBLEM_SCHEMA: JsonSchema = {
  type: 'object',
  description: 'RFC 9457 problem details.',
  required: ['type', 'title', 'status', 'code'],
  properties: {
    type: { type: 'string', format: 'uri-reference' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    instance: { type: 'string' },
    code: { type: 'string', description: 'Machine-readable reason.' },
    rule: { type: 'string', description: 'The business rule that refused the request, e.g. I6.' },
  },
};

/** The query string a route takes: its declared parameters, or none (an undeclared one is a 400). */
function querySchema(route: Route): JsonSchema {
  const properties = Object.fromEntries(
    Object.entries(route.query ?? {}).map(([name, spec]) => [
      name,
      { ...QUERY_SCHEMAS[spec.type], description: spec.description, ...(spec.enum ? { enum: spec.enum } : {}), ...(spec.minimum !== undefined ? { minimum: spec.minimum } : {}), ...(spec.maximum !== undefined ? { maximum: spec.maximum } : {}) },
    ]),
  );
  return { type: 'object', properties, additionalProperties: false };
}

/** A body schema as the facade enforces it at the top level: no members beyond the declared ones. */
function requestSchema(schema: JsonSchema): JsonSchema {
  return schema.type === 'object' && schema.properties && schema.additionalProperties === undefined ? { ...schema, additionalProperties: false } : schema;
}

/** The operation id of a route: its method and path in camelCase, e.g. `getItemsIdSupersession`. */
export function operationId(route: Pick<Route, 'method' | 'path'>): string {
  return `${route.method.toLowerCase()}${route.path.replace(/[{}]/g, '').replace(/[/-](\w)/g, (_, letter: string) => letter.toUpperCase()) || 'Root'}`;
}

/** The Fastify schema of a route: what validates its requests and what its OpenAPI operation says. */
export function routeSchema(route: Route): FastifySchema & Record<string, unknown> {
  const names = [...route.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => name!);
  const problems = new Set<number>([...EVERY_ROUTE, ...(route.role ? [401, 403] : []), ...(route.body ? [413, 415] : []), ...(route.problems ?? [])]);
  const response: Record<string, unknown> = {};
  for (const [status, answer] of Object.entries(route.responses)) {
    // 204 and 304 have no body (RFC 9110 §15.3.5, §15.4.5).
    // `type: 'null'` tells @fastify/swagger the response has no content.
    response[status] = ['204', '304'].includes(status)
      ? { type: 'null', description: answer.description }
      : { description: answer.description, content: { [answer.mediaType ?? 'application/json']: { schema: answer.schema ?? {}, ...(answer.example === undefined ? {} : { example: answer.example }) } } };
  }
  for (const status of [...problems].sort()) {
    response[String(status)] = { description: PROBLEM_TITLES[status] ?? 'Problem', content: { [PROBLEM_MEDIA_TYPE]: { schema: { $ref: 'Problem#' } } } };
  }
  const query = querySchema(route);
  return {
    summary: route.summary,
    operationId: operationId(route),
    ...(names.length ? { params: { type: 'object', required: names, properties: Object.fromEntries(names.map((name) => [name, { type: 'string', description: route.params?.[name] ?? name }])) } } : {}),
    querystring: query,
    ...(route.body ? { body: requestSchema(route.body) } : {}),
    ...(route.role ? { security: [{ bearer: [route.role] }] } : {}),
    response,
    'x-graphql-operation': route.operation,
  };
}

/** The shared schemas routes refer to by `$ref`, registered with Fastify under their `$id`. */
export const SHARED_SCHEMAS: JsonSchema[] = [{ $id: 'Problem', ...PROBLEM_SCHEMA }];

/**
 * @fastify/swagger's options for one service's document: paths relative to the service's base
 * address (its prefix is the server URL's, filled in per request).
 */
export function openApiOptions(table: ServiceRoutes, prefix: string) {
  return {
    openapi: {
      openapi: '3.1.0',
      info: { title: table.title, version: PLATFORM_VERSION, description: `REST interface of the ${table.service} service; each operation runs the GraphQL operation given in x-graphql-operation through the gateway.` },
      components: { securitySchemes: { bearer: { type: 'http' as const, scheme: 'bearer', description: 'Tokens with the role writer (writes) or admin (writes and /admin/*).' } } },
    },
    transform: ({ schema, url }: { schema: unknown; url: string }) => ({ schema, url: url.slice(prefix.length) || '/' }),
    // `Problem#` becomes `#/components/schemas/Problem`.
    refResolver: { buildLocalReference: (json: JsonSchema) => String(json.$id) },
  };
}
