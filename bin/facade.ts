/** `npm run facade`: the REST facade alone, talking to the gateway at `GATEWAY_URL`. */
import { loadAccessTokens } from '../lib/auth/tokens.js';
import { SERVICES } from '../lib/config/services.js';
import { ROUTE_TABLES } from '../rest-facade/routes/index.js';
import { startFacade } from '../rest-facade/server.js';
import { configOrExit, stopOnSignal } from './lifecycle.js';

const config = configOrExit();
const facade = await startFacade({
  host: config.host,
  mounts: config.mounts,
  tables: ROUTE_TABLES,
  gatewayUrl: process.env.GATEWAY_URL ?? `http://${config.host}:${config.gatewayPort}/graphql`,
  tokens: loadAccessTokens(),
  bodyLimit: config.bodyLimit,
  requestTimeoutMs: config.requestTimeoutMs,
});
console.log(SERVICES.map((service) => `${service}: ${facade.baseUrls[service]}`).join('\n'));
stopOnSignal(facade.stop);
