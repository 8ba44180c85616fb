/** `npm run facade`: the REST facade alone, talking to the gateway at `GATEWAY_URL`. */
import { loadAccessTokens } from '../lib/auth/tokens.js';
import { loadOidcConfig } from '../lib/config/oidc.js';
import { SERVICES } from '../lib/config/services.js';
import { ROUTE_TABLES } from '../rest-facade/routes/index.js';
import { startFacade } from '../rest-facade/server.js';
import { openPart, runPart } from './lifecycle.js';

await runPart({
  start: async (config) => {
    const oidc = loadOidcConfig();
    return openPart(config, 'facade', ({ edge }) =>
      startFacade({
        ...edge,
        host: config.host,
        mounts: config.mounts,
        publicUrls: config.publicUrls,
        tables: ROUTE_TABLES,
        gatewayUrl: process.env.GATEWAY_URL ?? `http://${config.host}:${config.gatewayPort}/graphql`,
        tokens: loadAccessTokens(),
        ...(oidc && { oidc }),
      }),
    );
  },
  lines: (facade) => [...SERVICES.map((service) => `${service}: ${facade.baseUrls[service]}`), `metrics: ${facade.metrics.url}`],
});
