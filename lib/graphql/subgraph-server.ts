import { ApolloServer } from '@apollo/server';
import {
  ApolloServerPluginInlineTraceDisabled,
  ApolloServerPluginLandingPageDisabled,
  ApolloServerPluginSchemaReportingDisabled,
  ApolloServerPluginUsageReportingDisabled,
} from '@apollo/server/plugin/disabled';
import { startStandaloneServer } from '@apollo/server/standalone';
import type { GraphqlLimits } from '../config/runtime.js';
import { adminLogPlugin } from './admin-log-plugin.js';
import type { RequestContext } from './context.js';
import { formatServiceError } from './errors.js';
import { gatewayCredentialPlugin } from './gateway-credential.js';
import { apolloArmor, subgraphLimits } from './limits.js';
import type { Subgraph } from './subgraph.js';

/** Apollo's reporting and its CDN-hosted landing page, all off: nothing leaves the machine. */
export const noPhoneHomePlugins = () => [ApolloServerPluginLandingPageDisabled(), ApolloServerPluginUsageReportingDisabled(), ApolloServerPluginSchemaReportingDisabled()];

export interface ListeningServer {
  url: string;
  stop(): Promise<void>;
}

/**
 * Serves a subgraph. It holds every operation to the gateway's limits itself (depth, aliases, cost,
 * tokens, directives: `subgraphLimits`), so that a client who finds a subgraph's port meets the same
 * refusals as at the gateway, and one heavy query sent there cannot hold the database. With
 * `gatewaySecret` it takes mutations only from the gateway (gateway-credential.ts).
 */
export async function serveSubgraph(subgraph: Subgraph, listen: { host: string; port: number }, limits: GraphqlLimits, gatewaySecret?: string): Promise<ListeningServer> {
  // Introspection stays on: the gateway composes through `_service`; suggestions are harmless then.
  const armor = apolloArmor<RequestContext>(subgraphLimits(limits), true);
  const server = new ApolloServer<RequestContext>({
    schema: subgraph.schema,
    plugins: [
      ...noPhoneHomePlugins(),
      ApolloServerPluginInlineTraceDisabled(),
      ...(gatewaySecret ? [gatewayCredentialPlugin<RequestContext>(gatewaySecret)] : []),
      adminLogPlugin(subgraph.adminLog),
      ...armor.plugins,
    ],
    validationRules: armor.validationRules,
    parseOptions: armor.parseOptions,
    formatError: formatServiceError(subgraph.name),
    includeStacktraceInErrorResponses: false,
    // The process owns its signals (bin/lifecycle.ts) and stops every part in order.
    stopOnTerminationSignals: false,
    // The gateway introspects subgraphs through `_service`, which federation always serves.
    introspection: true,
    // The gateway sends the concurrent queries of a query plan step as one batch, which shares one
    // request context and so one set of DataLoaders (gateway/subgraph-batching.ts).
    allowBatchedHttpRequests: true,
  });
  const { url } = await startStandaloneServer(server, {
    listen,
    context: async ({ req }) => subgraph.context(req.headers.authorization),
  });
  return { url, stop: () => server.stop() };
}
