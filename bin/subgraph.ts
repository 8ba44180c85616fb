/** `npm run subgraph -- <service>`: one service's subgraph on its own, migrations applied first. */
import { serviceDatabaseUrl } from '../lib/config/database.js';
import { publicUrlsOfConfig } from '../lib/config/public-urls.js';
import { isServiceName, SERVICES } from '../lib/config/services.js';
import { kekFile, readKekFile } from '../lib/keys/kek.js';
import { gatewayClient } from '../lib/graphql/gateway-client.js';
import { countedHeaders } from '../lib/server/rate-limits.js';
import type { Subgraph } from '../lib/graphql/subgraph.js';
import { serveSubgraph, subgraphServerOptions } from '../lib/graphql/subgraph-server.js';
import { deployMigrations } from '../lib/db/migrate.js';
import { SUBGRAPHS } from '../subgraphs/index.js';
import { openOwnIdentity, openPart, runPart } from './lifecycle.js';

const service = process.argv[2] ?? '';
if (!isServiceName(service)) {
  console.error(`usage: npm run subgraph -- <${SERVICES.join('|')}>`);
  process.exit(2);
}
let databaseUrl: string | undefined;
const running = await runPart({
  databaseUrl: () => databaseUrl,
  async start(config) {
    const url = serviceDatabaseUrl(service);
    databaseUrl = url;
    await deployMigrations(service, url);
    const { tokens, identity } = await openOwnIdentity(serviceDatabaseUrl('identity'));
    const gatewayUrl = process.env.GATEWAY_URL ?? `http://${config.host}:${config.gatewayPort}/graphql`;
    const kek = await readKekFile(kekFile());
    return openPart(config, service, async ({ operations }) => {
      const subgraph = await SUBGRAPHS[service]({
        databaseUrl: url,
        tokens,
        identity,
        kek,
        gateway: gatewayClient(() => gatewayUrl, countedHeaders(tokens)),
        operations,
        publicUrls: publicUrlsOfConfig(config),
        limits: config.graphqlLimits,
      });
      const server = await serveSubgraph(subgraph, { host: config.host, port: config.subgraphPorts[service] }, subgraphServerOptions(config));
      return {
        subgraph,
        url: server.url,
        async stop() {
          await server.stop();
          await subgraph.close();
          await identity.close();
        },
      };
    });
  },
  lines: ({ url, metrics }) => [`${service} subgraph: ${url}`, `metrics: ${metrics.url}`],
});
void whenGraphReady(running.subgraph);

/**
 * Run as separate processes, the services and the gateway start in any order: tries every second until
 * the graph answers (a try is one small request), saying why it waits when the reason changes.
 */
async function whenGraphReady(subgraph: Subgraph): Promise<void> {
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
}
