/**
 * `npm run gateway`: the gateway alone, over subgraphs at `<SERVICE>_SUBGRAPH_URL` or their
 * configured ports. A URL list (comma-separated) names a subgraph's replicas: the schema is read
 * from the first, requests go to each in turn.
 */
import { join } from 'node:path';
import { loadAccessTokens } from '../lib/auth/tokens.js';
import { SERVICES } from '../lib/config/services.js';
import { startGateway } from '../gateway/index.js';
import { openPart, runPart } from './lifecycle.js';

await runPart({
  start: (config) =>
    openPart(config, 'gateway', ({ edge }) =>
      startGateway({
        ...edge,
        tokens: loadAccessTokens(),
        host: config.host,
        port: config.gatewayPort,
        subgraphs: SERVICES.map((name) => {
          const replicas = (process.env[`${name.toUpperCase()}_SUBGRAPH_URL`] ?? `http://${config.host}:${config.subgraphPorts[name]}/`)
            .split(',')
            .map((url) => url.trim())
            .filter(Boolean);
          return { name, url: replicas[0]!, replicas, timeoutMs: config.subgraphTimeoutsMs[name] };
        }),
        introspection: config.introspection,
        limits: config.graphqlLimits,
        ...(config.subgraphSecret ? { subgraphSecret: config.subgraphSecret } : {}),
        trustedDocuments: config.trustedDocuments,
        supergraphFile: join(config.dataDir, 'supergraph.graphql'),
        subgraphCircuitOpenMs: config.subgraphCircuitOpenMs,
        supergraphPollIntervalMs: config.supergraphPollIntervalMs,
      }),
    ),
  lines: (gateway) => [`gateway: ${gateway.graphqlUrl}`, `GraphiQL: ${gateway.graphiqlUrl}`, `metrics: ${gateway.metrics.url}`],
});
