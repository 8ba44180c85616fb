/**
 * How a GraphQL server of the platform (the gateway, every subgraph) refuses a request before
 * GraphQL sees it: in GraphQL's own shape, {"errors": [{"message", "extensions": {"code"}}]}, with
 * the HTTP status of the refusal, so that a GraphQL client reads it like any other error.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { problem } from '../problem.js';
import { RequestProblem } from './request-problem.js';

export function sendGraphqlRefusal(reply: FastifyReply, status: number, code: string, message: string, headers: Record<string, string> = {}): FastifyReply {
  return reply
    .code(status)
    .headers(headers)
    .type('application/json; charset=utf-8')
    .send(Buffer.from(JSON.stringify({ errors: [{ message, extensions: { code } }] })));
}

/**
 * A Fastify error handler for a GraphQL server: a request problem (a body that is not JSON, of
 * another media type, …) or a body over `bodyLimit` is answered with its status; anything else is
 * logged under `name` and answered 500.
 */
export function graphqlErrorHandler(name: string, bodyLimit: number) {
  return (error: FastifyError | Error, _request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const refused =
      error instanceof RequestProblem
        ? error.details
        : (error as { code?: string }).code === 'FST_ERR_CTP_BODY_TOO_LARGE'
          ? problem(413, 'PAYLOAD_TOO_LARGE', `The request body exceeds ${bodyLimit} bytes.`)
          : undefined;
    if (refused) return sendGraphqlRefusal(reply, refused.status, refused.code, refused.detail ?? refused.title);
    console.error(`[${name}]`, error);
    return sendGraphqlRefusal(reply, 500, 'INTERNAL_SERVER_ERROR', `Internal error in the ${name}.`);
  };
}
