/**
 * Each route's Fastify schema, from its declaration in the route table: the same schemas validate
 * requests (validation.ts) and make the OpenAPI 3.1 document (@fastify/swagger).
 */
import type { FastifySchema } from 'fastify';
import type { OidcConfig } from '../lib/config/oidc.js';
import { PLATFORM_VERSION } from '../lib/service/kernel.js';
import { PROBLEM_MEDIA_TYPE } from '../lib/http/request-problem.js';
import { problem } from '../lib/problem.js';
import type { JsonSchema, QueryParameter, Route, ServiceRoutes } from './route-table.js';

const QUERY_SCHEMAS: Record<QueryParameter['type'], JsonSchema> = {
  string: { type: 'string', maxLength: 1024 },
  integer: { type: 'integer' },
  boolean: { type: 'boolean' },
  'date-time': { type: 'string', format: 'date-time' },
  interval: { type: 'string', format: 'interval', description: 'RFC 3339 interval start/end; either end may be empty or "..".' },
};

/** Each problem status: what it means, and an example as a client sees it (code, detail). */
const PROBLEM_STATUSES: Record<number, { description: string; code: string; detail: string; extensions?: Record<string, unknown> }> = {
  400: {
    description: 'Malformed request (bad JSON, unknown or ill-typed parameter or member)',
    code: 'INVALID_REQUEST',
    detail: 'Unknown member colour; the body takes id, kind, jurisdiction, keys.',
  },
  401: { description: 'No or invalid bearer token (see WWW-Authenticate)', code: 'MISSING_TOKEN', detail: 'This operation needs a bearer token.' },
  403: {
    description: "The token lacks the required role (INSUFFICIENT_ROLE, PLATFORM_ADMIN_REQUIRED), or the object is another operator's (OWNED_BY_ANOTHER_OPERATOR)",
    code: 'INSUFFICIENT_ROLE',
    detail: 'This operation needs the role admin; the token has the role writer.',
  },
  404: { description: 'No such resource', code: 'NOT_FOUND', detail: 'The issuer has no passport with this id.' },
  405: { description: 'Method not allowed (see Allow)', code: 'METHOD_NOT_ALLOWED', detail: 'PUT is not allowed on /healthz; allowed: GET, HEAD.' },
  406: {
    description: 'None of the media types the route serves is acceptable (see its 200)',
    code: 'NOT_ACCEPTABLE',
    detail: "A passport's events are served as an event stream: send Accept: text/event-stream.",
  },
  409: { description: 'Conflict with the current state', code: 'ILLEGAL_TRANSITION', detail: 'A passport in status active cannot take the event reinstated.', extensions: { rule: 'I6' } },
  413: { description: 'Body too large', code: 'BODY_TOO_LARGE', detail: 'The body exceeds 1048576 bytes.', extensions: { limit: 1048576 } },
  415: { description: 'Body is not application/json (see Accept-Post)', code: 'UNSUPPORTED_MEDIA_TYPE', detail: 'The body must be application/json.' },
  422: { description: 'Well-formed but invalid', code: 'INVALID_TRUST_LIST', detail: 'next_update must be after now' },
  429: {
    description: "The client has made its role's quota of requests of this window (RATE_LIMITS; see Retry-After and RateLimit)",
    code: 'RATE_LIMITED',
    detail: 'This client has made its 1200 requests of this 60-second window (role anonymous); send more in 17 s.',
    extensions: { 'violated-policies': ['anonymous'] },
  },
  502: { description: 'An upstream answer could not be used', code: 'BAD_GATEWAY_ANSWER', detail: 'The gateway answered 500 without data.' },
  503: {
    description: 'The database, the gateway or a subgraph does not answer (see Retry-After)',
    code: 'DATABASE_UNAVAILABLE',
    detail: 'The issuer service cannot reach its database; try again shortly.',
    extensions: { retry_after: 5 },
  },
  504: {
    description: 'A subgraph did not answer within its deadline (see Retry-After)',
    code: 'SUBGRAPH_UNAVAILABLE',
    detail: 'The archive subgraph did not answer within 30000 ms.',
    extensions: { subgraph: 'archive', reason: 'deadline', retry_after: 5 },
  },
};

/**
 * Problems every route may answer: a bad path or query, no such resource, a method not allowed, a
 * client over its rate, an upstream answer without data, a missing database, gateway or subgraph, a
 * subgraph past its deadline.
 */
const EVERY_ROUTE = [400, 404, 405, 429, 502, 503, 504];

const PROBLEM_SCHEMA: JsonSchema = {
  type: 'object',
  description: 'RFC 9457 problem details. Members beyond these are extensions that a code defines (RFC 9457 §3.2), e.g. limit, retry_after.',
  required: ['type', 'title', 'status', 'code', 'instance'],
  properties: {
    type: { type: 'string', format: 'uri', description: "The code's entry on the problem page: {origin}/docs/problems#{code in kebab case}." },
    title: { type: 'string', description: 'The status phrase, e.g. Not Found.' },
    status: { type: 'integer', minimum: 400, maximum: 599 },
    detail: { type: 'string', description: 'One sentence for a person.' },
    instance: { type: 'string', description: 'The path that was asked.' },
    code: { type: 'string', pattern: '^[A-Z][A-Z0-9_]*$', description: 'Machine-readable reason, stable across releases.' },
    rule: { type: 'string', description: 'The business rule that refused the request, e.g. I6.' },
  },
  additionalProperties: true,
};

/** Headers an answer of this status always carries, whatever the path (each as its JSON Schema; @fastify/swagger moves the description out). */
const STATUS_HEADERS: Record<number, Record<string, JsonSchema>> = {
  304: { ETag: { type: 'string', description: 'The current entity tag, as If-None-Match named it.' } },
  401: { 'WWW-Authenticate': { type: 'string', pattern: '^Bearer ', description: 'The Bearer challenge (RFC 6750).' } },
  405: { Allow: { type: 'string', description: 'The methods the path takes, e.g. "GET, HEAD".' } },
  429: {
    'Retry-After': { type: 'string', pattern: '^[0-9]+$', description: 'Seconds until the window ends.' },
    RateLimit: { type: 'string', description: 'What is left of the quota and when the window ends (draft-ietf-httpapi-ratelimit-headers), e.g. "anonymous";r=0;t=17.' },
    'RateLimit-Policy': { type: 'string', description: 'The quota and its window in seconds, e.g. "anonymous";q=1200;w=60.' },
  },
  503: { 'Retry-After': { type: 'string', pattern: '^[0-9]+$', description: 'Seconds to wait before trying again.' } },
  504: { 'Retry-After': { type: 'string', pattern: '^[0-9]+$', description: 'Seconds to wait before trying again.' } },
};

/** The example of a problem status on one path. */
function problemExample(status: number, path: string): Record<string, unknown> {
  const { code, detail, extensions } = PROBLEM_STATUSES[status]!;
  const details = problem(status, code, detail, extensions);
  return { ...details, type: `http://127.0.0.1:3000${details.type}`, instance: path };
}

/** The query string a route takes: its declared parameters, or none (an undeclared one is a 400). */
function querySchema(route: Route): JsonSchema {
  const properties = Object.fromEntries(
    Object.entries(route.query ?? {}).map(([name, spec]) => [
      name,
      {
        ...QUERY_SCHEMAS[spec.type],
        description: spec.description,
        ...(spec.enum ? { enum: spec.enum } : {}),
        ...(spec.minimum !== undefined ? { minimum: spec.minimum } : {}),
        ...(spec.maximum !== undefined ? { maximum: spec.maximum } : {}),
      },
    ]),
  );
  return { type: 'object', properties, additionalProperties: route.otherQueryParameters === undefined ? false : { type: 'string', description: route.otherQueryParameters } };
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
    // 204 and 304 have no body (RFC 9110 §15.3.5, §15.4.5); a 307 of ours sends none.
    // `type: 'null'` tells @fastify/swagger the response has no content.
    const headers = { ...STATUS_HEADERS[Number(status)], ...answer.headers };
    response[status] = {
      ...(['204', '304', '307'].includes(status)
        ? { type: 'null', description: answer.description }
        : {
            description: answer.description,
            content: {
              [answer.mediaType ?? 'application/json']: { schema: answer.schema ?? {}, ...(answer.example === undefined ? {} : { example: answer.example }) },
              ...answer.alternatives,
            },
          }),
      ...(Object.keys(headers).length ? { headers } : {}),
    };
  }
  for (const status of [...problems].sort()) {
    const problemContent = { [PROBLEM_MEDIA_TYPE]: { schema: { $ref: 'Problem#' }, example: problemExample(status, route.path) } };
    // A status the route answers with a body of its own (GET /healthz: 503 with the signed health) may also be a problem.
    const own = response[String(status)] as { description: string; content: Record<string, unknown> } | undefined;
    response[String(status)] = own
      ? { ...own, description: `${own.description} Or, as application/problem+json: ${PROBLEM_STATUSES[status]!.description}.`, content: { ...own.content, ...problemContent } }
      : { description: PROBLEM_STATUSES[status]!.description, content: problemContent, ...(STATUS_HEADERS[status] ? { headers: STATUS_HEADERS[status] } : {}) };
  }
  const query = querySchema(route);
  return {
    summary: route.summary,
    operationId: operationId(route),
    ...(names.length
      ? { params: { type: 'object', required: names, properties: Object.fromEntries(names.map((name) => [name, { type: 'string', description: route.params?.[name] ?? name }])) } }
      : {}),
    querystring: query,
    ...(route.body ? { body: requestSchema(route.body) } : {}),
    // Reads are public: an empty list says so (OpenAPI 3.1 §4.8.10), rather than leaving it unsaid.
    security: route.role ? [{ bearer: [route.role] }] : [],
    response,
    'x-graphql-operation': route.operation,
  };
}

/** The shared schemas routes refer to by `$ref`, registered with Fastify under their `$id`. */
export const SHARED_SCHEMAS: JsonSchema[] = [{ $id: 'Problem', ...PROBLEM_SCHEMA }];

/**
 * With an OpenID provider configured, an operation that takes a bearer token takes the provider's
 * access token too: the `openIdConnect` scheme, as an alternative requirement. Its scopes stay empty;
 * the roles come from the configured roles claim (docs/OPERATORS.md, "OpenID Connect").
 */
function withOpenIdConnect(schema: unknown): unknown {
  const security = (schema as { security?: unknown[] } | undefined)?.security;
  return security?.length ? { ...(schema as object), security: [...security, { openIdConnect: [] }] } : schema;
}

/**
 * @fastify/swagger's options for one service's document: paths relative to the service's base
 * address (its prefix is the server URL's, filled in per request).
 */
export function openApiOptions(table: ServiceRoutes, prefix: string, oidc?: Pick<OidcConfig, 'discoveryUrl' | 'rolesClaim'>) {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: table.title,
        version: PLATFORM_VERSION,
        description: `REST interface of the ${table.service} service; each operation runs the GraphQL operation given in x-graphql-operation through the gateway.`,
      },
      components: {
        securitySchemes: {
          bearer: {
            type: 'http' as const,
            scheme: 'bearer',
            description:
              'API tokens (RFC 6750), each for one operator (or the platform) and role: writer (writes), admin (writes and /admin/*), reader, legitimate-interest, authority; issued at POST /issuer/admin/tokens, or configured (PASSPORT_ADMIN_TOKEN: the platform admin; PASSPORT_WRITER_TOKEN: a writer of the operator default). An unknown, expired or revoked token is 401 INVALID_TOKEN alike.',
          },
          ...(oidc && {
            openIdConnect: {
              type: 'openIdConnect' as const,
              openIdConnectUrl: oidc.discoveryUrl,
              description: `Access tokens (JWT) of the platform's OpenID provider, by the client-credentials grant, sent as a bearer token; the roles are those of the ${oidc.rolesClaim} claim.`,
            },
          }),
        },
      },
    },
    transform: ({ schema, url }: { schema: unknown; url: string }) => ({ schema: oidc ? withOpenIdConnect(schema) : schema, url: url.slice(prefix.length) || '/' }),
    // `Problem#` becomes `#/components/schemas/Problem`.
    refResolver: { buildLocalReference: (json: JsonSchema) => String(json.$id) },
  };
}
