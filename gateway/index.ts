/**
 * The gateway: one GraphQL endpoint over the four subgraphs (apollo.ts), on the platform's server
 * (lib/server/platform-server.ts), with GraphiQL (graphiql.ts).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fastifyApolloHandler } from '@as-integrations/fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { GraphqlLimits } from '../lib/config/runtime.js';
import { graphqlErrorHandler, refuseOtherMethods } from '../lib/http/graphql-refusals.js';
import { JSON_MEDIA_TYPE, MAX_JSON_DEPTH, parseJsonBody } from '../lib/http/json-body.js';
import { RequestProblem } from '../lib/http/request-problem.js';
import { peerReady } from '../lib/ops/operations.js';
import { problem } from '../lib/problem.js';
import type { EdgeOptions } from '../lib/server/edge-options.js';
import { buildPlatformServer, type ListeningServer } from '../lib/server/platform-server.js';
import { startGatewayGraphql } from './apollo.js';
import { composeSupergraph, type SubgraphEndpoint } from './composition.js';
import { ChangeNotices } from './live/change-notices.js';
import { LIVE_FEEDS } from './live/feeds.js';
import { LiveSubscriptions } from './live/live-subscription.js';
import { asksForEventStream, liveTransport } from './live/transport.js';
import { serveGraphiql } from './graphiql.js';
import { requestErrorStatus } from './response-status.js';

export interface GatewayOptions extends EdgeOptions {
  host: string;
  port: number;
  subgraphs: readonly SubgraphEndpoint[];
  /** Whether clients may introspect the composed schema (GraphiQL needs it). */
  introspection: boolean;
  /** Where the composed supergraph SDL is written, for Apollo Router or Hive Gateway. */
  supergraphFile?: string;
  limits: GraphqlLimits;
  /** Sent to every subgraph as the gateway's credential (SUBGRAPH_SECRET), when configured. */
  subgraphSecret?: string;
}

export interface RunningGateway extends ListeningServer {
  graphqlUrl: string;
  graphiqlUrl: string;
  supergraphSdl: string;
}

export async function startGateway(options: GatewayOptions): Promise<RunningGateway> {
  const supergraphSdl = await composeSupergraph(options.subgraphs);
  if (options.supergraphFile) {
    // The data folder of a gateway run on its own may not exist yet.
    await mkdir(dirname(options.supergraphFile), { recursive: true });
    await writeFile(options.supergraphFile, supergraphSdl);
  }
  // The gateway listens once the supergraph is composed; ready then means every subgraph replica is ready.
  const subgraphReadiness = options.subgraphs.flatMap(({ name, url, replicas }) =>
    (replicas?.length ? replicas : [url]).map((replica, index, all) => [all.length > 1 ? `${name}#${index + 1}` : name, peerReady(new URL('/readyz', replica).href, `the ${name} subgraph`)] as const),
  );
  const server = await buildPlatformServer('gateway', options, {
    readiness: Object.fromEntries(subgraphReadiness),
    errorHandler: graphqlErrorHandler('gateway', options.bodyLimit),
    fastify: { exposeHeadRoutes: true },
  });
  const graphql = await startGatewayGraphql({ ...options, supergraphSdl, server });
  const { apollo } = graphql;
  const notices = new ChangeNotices(new Map(LIVE_FEEDS.map(({ service }) => [service, options.subgraphs.find((subgraph) => subgraph.name === service)!.url])), options.subgraphSecret);
  const live = new LiveSubscriptions({ ...graphql, notices, limits: options.limits, metrics: server.metrics.live });
  // Once the requests in flight are answered (the server's one shutdown path).
  server.app.addHook('onClose', async () => {
    notices.close();
    await apollo.stop();
  });

  const { app } = server;
  app.removeAllContentTypeParsers();
  // Variables nested thousands deep overflow the stack when sent on to a subgraph (a 500). The limit
  // is the facade's, counted inside the envelope {"variables": {"name": …}}.
  app.addContentTypeParser(JSON_MEDIA_TYPE, { parseAs: 'buffer' }, (_request, raw: Buffer, done) => {
    try {
      done(null, raw.length ? parseJsonBody(raw, MAX_JSON_DEPTH + 2) : undefined);
    } catch (error) {
      done(error as Error, undefined);
    }
  });
  // A body of another media type is not a GraphQL request; a form or a text/plain body is also what a
  // cross-site page could send without a preflight (CSRF prevention is off in apollo.ts).
  app.addContentTypeParser('*', (_request, _payload, done) => done(new RequestProblem(problem(415, 'UNSUPPORTED_MEDIA_TYPE', 'A POST to /graphql needs content-type: application/json.')), undefined));
  app.setNotFoundHandler((_request, reply) => reply.code(404).type('application/json; charset=utf-8').send(Buffer.from('{"error":"not found"}')));

  const serveGraphql = fastifyApolloHandler(apollo, { context: async (request) => ({ authorization: request.headers.authorization, requestId: request.id, log: request.log }) });
  const transport = await liveTransport(app, live, { maxPayload: options.bodyLimit, limits: options.limits, metrics: server.metrics.live });
  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    // Subscriptions over GraphQL over SSE (gateway/live/).
    if (asksForEventStream(request)) return transport.serveEventStream(request, reply);
    // The integration types its route as answering strings; this route also rewrites the status.
    const body = await serveGraphql.call(app, request as never, reply as never);
    return typeof body === 'string' ? reply.code(requestErrorStatus(reply.statusCode, reply.getHeader('content-type') as string | undefined, body)).send(body) : body;
  };
  // GET also takes the WebSocket upgrade of graphql-ws.
  app.route({ method: 'GET', url: '/graphql', exposeHeadRoute: false, handler, wsHandler: transport.wsHandler });
  app.route({ method: 'POST', url: '/graphql', handler });
  // Apollo Server names the methods /graphql takes; every other one is refused the same way.
  refuseOtherMethods(app, '/graphql');
  serveGraphiql(app);

  const { port } = await server.listen({ port: options.port, host: options.host });
  const base = `http://${options.host}:${port}`;
  return { url: base, graphqlUrl: `${base}/graphql`, graphiqlUrl: `${base}/graphiql/`, supergraphSdl, stop: server.stop };
}
