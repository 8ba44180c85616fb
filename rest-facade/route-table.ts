/**
 * The REST facade is declared, not programmed: for each method and path of the specification, the
 * GraphQL operation it runs through the gateway, how path, query and body become variables, and how
 * the result becomes status, headers and body. The HTTP server and the OpenAPI documents are both
 * derived from these tables
 * (server.ts, openapi.ts).
 */
import type { Role } from '../lib/auth/tokens.js';
import type { ServiceName } from '../lib/config/services.js';
import type { Problem } from '../lib/problem.js';

export type HttpMethod = 'GET' | 'POST';

export type QueryParameterType = 'string' | 'integer' | 'boolean' | 'date-time' | 'interval';

export interface QueryParameter {
  type: QueryParameterType;
  description: string;
  /** Allowed values, for strings. */
  enum?: readonly string[];
  minimum?: number;
  maximum?: number;
}

/** JSON Schema (2020-12) of a request or response body, for the OpenAPI document. */
export type JsonSchema = Record<string, unknown>;

export interface RouteRequest {
  params: Record<string, string>;
  query: Record<string, string | number | boolean | undefined>;
  body: unknown;
  /** A conditional GET's If-None-Match: a route whose answer usually still matches can read less until it knows. */
  ifNoneMatch?: string;
  /** The Accept header, for the routes that negotiate their answer (the Digital Link resolver, credentials). */
  accept?: string;
  /** An event stream's Last-Event-ID: the id of the last event the client received, where it resumes. */
  lastEventId?: string;
}

/** What a route answers: the body is JSON unless `raw` bytes or a `stream` are given. */
export interface RouteResult {
  status?: number;
  headers?: Record<string, string>;
  body?: unknown;
  raw?: Buffer;
  /**
   * A body sent as it is produced (e.g. bytes fetched from the graph page by page), so that the
   * facade holds one piece at a time. `headers` give its `content-length` when it is known (sent
   * chunked otherwise, e.g. GET /trust/graph); it is not read for HEAD.
   */
  stream?: AsyncIterable<Uint8Array>;
  /** No body at all (a redirect). */
  empty?: boolean;
}

export interface RouteContext {
  service: ServiceName;
  /** The service's public base URL: configured (`<SERVICE>_PUBLIC_URL`), else where the facade serves it (lib/config/public-urls.ts). */
  baseUrl: string;
  /** Every service's public base URL, the same way. */
  publicUrls: Record<ServiceName, string>;
  /** The routes of the service, for discovery documents. */
  routes: readonly Route[];
  /** The request as the route's `variables` saw it, e.g. to carry filters into a next-page link. */
  request: RouteRequest;
  /** Runs a further operation through the gateway with the caller's credentials, e.g. for the next page of a streamed body. */
  graphql(operation: string, variables: Record<string, unknown>): Promise<Record<string, any>>;
  /** Subscribes at the gateway with the caller's credentials: each event's data, e.g. for an event stream. */
  subscribe(operation: string, variables: Record<string, unknown>): AsyncIterable<Record<string, any>>;
}

export interface Route {
  method: HttpMethod;
  /** Path relative to the service's base, with `{name}` parameters, as the specification writes it. */
  path: string;
  summary: string;
  /** Role a caller needs; absent for public reads. */
  role?: Role;
  /** Reads the service's admin log: the refusals the facade has not reported yet are reported first, so that the page shows them. */
  readsAdminLog?: true;
  /** Path parameter descriptions, by name. */
  params?: Record<string, string>;
  query?: Record<string, QueryParameter>;
  /** Takes query parameters beyond `query` too, ignoring them; says which (e.g. GS1 Digital Link data attributes). */
  otherQueryParameters?: string;
  /** Schema of the JSON body a POST takes; POSTs without one take no body. */
  body?: JsonSchema;
  /** The GraphQL document sent to the gateway. */
  operation: string;
  variables?(request: RouteRequest): Record<string, unknown>;
  /** Maps the operation's `data` to the HTTP answer. */
  result(data: Record<string, any>, context: RouteContext): RouteResult;
  /**
   * Success responses for the OpenAPI document: status → description, media type (default JSON),
   * the schema of the body with an example, and the headers it always carries (a 201's Location);
   * 304 has no body.
   */
  responses: Record<
    number,
    {
      description: string;
      mediaType?: string;
      schema?: JsonSchema;
      example?: unknown;
      headers?: Record<string, JsonSchema>;
      /** Further representations of the same answer, by media type (chosen by Accept). */
      alternatives?: Record<string, { schema: JsonSchema; example?: unknown }>;
    }
  >;
  /** Adds to a problem the service answered what only the facade knows (absolute URLs). */
  problem?(details: Problem, context: RouteContext): Problem;
  /** Problem statuses this route answers besides the ones every route may (400, 404, 405, 413, 415). */
  problems?: readonly number[];
}

export interface ServiceRoutes {
  service: ServiceName;
  title: string;
  routes: readonly Route[];
}

/** Converts REST snake_case member names to GraphQL camelCase, leaving opaque members untouched. */
export function camelizeKeys(value: unknown, opaque: readonly string[] = []): unknown {
  if (Array.isArray(value)) return value.map((item) => camelizeKeys(item, opaque));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([key, member]) => [
      key.replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase()),
      opaque.includes(key) ? member : camelizeKeys(member, opaque),
    ]),
  );
}
