import type { ApolloServerPlugin, GraphQLRequestListener } from '@apollo/server';
import { unwrapResolverError } from '@apollo/server/errors';
import type { FastifyBaseLogger } from 'fastify';
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
  'SUBSCRIPTION_NOT_SUPPORTED',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_NOT_SUPPORTED',
]);

/**
 * Passes problems and request errors through and hides everything else — stack traces, SQL, driver
 * messages — behind a generic internal error; faultLoggingPlugin logs the original on the server.
 * Subgraphs raise problems as ProblemError; the gateway receives them as `extensions.problem` with `serviceName`.
 */
export function formatServiceError(service: string) {
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
      const details = problem(503, 'DATABASE_UNAVAILABLE', `The ${failed} service cannot reach its database; try again shortly.`, { retry_after: DATABASE_RETRY_AFTER_SECONDS });
      return { message: details.detail!, ...(formatted.path ? { path: formatted.path } : {}), extensions: { code: details.code, problem: details, serviceName: failed } };
    }
    return {
      message: `Internal error in the ${failed} service.`,
      ...(formatted.path ? { path: formatted.path } : {}),
      extensions: { code: 'INTERNAL_SERVER_ERROR', serviceName: failed, problem: problem(500, 'INTERNAL_ERROR', `The ${failed} service failed to answer; the failure is logged.`) },
    };
  };
}

/** A GraphQL server's context that carries its request's logger (bound to the request's id and trace ids). */
export interface LoggingContext {
  log: FastifyBaseLogger;
}

/**
 * Logs each error the server's formatError hides (formatServiceError: `database unavailable`,
 * `internal error`, with `from` naming the service that raised it when another did) with the
 * request's logger, so that the line carries the request's id and trace ids; the answer says only
 * that the failure is logged.
 */
export function faultLoggingPlugin<T extends LoggingContext>(formatError: (formatted: GraphQLFormattedError, error: unknown) => GraphQLFormattedError): ApolloServerPlugin<T> {
  const listener: GraphQLRequestListener<T> = {
    async didEncounterErrors({ errors, contextValue }) {
      for (const error of errors) {
        const { extensions } = formatError(error.toJSON(), error);
        const original = unwrapResolverError(error);
        const database = extensions?.code === 'DATABASE_UNAVAILABLE' && isDatabaseUnavailable(original);
        if (!database && extensions?.code !== 'INTERNAL_SERVER_ERROR') continue;
        const from = typeof error.extensions?.serviceName === 'string' ? { from: error.extensions.serviceName } : {};
        contextValue.log.error({ err: original, ...from }, database ? 'database unavailable' : 'internal error');
      }
    },
  };
  // One listener for every request: nothing is made per request.
  const listening = Promise.resolve(listener);
  return { requestDidStart: () => listening };
}
