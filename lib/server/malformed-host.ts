/** The refusal of a malformed Host, a server's edge feature. */
import fp from 'fastify-plugin';
import { drainRefusedBody, isWellFormedHost } from '../http/server-options.js';
import { PROBLEM_MEDIA_TYPE } from '../http/request-problem.js';
import { problem } from '../problem.js';

/**
 * Refuses a request whose Host is malformed (isWellFormedHost) with 400 problem+json, before any
 * route sees it, as a connection-level refusal reads: it is not a request any route could answer,
 * and what a route or refusal would write from its Host (an absolute problem type, a Location, a
 * base URL) cannot be made. A request without a Host (HTTP/1.0) goes on.
 */
export const malformedHostRefusal = fp(
  async (app) => {
    app.addHook('onRequest', async (request, reply) => {
      const { host } = request.headers;
      if (host === undefined || isWellFormedHost(host)) return;
      drainRefusedBody(request.raw, reply);
      const details = problem(400, 'MALFORMED_HOST', 'The Host header must name a host: a domain name or an IP address (IPv6 in brackets), and an optional port up to 65535.');
      return reply
        .code(400)
        .type(PROBLEM_MEDIA_TYPE)
        .send(Buffer.from(JSON.stringify(details)));
    });
  },
  { name: 'passport-malformed-host', fastify: '5.x' },
);
