/**
 * `npm run facade`: the REST facade alone, talking to the gateway at `GATEWAY_URL`; it recognises
 * the identity store's tokens in the platform's database (IDENTITY_DATABASE_URL or DATABASE_URL).
 */
import { serviceDatabaseUrl } from '../lib/config/database.js';
import { SERVICES } from '../lib/config/services.js';
import { ROUTE_TABLES } from '../rest-facade/routes/index.js';
import { startFacade } from '../rest-facade/server.js';
import { openOwnIdentity, openPart, runPart } from './lifecycle.js';

let identityUrl: string | undefined;
await runPart({
  databaseUrl: () => identityUrl,
  async start(config) {
    identityUrl = serviceDatabaseUrl('identity');
    const { tokens, oidc, identity } = await openOwnIdentity(identityUrl);
    return openPart(config, 'facade', async ({ edge }) => {
      const facade = await startFacade({
        ...edge,
        host: config.host,
        mounts: config.mounts,
        publicUrls: config.publicUrls,
        tables: ROUTE_TABLES,
        gatewayUrl: process.env.GATEWAY_URL ?? `http://${config.host}:${config.gatewayPort}/graphql`,
        tokens,
        identity,
        ...(oidc && { oidc }),
      });
      return {
        ...facade,
        async stop() {
          await facade.stop();
          await identity.close();
        },
      };
    });
  },
  lines: (facade) => [...SERVICES.map((service) => `${service}: ${facade.baseUrls[service]}`), `metrics: ${facade.metrics.url}`],
});
