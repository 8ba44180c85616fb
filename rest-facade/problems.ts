import { problem, problemOf, type Problem } from '../lib/problem.js';

interface GraphqlError {
  message: string;
  extensions?: Record<string, unknown>;
}

/**
 * The headers a problem asks for: a 503 or 429 says when to try again (RFC 9110 §10.2.3), from the
 * problem's `retry_after` seconds.
 */
export function problemHeaders(details: Problem): Record<string, string> {
  // A service's 401 carries its Bearer challenge (lib/graphql/context.ts, roleChecker).
  if (details.status === 401 && typeof details.authenticate === 'string') return { 'www-authenticate': details.authenticate };
  if (details.status !== 503 && details.status !== 429) return {};
  const seconds = typeof details.retry_after === 'number' ? details.retry_after : 5;
  return { 'retry-after': String(seconds) };
}

/** Codes graphql-js and Apollo give to requests whose variables or shape the schema refuses. */
const INVALID_INPUT_CODES = new Set(['BAD_USER_INPUT', 'GRAPHQL_VALIDATION_FAILED', 'GRAPHQL_PARSE_FAILED']);

/** The problem a failed GraphQL answer stands for; the first error decides. */
export function problemFromGraphqlErrors(errors: readonly GraphqlError[]): Problem {
  const first = errors[0]!;
  const details = problemOf(first);
  if (details) return details;
  const code = first.extensions?.code;
  if (typeof code === 'string' && INVALID_INPUT_CODES.has(code)) {
    return problem(400, 'INVALID_REQUEST', first.message.replace(/^Variable "\$\w+" got invalid value /, 'Invalid value '));
  }
  const service = typeof first.extensions?.serviceName === 'string' ? first.extensions.serviceName : 'gateway';
  return problem(500, 'INTERNAL_ERROR', `The ${service} service failed to answer; the failure is logged.`);
}
