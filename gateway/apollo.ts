/**
 * The gateway's GraphQL: @apollo/gateway planning each operation over the subgraphs' data sources
 * (data-source.ts, subgraph-transport.ts), run by Apollo Server with the platform's plugins and the
 * limits every operation is held to.
 */
import { ApolloGateway, type SupergraphSdlHook } from '@apollo/gateway';
import { ApolloServer } from '@apollo/server';
import type { Tracer } from '@opentelemetry/api';
import type { GraphQLSchema, ValidationRule } from 'graphql';
import type { GraphqlLimits } from '../lib/config/runtime.js';
import type { CostAnnotations } from '../lib/graphql/cost.js';
import { faultLoggingPlugin } from '../lib/graphql/errors.js';
import { apolloArmor } from '../lib/graphql/limits.js';
import { GATEWAY_SUBSCRIPTIONS, noPhoneHomePlugins, subscriptionRefusalPlugin } from '../lib/graphql/subgraph-server.js';
import { jsonPoster } from '../lib/http/post-json.js';
import { operationMetricsPlugin } from '../lib/ops/graphql-metrics.js';
import type { ServerMetrics } from '../lib/ops/metrics.js';
import { graphqlTracingPlugin } from '../lib/ops/tracing.js';
import { SubgraphDataSource, type GatewayContext } from './data-source.js';
import { formatGatewayError, unknownOperationPlugin } from './refusals.js';
import { batchingPost } from './subgraph-batching.js';
import type { SubgraphInstances } from './subgraph-instances.js';
import { sharingPost, timedSubgraphPost } from './subgraph-transport.js';

// @apollo/gateway reports usage to Apollo unless this is set before it is constructed.
process.env.APOLLO_TELEMETRY_DISABLED = '1';

export interface GatewayGraphqlOptions {
  /** The supergraph at start, and its later versions through `update` (supergraph-updates.ts). */
  supergraph: { supergraphSdl: string; hook: SupergraphSdlHook };
  /** Each subgraph's instances, by name: where its requests go, with deadlines and breakers. */
  subgraphs: ReadonlyMap<string, SubgraphInstances>;
  /** The supergraph's @cost and @listSize, which the cost limit reads at every request (kept up to date by the caller). */
  costs: CostAnnotations;
  /** Whether clients may introspect the composed schema (GraphiQL needs it). */
  introspection: boolean;
  limits: GraphqlLimits;
  /** Sent to every subgraph as the gateway's credential (SUBGRAPH_SECRET), when configured. */
  subgraphSecret?: string;
  /** The gateway server's; its tracer is made before ApolloGateway, whose spans go to the gateway's provider (lib/ops/tracing.ts). */
  server: { tracer: Tracer | undefined; metrics: ServerMetrics };
}

/** Apollo Server over the composed supergraph, started, and what the gateway's subscriptions are checked by (gateway/live/). */
export interface GatewayGraphql {
  apollo: ApolloServer<GatewayContext>;
  /** The API schema @apollo/gateway serves, built from the supergraph. */
  schema(): GraphQLSchema;
  annotations: CostAnnotations;
  validationRules: readonly ValidationRule[];
  formatError: ReturnType<typeof formatGatewayError>;
}

export async function startGatewayGraphql(options: GatewayGraphqlOptions): Promise<GatewayGraphql> {
  const { tracer, metrics } = options.server;
  // One source per subgraph, kept across supergraph updates (@apollo/gateway asks for it again then).
  const sources = new Map<string, SubgraphDataSource>();
  const gateway = new ApolloGateway({
    supergraphSdl: options.supergraph.hook,
    buildService: ({ name, url }) => {
      let source = sources.get(name);
      if (!source) {
        const instances = options.subgraphs.get(name);
        if (!instances) throw new Error(`the supergraph names a subgraph ${name} the gateway was not given`);
        // Deadlines and breakers per HTTP request (below batching); the instances in turn per fetch.
        const post = instances.spread(sharingPost(batchingPost(instances.guarded(jsonPoster({ tracer, timeoutMs: instances.timeoutMs })))));
        // With METRICS=off the subgraph fetches are not timed at all.
        source = new SubgraphDataSource(url!, metrics.enabled ? timedSubgraphPost(metrics, name, post) : post, options.subgraphSecret);
        sources.set(name, source);
      }
      return source;
    },
  });
  let apiSchema: GraphQLSchema | undefined;
  gateway.onSchemaLoadOrUpdate(({ apiSchema: loaded }) => {
    apiSchema = loaded;
  });
  const armor = apolloArmor<GatewayContext>(options.limits, options.introspection, options.costs, (type, estimated, actual) => metrics.graphqlOperationCost(type, estimated, actual));
  const formatError = formatGatewayError(options.limits);
  const apollo = new ApolloServer<GatewayContext>({
    gateway,
    plugins: [
      ...noPhoneHomePlugins(),
      operationMetricsPlugin(metrics),
      faultLoggingPlugin<GatewayContext>(formatError),
      ...armor.plugins,
      unknownOperationPlugin,
      subscriptionRefusalPlugin<GatewayContext>(GATEWAY_SUBSCRIPTIONS),
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
  return { apollo, schema: () => apiSchema!, annotations: options.costs, validationRules: armor.validationRules, formatError };
}
