/**
 * `npm run gateway`: the gateway alone, over subgraphs at `<SERVICE>_SUBGRAPH_URL` or their
 * configured ports. A URL list (comma-separated) names a subgraph's replicas: the schema is read
 * from the first, requests go to each in turn.
 */
import { join } from 'node:path';
import { SERVICES } from '../lib/config/services.js';
import { startGateway } from '../gateway/index.js';
import { configOrExit, endOnStartFailure, stopOnSignal } from './lifecycle.js';
import { DEFAULT_METRICS_PORTS, serveMetrics } from '../lib/ops/metrics-listener.js';
import { Operations } from '../lib/ops/operations.js';

const config = configOrExit();
const operations = new Operations({ shutdownTimeoutMs: config.shutdown.timeoutMs, metrics: config.metrics.enabled });
const gateway = await startGateway({
  host: config.host,
  port: config.gatewayPort,
  subgraphs: SERVICES.map((name) => {
    const replicas = (process.env[`${name.toUpperCase()}_SUBGRAPH_URL`] ?? `http://${config.host}:${config.subgraphPorts[name]}/`)
      .split(',')
      .map((url) => url.trim())
      .filter(Boolean);
    return { name, url: replicas[0]!, replicas };
  }),
  introspection: config.introspection,
  bodyLimit: config.bodyLimit,
  requestTimeoutMs: config.requestTimeoutMs,
  limits: config.graphqlLimits,
  ...(config.subgraphSecret ? { subgraphSecret: config.subgraphSecret } : {}),
  supergraphFile: join(config.dataDir, 'supergraph.graphql'),
  operations,
});
const metrics = await serveMetrics(operations.metrics, { host: config.metrics.host, port: config.metrics.port ?? DEFAULT_METRICS_PORTS.gateway }).catch(endOnStartFailure(undefined));
console.log(`gateway: ${gateway.graphqlUrl}\nGraphiQL: ${gateway.graphiqlUrl}\nmetrics: ${metrics.url}`);
stopOnSignal(
  async () => {
    await gateway.stop();
    await metrics.stop();
  },
  operations,
  config.shutdown,
);
