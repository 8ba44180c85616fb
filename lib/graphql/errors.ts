import { unwrapResolverError } from '@apollo/server/errors';
import type { GraphQLFormattedError } from 'graphql';
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from '../db/unavailable.js';
import { problem, problemOf, ProblemError } from '../problem.js';

/** Error codes of graphql-js and Apollo Server that describe the client's request, not a fault. */
const REQUEST_ERROR_CODES = new Set([
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_USER_INPUT',
  'BAD_REQUEST',
  'OPERATION_RESOLUTION_FAILURE',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_NOT_SUPPORTED',
]);

/**
 * Passes problems and request errors through and hides everything else — stack traces, SQL, driver
 * messages — behind a generic internal error, logging the original on the server. Subgraphs raise
 * problems as ProblemError; the gateway receives them as `extensions.problem` with `serviceName`.
 */
export function formatServiceError(service: string, log: (message: string) => void = (message) => console.error(message)) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const original = unwrapResolverError(error);
    const details = original instanceof ProblemError ? original.problem : problemOf(formatted as { extensions?: Record<string, unknown> });
    const origin = typeof formatted.extensions?.serviceName === 'string' ? { serviceName: formatted.extensions.serviceName } : {};
    if (details) {
      return { message: formatted.message, ...(formatted.path ? { path: formatted.path } : {}), extensions: { code: details.code, problem: details, ...origin } };
    }
    const code = formatted.extensions?.code;
    if (typeof code === 'string' && REQUEST_ERROR_CODES.has(code)) {
      // A limit's refusal says which limit, for programs (lib/graphql/cost.ts, gateway/refusals.ts).
      const limit = typeof formatted.extensions?.limit === 'object' ? { limit: formatted.extensions.limit } : {};
      return {
        message: formatted.message,
        ...(formatted.locations ? { locations: formatted.locations } : {}),
        ...(formatted.path ? { path: formatted.path } : {}),
        extensions: { code, ...limit, ...origin },
      };
    }
    const failed = origin.serviceName ?? service;
    if (isDatabaseUnavailable(original)) {
      log(`[${service}] database unavailable: ${original instanceof Error ? original.message : String(original)}`);
      const details = problem(503, 'DATABASE_UNAVAILABLE', `The ${failed} service cannot reach its database; try again shortly.`, { retry_after: DATABASE_RETRY_AFTER_SECONDS });
      return { message: details.detail!, ...(formatted.path ? { path: formatted.path } : {}), extensions: { code: details.code, problem: details, serviceName: failed } };
    }
    log(`[${service}] internal error${origin.serviceName ? ` from ${origin.serviceName}` : ''}: ${original instanceof Error ? (original.stack ?? original.message) : String(original)}`);
    return {
      message: `Internal error in the ${failed} service.`,
      ...(formatted.path ? { path: formatted.path } : {}),
      extensions: { code: 'INTERNAL_SERVER_ERROR', serviceName: failed, problem: problem(500, 'INTERNAL_ERROR', `The ${failed} service failed to answer; the failure is logged.`) },
    };
  };
}
