/** `npm run facade`: the REST facade alone, talking to the gateway at `GATEWAY_URL`. */
import { loadAccessTokens } from '../lib/auth/tokens.js';
import { SERVICES } from '../lib/config/services.js';
import { ROUTE_TABLES } from '../rest-facade/routes/index.js';
import { startFacade } from '../rest-facade/server.js';
import { configOrExit, endOnStartFailure, stopOnSignal } from './lifecycle.js';
import { DEFAULT_METRICS_PORTS, serveMetrics } from '../lib/ops/metrics-listener.js';
import { Operations } from '../lib/ops/operations.js';

const config = configOrExit();
const operations = new Operations({ shutdownTimeoutMs: config.shutdown.timeoutMs, metrics: config.metrics.enabled });
const facade = await startFacade({
  host: config.host,
  mounts: config.mounts,
  publicUrls: config.publicUrls,
  tables: ROUTE_TABLES,
  gatewayUrl: process.env.GATEWAY_URL ?? `http://${config.host}:${config.gatewayPort}/graphql`,
  tokens: loadAccessTokens(),
  bodyLimit: config.bodyLimit,
  requestTimeoutMs: config.requestTimeoutMs,
  operations,
});
const metrics = await serveMetrics(operations.metrics, { host: config.metrics.host, port: config.metrics.port ?? DEFAULT_METRICS_PORTS.facade }).catch(endOnStartFailure(undefined));
console.log([...SERVICES.map((service) => `${service}: ${facade.baseUrls[service]}`), `metrics: ${metrics.url}`].join('\n'));
stopOnSignal(
  async () => {
    await facade.stop();
    await metrics.stop();
  },
  operations,
  config.shutdown,
);
