/**
 * How a GraphQL server of the platform (the gateway, every subgraph) refuses a request before
 * GraphQL sees it: in GraphQL's own shape, {"errors": [{"message", "extensions": {"code"}}]}, with
 * the HTTP status of the refusal, so that a GraphQL client reads it like any other error.
 */
import { METHODS } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { RequestProblem } from './request-problem.js';
import { drainRefusedBody } from './server-options.js';

export function sendGraphqlRefusal(reply: FastifyReply, status: number, code: string, message: string, headers: Record<string, string> = {}): FastifyReply {
  return reply
    .code(status)
    .headers(headers)
    .type('application/json; charset=utf-8')
    .send(Buffer.from(JSON.stringify({ errors: [{ message, extensions: { code } }] })));
}

/** Fastify's own refusals of a body (its JSON parser's among them), in the platform's codes and words. */
const BODY_REFUSALS: Record<string, (bodyLimit: number) => [code: string, message: string]> = {
  FST_ERR_CTP_BODY_TOO_LARGE: (bodyLimit) => ['PAYLOAD_TOO_LARGE', `The request body exceeds ${bodyLimit} bytes.`],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => ['UNSUPPORTED_MEDIA_TYPE', 'A POST of a GraphQL request needs content-type: application/json.'],
  FST_ERR_CTP_EMPTY_JSON_BODY: () => ['MALFORMED_JSON', 'The body is empty; a JSON object is required.'],
  FST_ERR_CTP_INVALID_JSON_BODY: () => ['MALFORMED_JSON', 'The body is not valid JSON.'],
};

/**
 * A Fastify error handler for a GraphQL server: a request problem, or a refusal of Fastify's own (a
 * body over `bodyLimit`, not JSON, of another media type: any client error it gives a 4xx), is
 * answered with its status; anything else is logged (the request's logger) and answered 500 as an internal error of `name`.
 */
export function graphqlErrorHandler(name: string, bodyLimit: number) {
  return (error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    drainRefusedBody(request.raw, reply);
    if (error instanceof RequestProblem) return sendGraphqlRefusal(reply, error.details.status, error.details.code, error.details.detail ?? error.details.title, error.headers);
    const { code = '', statusCode = 500 } = error as Partial<FastifyError>;
    if (statusCode >= 400 && statusCode < 500) {
      // The JSON parser's own SyntaxError carries only its status.
      const [refusal, message] =
        BODY_REFUSALS[code]?.(bodyLimit) ?? (error instanceof SyntaxError ? ['MALFORMED_JSON', `The body is not valid JSON: ${error.message}`] : ['BAD_REQUEST', error.message]);
      return sendGraphqlRefusal(reply, statusCode, refusal, message);
    }
    request.log.error({ err: error }, 'internal error');
    return sendGraphqlRefusal(reply, 500, 'INTERNAL_SERVER_ERROR', `Internal error in the ${name}.`);
  };
}

/**
 * Every method but GET and POST at `url` answered 405 with Allow: GraphQL over HTTP is served with those two.
 * `answeredElsewhere`: methods the server answers at `url` itself (the gateway's OPTIONS, for CORS).
 */
export function refuseOtherMethods(app: FastifyInstance, url: string, answeredElsewhere: readonly string[] = []): void {
  app.route({
    method: METHODS.filter((method) => !['GET', 'POST', 'CONNECT', ...answeredElsewhere].includes(method) && app.supportedMethods.includes(method)),
    url,
    handler: async (_request, reply) => sendGraphqlRefusal(reply, 405, 'METHOD_NOT_ALLOWED', 'GraphQL is served with GET and POST.', { allow: 'GET, POST' }),
  });
}
