/**
 * The gateway's GraphQL: @apollo/gateway planning each operation over the subgraphs' data sources
 * (data-source.ts, subgraph-transport.ts), run by Apollo Server with the platform's plugins and the
 * limits every operation is held to.
 */
import { ApolloGateway } from '@apollo/gateway';
import { ApolloServer } from '@apollo/server';
import type { Tracer } from '@opentelemetry/api';
import { parse } from 'graphql';
import type { GraphqlLimits } from '../lib/config/runtime.js';
import { costAnnotations } from '../lib/graphql/cost.js';
import { faultLoggingPlugin } from '../lib/graphql/errors.js';
import { apolloArmor } from '../lib/graphql/limits.js';
import { noPhoneHomePlugins, subscriptionRefusalPlugin } from '../lib/graphql/subgraph-server.js';
import { jsonPoster } from '../lib/http/post-json.js';
import { operationMetricsPlugin } from '../lib/ops/graphql-metrics.js';
import type { ServerMetrics } from '../lib/ops/metrics.js';
import { graphqlTracingPlugin } from '../lib/ops/tracing.js';
import type { SubgraphEndpoint } from './composition.js';
import { SubgraphDataSource, type GatewayContext } from './data-source.js';
import { formatGatewayError, unknownOperationPlugin } from './refusals.js';
import { batchingPost } from './subgraph-batching.js';
import { roundRobin, sharingPost, timedSubgraphPost } from './subgraph-transport.js';

// @apollo/gateway reports usage to Apollo unless this is set before it is constructed.
process.env.APOLLO_TELEMETRY_DISABLED = '1';

export interface GatewayGraphqlOptions {
  supergraphSdl: string;
  subgraphs: readonly SubgraphEndpoint[];
  /** Whether clients may introspect the composed schema (GraphiQL needs it). */
  introspection: boolean;
  limits: GraphqlLimits;
  /** Sent to every subgraph as the gateway's credential (SUBGRAPH_SECRET), when configured. */
  subgraphSecret?: string;
  /** The gateway server's; its tracer is made before ApolloGateway, whose spans go to the gateway's provider (lib/ops/tracing.ts). */
  server: { tracer: Tracer | undefined; metrics: ServerMetrics };
}

/** Apollo Server over the composed supergraph, started. */
export async function startGatewayGraphql(options: GatewayGraphqlOptions): Promise<ApolloServer<GatewayContext>> {
  const { tracer, metrics } = options.server;
  const subgraphPost = sharingPost(batchingPost(jsonPoster({ tracer })));
  const gateway = new ApolloGateway({
    supergraphSdl: options.supergraphSdl,
    buildService: ({ name, url }) => {
      const replicas = options.subgraphs.find((subgraph) => subgraph.name === name)?.replicas ?? [];
      const post = replicas.length > 1 ? roundRobin(replicas, subgraphPost) : subgraphPost;
      // With METRICS=off the subgraph fetches are not timed at all.
      return new SubgraphDataSource(url!, metrics.enabled ? timedSubgraphPost(metrics, name, post) : post, options.subgraphSecret);
    },
  });
  const armor = apolloArmor<GatewayContext>(options.limits, options.introspection, costAnnotations(parse(options.supergraphSdl)), (type, estimated, actual) =>
    metrics.graphqlOperationCost(type, estimated, actual),
  );
  const formatError = formatGatewayError(options.limits);
  const apollo = new ApolloServer<GatewayContext>({
    gateway,
    plugins: [
      ...noPhoneHomePlugins(),
      operationMetricsPlugin(metrics),
      faultLoggingPlugin<GatewayContext>(formatError),
      ...armor.plugins,
      unknownOperationPlugin,
      subscriptionRefusalPlugin<GatewayContext>(),
      ...(tracer ? [graphqlTracingPlugin<GatewayContext>(tracer)] : []),
    ],
    parseOptions: armor.parseOptions,
    validationRules: armor.validationRules,
    allowBatchedHttpRequests: false,
    // Apollo's CSRF prevention refuses a GET without a preflight header. It guards cookie sessions;
    // here every credential is a bearer token a browser never attaches by itself, and GET runs
    // queries only, so plain GETs (persisted queries, HTTP caches, the spec's URL-encoded form) are served.
    csrfPrevention: false,
    formatError,
    includeStacktraceInErrorResponses: false,
    // The process owns its signals (bin/lifecycle.ts) and stops every part in order.
    stopOnTerminationSignals: false,
    introspection: options.introspection,
  });
  await apollo.start();
  return apollo;
}
