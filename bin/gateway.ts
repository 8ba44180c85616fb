/**
 * `npm run gateway`: the gateway alone, over subgraphs at `<SERVICE>_SUBGRAPH_URL` or their
 * configured ports. A URL list (comma-separated) names a subgraph's replicas: the schema is read
 * from the first, requests go to each in turn. It recognises the identity store's tokens in the
 * platform's database (IDENTITY_DATABASE_URL or DATABASE_URL), which subscriptions are checked by as
 * their connections open.
 */
import { join } from 'node:path';
import { serviceDatabaseUrl } from '../lib/config/database.js';
import { SERVICES } from '../lib/config/services.js';
import { startGateway } from '../gateway/index.js';
import { openOwnIdentity, openPart, runPart } from './lifecycle.js';

let identityUrl: string | undefined;
await runPart({
  databaseUrl: () => identityUrl,
  async start(config) {
    identityUrl = serviceDatabaseUrl('identity');
    const { tokens, identity } = await openOwnIdentity(identityUrl);
    return openPart(config, 'gateway', async ({ edge }) => {
      const gateway = await startGateway({
        ...edge,
        tokens,
        identity,
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
      });
      const stopGateway = gateway.stop;
      // Assigned, not spread: the gateway's supergraphSdl is a getter.
      return Object.assign(gateway, {
        async stop() {
          await stopGateway();
          await identity.close();
        },
      });
    });
  },
  lines: (gateway) => [`gateway: ${gateway.graphqlUrl}`, `GraphiQL: ${gateway.graphiqlUrl}`, `metrics: ${gateway.metrics.url}`],
});
