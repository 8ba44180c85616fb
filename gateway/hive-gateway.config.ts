/**
 * Hive Gateway serving the supergraph file (`npm start` writes it) as the built-in gateway serves
 * it: on loopback unless HOST says otherwise, with the same limits from the same settings
 * (GRAPHQL_MAX_*, GRAPHQL_INTROSPECTION), the caller's Authorization passed to every subgraph, no
 * GraphiQL or landing page from a CDN, and nothing reported anywhere (no Hive token is given).
 *
 *   hive-gateway supergraph .data/supergraph.graphql --config-path gateway/hive-gateway.config.ts
 *
 * Unlike ours it has no request body limit: put it behind a proxy that has one (BODY_LIMIT_BYTES,
 * 1 MiB). test/gateway/hive-gateway.test.ts runs that command.
 */
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { loadRuntimeConfig } from '../lib/config/runtime.js';
import { armorLimits } from '../lib/graphql/limits.js';

const config = loadRuntimeConfig(process.env);

// Plain object rather than defineConfig: @graphql-hive/gateway's types would bring the DOM's
// fetch and stream types into the project's type check.
export const gatewayConfig = {
  host: config.host,
  port: config.gatewayPort,
  graphiql: false,
  landingPage: false,
  ...(config.introspection ? {} : { disableIntrospection: {} }),
  propagateHeaders: {
    fromClientToSubgraphs: ({ request }: { request: Request }) => {
      const authorization = request.headers.get('authorization');
      return authorization ? { authorization } : {};
    },
  },
  plugins: () => [EnvelopArmorPlugin(armorLimits(config.graphqlLimits, config.introspection))],
};
