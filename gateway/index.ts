/**
 * The gateway: one GraphQL endpoint over the four subgraphs (apollo.ts), on the platform's server
 * (lib/server/platform-server.ts), with GraphiQL (graphiql.ts).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fastifyApolloHandler } from '@as-integrations/fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { PlatformIdentity } from '../lib/auth/authentication.js';
import { AccessTokens } from '../lib/auth/tokens.js';
import type { GraphqlLimits, TrustedDocumentsSetting } from '../lib/config/runtime.js';
import { graphqlErrorHandler, refuseOtherMethods } from '../lib/http/graphql-refusals.js';
import { JSON_MEDIA_TYPE, MAX_JSON_DEPTH, parseJsonBody } from '../lib/http/json-body.js';
import { RequestProblem } from '../lib/http/request-problem.js';
import { peerReady } from '../lib/ops/operations.js';
import { problem } from '../lib/problem.js';
import { answerOptions } from '../lib/server/cross-origin.js';
import type { EdgeOptions } from '../lib/server/edge-options.js';
import { buildPlatformServer, type ListeningServer } from '../lib/server/platform-server.js';
import { parse } from 'graphql';
import { costAnnotations } from '../lib/graphql/cost.js';
import { SUBGRAPH_CIRCUIT_OPEN_MS, SUBGRAPH_TIMEOUT_MS, SUPERGRAPH_POLL_INTERVAL_MS } from '../lib/config/runtime.js';
import { startGatewayGraphql } from './apollo.js';
import { composeSupergraph, type SubgraphEndpoint } from './composition.js';
import { ChangeNotices } from './live/change-notices.js';
import { LIVE_FEEDS } from '../lib/graphql/live-feeds.js';
import { LiveSubscriptions } from './live/live-subscription.js';
import { asksForEventStream } from '../lib/graphql/subgraph-subscriptions.js';
import { liveTransport } from './live/transport.js';
import { serveGraphiql } from './graphiql.js';
import { trustedDocumentsLookup, trustedDocumentsResolver } from './trusted-documents.js';
import { requestErrorStatus } from './response-status.js';
import { SubgraphInstances } from './subgraph-instances.js';
import { SupergraphUpdates } from './supergraph-updates.js';

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
  /** How long an open circuit of a subgraph instance refuses before it is probed (SUBGRAPH_CIRCUIT_OPEN_MS). */
  subgraphCircuitOpenMs?: number;
  /** How often the subgraphs' SDL is read for a changed supergraph (SUPERGRAPH_POLL_INTERVAL_MS); 0: only on SIGUSR2. */
  supergraphPollIntervalMs?: number;
  /** Which documents run (TRUSTED_DOCUMENTS); by default any, the platform's also by id. */
  trustedDocuments?: TrustedDocumentsSetting;
  /**
   * The identity store and the authenticators every server shares (lib/auth/authentication.ts), by
   * which a subscription's connection is checked as it opens; without it only the configured tokens
   * are recognised.
   */
  identity?: PlatformIdentity;
}

export interface RunningGateway extends ListeningServer {
  graphqlUrl: string;
  graphiqlUrl: string;
  /** The supergraph the gateway serves now. */
  readonly supergraphSdl: string;
  /** Looks for a changed supergraph now, as the poll and SIGUSR2 do. */
  checkSupergraph: SupergraphUpdates['check'];
}

export async function startGateway(options: GatewayOptions): Promise<RunningGateway> {
  const lookupDocument = trustedDocumentsLookup(options.trustedDocuments ?? { only: false, files: [] });
  const resolveDocument = trustedDocumentsResolver(lookupDocument);
  const supergraphSdl = await composeSupergraph(options.subgraphs);
  const writeSupergraph = async (sdl: string) => {
    if (!options.supergraphFile) return;
    // The data folder of a gateway run on its own may not exist yet.
    await mkdir(dirname(options.supergraphFile), { recursive: true });
    await writeFile(options.supergraphFile, sdl);
  };
  await writeSupergraph(supergraphSdl);
  const instanceUrls = (endpoint: SubgraphEndpoint) => (endpoint.replicas?.length ? endpoint.replicas : [endpoint.url]);
  // The gateway listens once the supergraph is composed; ready then means every subgraph replica is ready.
  const subgraphReadiness = options.subgraphs.flatMap((endpoint) =>
    instanceUrls(endpoint).map(
      (replica, index, all) => [all.length > 1 ? `${endpoint.name}#${index + 1}` : endpoint.name, peerReady(new URL('/readyz', replica).href, `the ${endpoint.name} subgraph`)] as const,
    ),
  );
  const subgraphs = new Map<string, SubgraphInstances>();
  // The rate limits know a client by the tokens the identity has met (lib/server/rate-limits.ts).
  const server = await buildPlatformServer(
    'gateway',
    { ...options, authenticator: options.identity?.authenticator ?? options.tokens },
    {
      readiness: Object.fromEntries(subgraphReadiness),
      // Each instance's circuit, by the names the checks have.
      readinessDetail: () => ({ circuits: Object.assign({}, ...[...subgraphs.values()].map((instances) => instances.circuits())) }),
      errorHandler: graphqlErrorHandler('gateway', options.bodyLimit),
      fastify: { exposeHeadRoutes: true },
    },
  );
  const { log } = server.app;
  for (const endpoint of options.subgraphs) {
    const instances = new SubgraphInstances({
      name: endpoint.name,
      urls: instanceUrls(endpoint),
      timeoutMs: endpoint.timeoutMs ?? SUBGRAPH_TIMEOUT_MS,
      circuitOpenMs: options.subgraphCircuitOpenMs ?? SUBGRAPH_CIRCUIT_OPEN_MS,
      onCircuitChange: (instance, state) => {
        server.metrics.subgraphCircuitChanged(endpoint.name, instance, state);
        if (state === 'open') log.warn({ subgraph: endpoint.name, instance }, `circuit open: ${instance} is not asked until it is probed`);
        else if (state === 'closed') log.info({ subgraph: endpoint.name, instance }, `circuit closed: ${instance} answers again`);
      },
      onRetry: () => server.metrics.subgraphFetchRetried(endpoint.name),
    });
    subgraphs.set(endpoint.name, instances);
  }
  const costs = costAnnotations(parse(supergraphSdl));
  const supergraph = new SupergraphUpdates({
    subgraphs: options.subgraphs,
    supergraphSdl,
    pollIntervalMs: options.supergraphPollIntervalMs ?? SUPERGRAPH_POLL_INTERVAL_MS,
    log,
    metrics: server.metrics,
    onUpdate: async (sdl) => {
      // Requests from now on are costed by the new supergraph's @cost and @listSize.
      Object.assign(costs, costAnnotations(parse(sdl)));
      await writeSupergraph(sdl);
    },
  });
  const graphql = await startGatewayGraphql({ ...options, supergraph, subgraphs, costs, server });
  const { apollo } = graphql;
  // The feeds of the services this gateway serves (a graph without the issuer, as the archive tests'
  // stand-in graph, has no passportEvents to follow; ChangeNotices.watch refuses a service it lacks).
  const feedUrls = LIVE_FEEDS.flatMap(({ service }) => options.subgraphs.filter((subgraph) => subgraph.name === service).map(({ url }) => [service, url] as const));
  const notices = new ChangeNotices(new Map(feedUrls), options.subgraphSecret);
  const live = new LiveSubscriptions({ ...graphql, notices, limits: options.limits, metrics: server.metrics.live, tracer: server.tracer });
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
  const transport = await liveTransport(app, live, {
    lookupDocument,
    maxPayload: options.bodyLimit,
    limits: options.limits,
    metrics: server.metrics.live,
    authenticator: options.identity?.authenticator ?? options.tokens ?? new AccessTokens([]),
    ...(options.identity ? { onRevocation: options.identity.store.onRevocation.bind(options.identity.store) } : {}),
  });
  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    // A document named by its id (TRUSTED_DOCUMENTS) is looked up first, for queries and subscriptions alike.
    if (resolveDocument(request, reply)) return reply;
    // Subscriptions over GraphQL over SSE (gateway/live/).
    if (asksForEventStream(request)) return transport.serveEventStream(request, reply);
    // The integration types its route as answering strings; this route also rewrites the status.
    const body = await serveGraphql.call(app, request as never, reply as never);
    return typeof body === 'string' ? reply.code(requestErrorStatus(reply.statusCode, reply.getHeader('content-type') as string | undefined, body)).send(body) : body;
  };
  // GET also takes the WebSocket upgrade of graphql-ws.
  app.route({ method: 'GET', url: '/graphql', exposeHeadRoute: false, handler, wsHandler: transport.wsHandler });
  app.route({ method: 'POST', url: '/graphql', handler });
  // Apollo Server names the methods /graphql takes; OPTIONS says so (and answers an allowed origin's
  // preflight, lib/server/cross-origin.ts); every other one is refused the same way.
  answerOptions(app, '/graphql', ['GET', 'POST']);
  refuseOtherMethods(app, '/graphql', ['OPTIONS']);
  serveGraphiql(app);

  const { port } = await server.listen({ port: options.port, host: options.host });
  const base = `http://${options.host}:${port}`;
  return {
    url: base,
    graphqlUrl: `${base}/graphql`,
    graphiqlUrl: `${base}/graphiql/`,
    get supergraphSdl() {
      return supergraph.supergraphSdl;
    },
    checkSupergraph: () => supergraph.check(),
    stop: server.stop,
  };
}
