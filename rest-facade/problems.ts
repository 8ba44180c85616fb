/**
 * The facade's problems (RFC 9457): made from a service's GraphQL errors and from Fastify's own
 * refusals, and sent as the client gets them.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PROBLEM_MEDIA_TYPE, RequestProblem } from '../lib/http/request-problem.js';
import { problem, problemOf, type Problem } from '../lib/problem.js';

interface GraphqlError {
  message: string;
  extensions?: Record<string, unknown>;
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

export const tooLarge = (bodyLimit: number) => new RequestProblem(problem(413, 'BODY_TOO_LARGE', `The body exceeds ${bodyLimit} bytes.`, { limit: bodyLimit }));

/** Fastify's own refusals (content type, size, framework) as the problems the facade documents. */
export function problemOfFrameworkError(error: { code?: string; statusCode?: number; message: string }, bodyLimit: number): RequestProblem | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return tooLarge(bodyLimit);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new RequestProblem(problem(415, 'UNSUPPORTED_MEDIA_TYPE', 'The body must be application/json.'), { 'accept-post': 'application/json' });
    case 'FST_ERR_BAD_URL':
      return new RequestProblem(problem(400, 'MALFORMED_PATH', 'The path is not validly percent-encoded.'));
  }
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) return new RequestProblem(problem(error.statusCode, 'BAD_REQUEST', error.message));
  return undefined;
}

/** Sends a problem as the client gets it. */
export type SendProblem = (request: FastifyRequest, reply: FastifyReply, details: Problem, headers?: Record<string, string>) => FastifyReply;

/**
 * Problems as the client gets them: the type an absolute link into /docs/problems at the request's
 * public origin (`origin`, public-urls.ts), whatever its Host; the instance the path asked.
 */
export function problemSender(origin: (request: FastifyRequest) => string): SendProblem {
  return (request, reply, details, headers = {}) => {
    const instance = request.url.split('?')[0];
    const type = new URL(details.type, origin(request)).href;
    return reply
      .code(details.status)
      .headers(headers)
      .type(PROBLEM_MEDIA_TYPE)
      .send(Buffer.from(JSON.stringify({ ...details, type, instance })));
  };
}
