/**
 * The REST facade: each service's route table becomes Fastify routes under the service's prefix
 * (service-mount.ts), on one server per port (port-server.ts), whose schemas validate requests
 * (validation.ts) and make the OpenAPI document (@fastify/swagger, openapi.ts). A route sends its
 * GraphQL operation to the gateway (gateway-calls.ts) and maps the answer back (route-answer.ts);
 * every refusal, from the framework or a service, is an RFC 9457 problem (problems.ts).
 */
import type { PlatformIdentity } from '../lib/auth/authentication.js';
import type { AccessTokens } from '../lib/auth/tokens.js';
import type { OidcConfig } from '../lib/config/oidc.js';
import type { ServiceMount } from '../lib/config/runtime.js';
import type { ServiceName } from '../lib/config/services.js';
import { Operations, peerReady } from '../lib/ops/operations.js';
import { serverTracer } from '../lib/ops/tracing.js';
import type { EdgeOptions } from '../lib/server/edge-options.js';
import type { ListeningServer, PlatformServer } from '../lib/server/platform-server.js';
import { countedHeaders } from '../lib/server/rate-limits.js';
import { refusalReporter } from './access.js';
import { gatewayCaller, gatewaySubscriber } from './gateway-calls.js';
import { facadePages } from './pages.js';
import { servePort } from './port-server.js';
import { problemSender } from './problems.js';
import { facadeUrls } from './public-urls.js';
import type { ServiceRoutes } from './route-table.js';

export interface FacadeOptions extends EdgeOptions {
  host: string;
  /** Where each service is served: a port, and a path prefix on it (`/trust`, or `` for the whole port). */
  mounts: readonly ServiceMount[];
  /** Configured public base URLs (RuntimeConfig.publicUrls); a service without one is named where the facade serves it (public-urls.ts). */
  publicUrls?: Partial<Record<ServiceName, string>>;
  tables: Record<ServiceName, ServiceRoutes>;
  gatewayUrl: string;
  /** The configured tokens; the refusal reports' key is derived from them (lib/audit/refusal-report.ts). */
  tokens: AccessTokens;
  /** The OpenID provider whose access tokens are taken (lib/config/oidc.ts); undefined: none. */
  oidc?: OidcConfig;
  /** The identity store and the authenticators every server shares (lib/auth/authentication.ts); without it only the configured tokens are recognised. */
  identity?: PlatformIdentity;
}

export interface RunningFacade extends ListeningServer {
  /** Base URL of each service as mounted. */
  baseUrls: Record<ServiceName, string>;
}

export async function startFacade(options: FacadeOptions): Promise<RunningFacade> {
  // What the facade asks the gateway for a request is counted once, here.
  const callGateway = gatewayCaller(options.gatewayUrl, serverTracer('facade'), countedHeaders(options.tokens));
  const refusals = refusalReporter(options.tokens, callGateway);
  /** Configured port → bound port (they differ when 0 asks for any free port). */
  const ports = new Map<number, number>();

  /** The public base URL of every service, the same for every request whatever its Host (public-urls.ts). */
  const urls = facadeUrls(options, (port) => ports.get(port) ?? port);
  const publicUrls = () => urls.services();
  const sendProblem = problemSender((request) => urls.problemOrigin(request.socket.localPort, request.url.split('?')[0]!));

  const authenticator = options.identity?.authenticator ?? options.tokens;
  const facade = {
    // One process state for every port, the facade's own when it is started without one.
    edge: { ...options, operations: options.operations ?? new Operations(), authenticator },
    bodyLimit: options.bodyLimit,
    authenticator,
    ...(options.oidc && { oidc: options.oidc }),
    tables: options.tables,
    readiness: { gateway: peerReady(new URL('/readyz', options.gatewayUrl).href, 'the gateway') },
    pages: facadePages({ gatewayUrl: options.gatewayUrl, mounts: options.mounts, publicUrls, sendProblem }),
    callGateway,
    subscribeGateway: gatewaySubscriber(options.gatewayUrl),
    refusals,
    flushRefusals: (service: ServiceName) => refusals.flush(service),
    publicUrls,
    sendProblem,
  };
  const byPort = new Map<number, ServiceMount[]>();
  for (const mount of options.mounts) byPort.set(mount.port, [...(byPort.get(mount.port) ?? []), mount]);
  const servers: PlatformServer[] = [];
  for (const [port, mounts] of byPort) {
    const server = await servePort(mounts, facade);
    servers.push(server);
    ports.set(port, (await server.listen({ port, host: options.host })).port);
  }
  const baseUrls = Object.fromEntries(options.mounts.map((mount) => [mount.service, `http://${options.host}:${ports.get(mount.port)}${mount.prefix}`])) as Record<ServiceName, string>;
  return {
    url: `http://${options.host}:${ports.get(options.mounts[0]!.port)}`,
    baseUrls,
    async stop() {
      await Promise.all(servers.map((server) => server.stop()));
      await refusals.flush();
    },
  };
}
