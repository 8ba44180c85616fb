import { ApolloServer, type ApolloServerPlugin, type BaseContext } from '@apollo/server';
import { printSubgraphSchema } from '@apollo/subgraph';
import { parse } from 'graphql';
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginInlineTraceDisabled,
  ApolloServerPluginLandingPageDisabled,
  ApolloServerPluginSchemaReportingDisabled,
  ApolloServerPluginUsageReportingDisabled,
} from '@apollo/server/plugin/disabled';
import { fastifyApolloHandler } from '@as-integrations/fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GraphQLError } from 'graphql';
import type { GraphqlLimits, RuntimeConfig } from '../config/runtime.js';
import { graphqlErrorHandler, refuseOtherMethods } from '../http/graphql-refusals.js';
import { graphqlTracingPlugin } from '../ops/tracing.js';
import { edgeOptions, type EdgeOptions } from '../server/edge-options.js';
import { buildPlatformServer, type ListeningServer } from '../server/platform-server.js';
import { adminLogPlugin } from './admin-log-plugin.js';
import { serveChangeStream } from './change-stream.js';
import { asksForEventStream, subgraphSubscriptions } from './subgraph-subscriptions.js';
import type { RequestContext } from './context.js';
import { faultLoggingPlugin, formatServiceError } from './errors.js';
import { gatewayCredentialPlugin } from './gateway-credential.js';
import { apolloArmor, subgraphLimits } from './limits.js';
import { costAnnotations } from './cost.js';
import type { Subgraph } from './subgraph.js';
import { operationMetricsPlugin } from '../ops/graphql-metrics.js';

/** Apollo's reporting and its CDN-hosted landing page, all off: nothing leaves the machine. */
export const noPhoneHomePlugins = () => [ApolloServerPluginLandingPageDisabled(), ApolloServerPluginUsageReportingDisabled(), ApolloServerPluginSchemaReportingDisabled()];

/**
 * A subgraph's answers are never cacheable: no field or type of its schema carries a cache hint
 * (@cacheControl), so Apollo's cache-control plugin, on by default, could only ever answer
 * `Cache-Control: no-store` (which the gateway reads as no cache hint, gateway/cache-hint.ts) — after
 * a hook on every field of every answer (willResolveField: a policy object, a closure and a promise
 * callback per field), a good part of what a subgraph's query costs. That plugin is off in the
 * subgraphs and this says the same once per answer.
 */
export function uncacheableAnswersPlugin<Context extends BaseContext>(): ApolloServerPlugin<Context> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ response }) {
          response.http.headers.set('cache-control', 'no-store');
        },
      };
    },
  };
}

/**
 * A subscription sent as a plain HTTP request (a query's POST or GET): graphql-js 16 would run it as
 * far as execution and fail there as an internal error (a 500, logged as the server's fault). It is
 * the client's mistake, refused 400 SUBSCRIPTION_NOT_SUPPORTED before anything runs, with where
 * subscriptions are served (`servedAt`): the gateway's two protocols (gateway/live/), which a
 * subgraph's own port does not serve.
 */
export function subscriptionRefusalPlugin<Context extends BaseContext>(servedAt: string): ApolloServerPlugin<Context> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ operation }) {
          if (operation?.operation !== 'subscription') return;
          throw new GraphQLError(`A subscription is not answered as a plain HTTP request. ${servedAt}`, {
            extensions: { code: 'SUBSCRIPTION_NOT_SUPPORTED', http: { status: 400 } },
          });
        },
      };
    },
  };
}

/** Where a subscription is served, for a client that sent one as a plain HTTP request to the gateway. */
export const GATEWAY_SUBSCRIPTIONS =
  'Subscribe at /graphql over graphql-ws (a WebSocket, subprotocol graphql-transport-ws) or GraphQL over Server-Sent Events (this request with Accept: text/event-stream).';

/**
 * A gateway request of up to its body limit becomes subgraph requests that carry what other
 * subgraphs answered (entity representations), which may outgrow what the client sent: a subgraph
 * takes bodies up to this many times the gateway's limit, and no larger, so that one body sent to its
 * port cannot take the process's memory (a 36 MiB body ended a subgraph under its 192 MiB heap limit).
 */
export const SUBGRAPH_BODY_LIMIT_FACTOR = 4;

/**
 * The subgraph's edge options (lib/server/edge-options.ts), with the gateway's body limit: the
 * subgraph takes SUBGRAPH_BODY_LIMIT_FACTOR times it. Its metrics and shutdown state are the subgraph's own (Subgraph.operations).
 */
export interface SubgraphServerOptions extends Omit<EdgeOptions, 'operations'> {
  limits: GraphqlLimits;
  /** With it, mutations are taken only from the gateway (gateway-credential.ts). */
  gatewaySecret?: string;
}

/** A subgraph's server options as the platform's configuration sets them (`npm start`, `npm run subgraph`). */
export function subgraphServerOptions(config: Pick<RuntimeConfig, 'graphqlLimits' | 'bodyLimit' | 'requestTimeoutMs' | 'compressionMinBytes' | 'subgraphSecret'>): SubgraphServerOptions {
  // No CORS origins: a subgraph's port is the gateway's to call, never a browser page's.
  return {
    ...edgeOptions({ bodyLimit: config.bodyLimit, requestTimeoutMs: config.requestTimeoutMs, compressionMinBytes: config.compressionMinBytes }),
    limits: config.graphqlLimits,
    ...(config.subgraphSecret ? { gatewaySecret: config.subgraphSecret } : {}),
  };
}

/**
 * Serves a subgraph on the platform's server (lib/server/platform-server.ts), with the gateway's
 * connection rules (body limit, timeouts, refusals). It holds every operation to the gateway's limits itself
 * (depth, aliases, cost, tokens, directives: `subgraphLimits`), so that a client who finds a
 * subgraph's port meets the same refusals as at the gateway, and one heavy query sent there cannot
 * hold the database. With `gatewaySecret` it takes mutations only from the gateway.
 */
export async function serveSubgraph(subgraph: Subgraph, listen: { host: string; port: number }, options: SubgraphServerOptions): Promise<ListeningServer> {
  // Introspection stays on: the gateway composes through `_service`; suggestions are harmless then.
  const annotations = costAnnotations(parse(printSubgraphSchema(subgraph.schema)));
  const limits = subgraphLimits(options.limits);
  const armor = apolloArmor<RequestContext>(limits, true, annotations);
  const bodyLimit = options.bodyLimit * SUBGRAPH_BODY_LIMIT_FACTOR;
  const server = await buildPlatformServer(
    subgraph.name,
    { ...options, bodyLimit, operations: subgraph.operations },
    { readiness: subgraph.readiness, errorHandler: graphqlErrorHandler(`${subgraph.name} subgraph`, bodyLimit) },
  );
  const formatError = formatServiceError(subgraph.name);
  const apollo = new ApolloServer<RequestContext>({
    schema: subgraph.schema,
    plugins: [
      ...noPhoneHomePlugins(),
      ApolloServerPluginInlineTraceDisabled(),
      ApolloServerPluginCacheControlDisabled(),
      uncacheableAnswersPlugin<RequestContext>(),
      ...(options.gatewaySecret ? [gatewayCredentialPlugin<RequestContext>(options.gatewaySecret)] : []),
      adminLogPlugin(subgraph.adminLog, subgraph.refusals),
      faultLoggingPlugin<RequestContext>(formatError),
      operationMetricsPlugin(subgraph.metrics),
      ...armor.plugins,
      subscriptionRefusalPlugin<RequestContext>(
        "Subscriptions are served by the gateway's /graphql (graphql-ws, or GraphQL over Server-Sent Events), and by the subgraph that owns them over GraphQL over Server-Sent Events (this request with Accept: text/event-stream).",
      ),
      ...(server.tracer ? [graphqlTracingPlugin<RequestContext>(server.tracer)] : []),
    ],
    validationRules: armor.validationRules,
    parseOptions: armor.parseOptions,
    formatError,
    includeStacktraceInErrorResponses: false,
    // The process owns its signals (bin/lifecycle.ts) and stops every part in order.
    stopOnTerminationSignals: false,
    // The gateway introspects subgraphs through `_service`, which federation always serves.
    introspection: true,
    // The gateway sends the concurrent queries of a query plan step as one batch, which shares one
    // request context and so one set of DataLoaders (gateway/subgraph-batching.ts).
    allowBatchedHttpRequests: true,
  });
  await apollo.start();
  // Once the requests in flight are answered (the server's one shutdown path).
  server.app.addHook('onClose', () => apollo.stop());
  const context = async (request: FastifyRequest) => subgraph.context(request.headers.authorization, request.log);
  const answer = fastifyApolloHandler(apollo, { context });
  let serveEventStream: ((request: FastifyRequest, reply: FastifyReply) => Promise<void>) | undefined;
  if (subgraph.changes) {
    serveChangeStream(server.app, subgraph.changes, options.gatewaySecret);
    serveEventStream = subgraphSubscriptions(server.app, {
      schema: subgraph.schema,
      context,
      authenticator: subgraph.authenticator,
      onRevocation: subgraph.onRevocation,
      metrics: subgraph.metrics.live,
      validationRules: armor.validationRules,
      annotations,
      limits,
      ...(options.gatewaySecret ? { gatewaySecret: options.gatewaySecret } : {}),
      formatError,
    });
  }
  // Every path, as Apollo's standalone server answered before: a gateway may name the subgraph's URL with or without /graphql.
  server.app.route({
    method: ['GET', 'POST'],
    url: '*',
    exposeHeadRoute: false,
    handler(request, reply) {
      if (serveEventStream && asksForEventStream(request)) return serveEventStream(request, reply);
      return answer.call(this, request as Parameters<typeof answer>[0], reply as Parameters<typeof answer>[1]);
    },
  });
  refuseOtherMethods(server.app, '*');
  // The address bound, as Apollo's standalone server named it (the IPv6 any-address as localhost).
  const { address, port } = await server.listen(listen);
  const host = address === '' || address === '::' ? 'localhost' : address;
  return { url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/`, stop: server.stop };
}
