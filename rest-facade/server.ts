/**
 * The REST facade: each service's route table becomes Fastify routes under the service's prefix
 * (service-mount.ts), on one server per port (port-server.ts), whose schemas validate requests
 * (validation.ts) and make the OpenAPI document (@fastify/swagger, openapi.ts). A route sends its
 * GraphQL operation to the gateway (gateway-calls.ts) and maps the answer back (route-answer.ts);
 * every refusal, from the framework or a service, is an RFC 9457 problem (problems.ts).
 */
import type { FastifyRequest } from 'fastify';
import type { AccessTokens } from '../lib/auth/tokens.js';
import type { ServiceMount } from '../lib/config/runtime.js';
import type { ServiceName } from '../lib/config/services.js';
import { Operations, peerReady } from '../lib/ops/operations.js';
import { serverTracer } from '../lib/ops/tracing.js';
import type { EdgeOptions } from '../lib/server/edge-options.js';
import type { ListeningServer, PlatformServer } from '../lib/server/platform-server.js';
import { refusalReporter } from './access.js';
import { gatewayCaller } from './gateway-calls.js';
import { facadePages } from './pages.js';
import { servePort } from './port-server.js';
import type { ServiceRoutes } from './route-table.js';

export interface FacadeOptions extends EdgeOptions {
  host: string;
  /** Where each service is served: a port, and a path prefix on it (`/trust`, or `` for the whole port). */
  mounts: readonly ServiceMount[];
  /** Configured public base URLs (RuntimeConfig.publicUrls); a service without one is named as the request reached it. */
  publicUrls?: Partial<Record<ServiceName, string>>;
  tables: Record<ServiceName, ServiceRoutes>;
  gatewayUrl: string;
  tokens: AccessTokens;
}

export interface RunningFacade extends ListeningServer {
  /** Base URL of each service as mounted. */
  baseUrls: Record<ServiceName, string>;
}

export async function startFacade(options: FacadeOptions): Promise<RunningFacade> {
  const callGateway = gatewayCaller(options.gatewayUrl, serverTracer('facade'));
  const refusals = refusalReporter(options.tokens, callGateway);
  /** Configured port → bound port (they differ when 0 asks for any free port). */
  const ports = new Map<number, number>();

  /**
   * The base URL of every service for one request: the configured public one, else as this request
   * reached the facade (its Host) for a service on the same port, and that host at the service's own
   * port for one elsewhere.
   */
  function publicUrlsFor(request: FastifyRequest, port: number): Record<ServiceName, string> {
    const host = request.headers.host ?? 'localhost';
    const hostName = host.replace(/:\d+$/, '');
    return Object.fromEntries(
      options.mounts.map((mount) => {
        const prefix = mount.prefix.replace(/\/+$/, '');
        const derived = mount.port === port ? `http://${host}${prefix}` : `http://${hostName}:${ports.get(mount.port)}${prefix}`;
        return [mount.service, options.publicUrls?.[mount.service] ?? derived];
      }),
    ) as Record<ServiceName, string>;
  }

  const facade = {
    // One process state for every port, the facade's own when it is started without one.
    edge: { ...options, operations: options.operations ?? new Operations() },
    bodyLimit: options.bodyLimit,
    tokens: options.tokens,
    tables: options.tables,
    readiness: { gateway: peerReady(new URL('/readyz', options.gatewayUrl).href, 'the gateway') },
    pages: facadePages({ gatewayUrl: options.gatewayUrl, host: options.host, mounts: options.mounts, boundPort: (port) => ports.get(port) }),
    callGateway,
    refusals,
    flushRefusals: (service: ServiceName) => refusals.flush(service),
    publicUrlsFor,
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
