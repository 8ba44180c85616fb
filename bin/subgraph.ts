/** `npm run subgraph -- <service>`: one service's subgraph on its own, migrations applied first. */
import { loadAccessTokens } from '../lib/auth/tokens.js';
import { serviceDatabaseUrl } from '../lib/config/database.js';
import { publicUrlsOfConfig } from '../lib/config/public-urls.js';
import { isServiceName, SERVICES } from '../lib/config/services.js';
import { kekFile, readKekFile } from '../lib/keys/kek.js';
import { gatewayClient } from '../lib/graphql/gateway-client.js';
import { serveSubgraph, subgraphServerOptions } from '../lib/graphql/subgraph-server.js';
import { deployMigrations } from '../lib/db/migrate.js';
import { SUBGRAPHS } from '../subgraphs/index.js';
import { configOrExit, endOnStartFailure, endOnKeyCustodyError, stopOnSignal } from './lifecycle.js';
import { DEFAULT_METRICS_PORTS, serveMetrics } from '../lib/ops/metrics-listener.js';
import { Operations } from '../lib/ops/operations.js';

const service = process.argv[2] ?? '';
if (!isServiceName(service)) {
  console.error(`usage: npm run subgraph -- <${SERVICES.join('|')}>`);
  process.exit(2);
}
const config = configOrExit();
const databaseUrl = serviceDatabaseUrl(service);
await deployMigrations(service, databaseUrl);
const gatewayUrl = process.env.GATEWAY_URL ?? `http://${config.host}:${config.gatewayPort}/graphql`;
const kek = await Promise.resolve()
  .then(() => readKekFile(kekFile()))
  .catch(endOnKeyCustodyError);
const operations = new Operations({ shutdownTimeoutMs: config.shutdown.timeoutMs, metrics: config.metrics.enabled });
const subgraph = await SUBGRAPHS[service]({
  databaseUrl,
  tokens: loadAccessTokens(),
  kek,
  gateway: gatewayClient(() => gatewayUrl),
  operations,
  publicUrls: publicUrlsOfConfig(config),
  limits: config.graphqlLimits,
}).catch(endOnKeyCustodyError);
const server = await serveSubgraph(subgraph, { host: config.host, port: config.subgraphPorts[service] }, subgraphServerOptions(config));
const metrics = await serveMetrics(operations.metrics, { host: config.metrics.host, port: config.metrics.port ?? DEFAULT_METRICS_PORTS[service] }).catch(endOnStartFailure(undefined));
console.log(`${service} subgraph: ${server.url}\nmetrics: ${metrics.url}`);
// Run as separate processes, the services and the gateway start in any order: try every second until
// the graph answers (a try is one small request), saying why it waits when the reason changes.
void (async function whenGraphReady() {
  let said = '';
  for (;;) {
    try {
      await subgraph.graphReady();
      return;
    } catch (error) {
      const reason = (error as Error).message;
      if (reason !== said) console.error(`${service}: waiting for the gateway and the other services (${reason})`);
      said = reason;
      await new Promise((resolve) => setTimeout(resolve, 1000).unref());
    }
  }
})();
stopOnSignal(
  async () => {
    await server.stop();
    await subgraph.close();
    await metrics.stop();
  },
  operations,
  config.shutdown,
);
