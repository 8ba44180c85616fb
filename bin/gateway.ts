/** `npm run gateway`: the gateway alone, over subgraphs at `<SERVICE>_SUBGRAPH_URL` or their configured ports. */
import { join } from 'node:path';
import { SERVICES } from '../lib/config/services.js';
import { startGateway } from '../gateway/index.js';
import { configOrExit, stopOnSignal } from './lifecycle.js';

const config = configOrExit();
const gateway = await startGateway({
  host: config.host,
  port: config.gatewayPort,
  subgraphs: SERVICES.map((name) => ({ name, url: process.env[`${name.toUpperCase()}_SUBGRAPH_URL`] ?? `http://${config.host}:${config.subgraphPorts[name]}/` })),
  introspection: config.introspection,
  bodyLimit: config.bodyLimit,
  limits: config.graphqlLimits,
  ...(config.subgraphSecret ? { subgraphSecret: config.subgraphSecret } : {}),
  supergraphFile: join(config.dataDir, 'supergraph.graphql'),
});
console.log(`gateway: ${gateway.graphqlUrl}\nGraphiQL: ${gateway.graphiqlUrl}`);
stopOnSignal(gateway.stop);
