/**
 * A server's one shutdown path, for all six: it stops accepting connections, idle kept-alive ones are
 * closed, requests in flight are answered and their connections closed then, a request that still
 * comes on a kept-alive connection is refused in the server's own words, and whatever is still open
 * after SHUTDOWN_TIMEOUT_MS is cut.
 * What a server must stop once no request runs (its Apollo Server) is an `onClose` hook of its own.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { ServerName } from '../config/services.js';
import { RequestProblem } from '../http/request-problem.js';
import { problem } from '../problem.js';

/**
 * Once the server closes, a request that still comes on a kept-alive connection is answered 503 at
 * once with `connection: close`, as a refusal of the server's own (its error handler: problem+json,
 * or GraphQL's error shape) and logged with its route, rather than with Fastify's own body
 * (return503OnClosing, off in publicServerOptions).
 */
export const shutdownRefusal = fp<{ server: ServerName }>(
  async (app, { server }) => {
    let closing = false;
    app.addHook('preClose', (done) => {
      closing = true;
      done();
    });
    const shuttingDown = () => new RequestProblem(problem(503, 'SHUTTING_DOWN', `The ${server} is shutting down; send the request again.`), { 'retry-after': '1', connection: 'close' });
    app.addHook('onRequest', (_request, _reply, done) => done(closing ? shuttingDown() : undefined));
    // Node closes the connections idle when the close begins, not those idle later: a kept-alive one
    // whose request was in flight would hold the close until the client (a load balancer keeps it for
    // its own idle timeout) or SHUTDOWN_TIMEOUT_MS ends it. A connection with a pipelined request still
    // to answer is not idle, so that request is answered (refused above) first. One sweep of the
    // connections for the responses of one turn of the event loop.
    let sweeping = false;
    app.addHook('onResponse', (_request, _reply, done) => {
      if (closing && !sweeping) {
        sweeping = true;
        setImmediate(() => {
          sweeping = false;
          app.server.closeIdleConnections();
        });
      }
      done();
    });
  },
  { name: 'passport-shutdown-refusal', fastify: '5.x' },
);

/** Closes a server, giving the requests in flight `timeoutMs` (SHUTDOWN_TIMEOUT_MS) to finish before their connections are cut. */
export async function closeGracefully(app: FastifyInstance, timeoutMs: number): Promise<void> {
  const cut = setTimeout(() => app.server.closeAllConnections(), timeoutMs);
  try {
    await app.close();
  } finally {
    clearTimeout(cut);
  }
}
