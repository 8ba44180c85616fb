/** OpenAPI 3.1 documents, generated from the same route tables the facade serves. */
import { PLATFORM_VERSION } from '../lib/service/kernel.js';
import { PROBLEM_MEDIA_TYPE } from './problems.js';
import type { JsonSchema, QueryParameter, Route, ServiceRoutes } from './route-table.js';

const QUERY_SCHEMAS: Record<QueryParameter['type'], JsonSchema> = {
  string: { type: 'string' },
  integer: { type: 'integer' },
  boolean: { type: 'boolean' },
  'date-time': { type: 'string', format: 'date-time' },
  interval: { type: 'string', description: 'RFC 3339 interval start/end; either end may be empty or "..".' },
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
};

function operationOf(route: Route) {
  const pathParameters = [...route.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    description: route.params?.[name!] ?? name,
    schema: { type: 'string' },
  }));
  const queryParameters = Object.entries(route.query ?? {}).map(([name, spec]) => ({
    name,
    in: 'query',
    required: false,
    description: spec.description,
    schema: { ...QUERY_SCHEMAS[spec.type], ...(spec.enum ? { enum: spec.enum } : {}), ...(spec.minimum !== undefined ? { minimum: spec.minimum } : {}), ...(spec.maximum !== undefined ? { maximum: spec.maximum } : {}) },
  }));
  const problems = new Set<number>([400, 404, 405, ...(route.role ? [401, 403] : []), ...(route.body ? [413, 415] : []), ...(route.problems ?? [])]);
  const responses: Record<string, unknown> = {};
  for (const [status, response] of Object.entries(route.responses)) {
    // 204 and 304 have no body (RFC 9110 §15.3.5, §15.4.5).
    responses[status] = ['204', '304'].includes(status) ? { description: response.description } : { description: response.description, content: { [response.mediaType ?? 'application/json']: { schema: response.schema ?? { type: 'object' } } } };
  }
  for (const status of [...problems].sort()) {
    responses[String(status)] = { description: PROBLEM_TITLES[status] ?? 'Problem', content: { [PROBLEM_MEDIA_TYPE]: { schema: { $ref: '#/components/schemas/Problem' } } } };
  }
  return {
    summary: route.summary,
    operationId: `${route.method.toLowerCase()}${route.path.replace(/[{}]/g, '').replace(/[/-](\w)/g, (_, letter: string) => letter.toUpperCase()) || 'Root'}`,
    ...(pathParameters.length + queryParameters.length ? { parameters: [...pathParameters, ...queryParameters] } : {}),
    ...(route.body ? { requestBody: { required: true, content: { 'application/json': { schema: requestSchema(route.body) } } } } : {}),
    ...(route.role ? { security: [{ bearer: [route.role] }] } : {}),
    responses,
    'x-graphql-operation': route.operation,
  };
}

export function openApiDocument(table: ServiceRoutes, serverUrl: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of table.routes) {
    paths[route.path] ??= {};
    paths[route.path]![route.method.toLowerCase()] = operationOf(route);
  }
  return {
    openapi: '3.1.0',
    info: { title: table.title, version: PLATFORM_VERSION, description: `REST interface of the ${table.service} service; each operation runs the GraphQL operation given in x-graphql-operation through the gateway.` },
    servers: [{ url: serverUrl }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'Tokens with the role writer (writes) or admin (writes and /admin/*).' } },
      schemas: {
        Problem: {
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
        },
      },
    },
  };
}

/** A body schema as the facade enforces it (checkBodyMembers): no members beyond the declared ones. */
function requestSchema(schema: JsonSchema): JsonSchema {
  return schema.type === 'object' && schema.properties && schema.additionalProperties === undefined ? { ...schema, additionalProperties: false } : schema;
}
