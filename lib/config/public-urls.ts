/**
 * The public base URL of each service (DESIGN §3, "Public identity"): the one address every absolute
 * URL written for the service is made from, by the facade (Location, links, linksets, redirects,
 * problem types, a 409's passport_url, OpenAPI servers) and by the issuer in what it signs (did:web,
 * credential ids, status list URLs). `<SERVICE>_PUBLIC_URL` sets it; unset, it is where the facade
 * serves the service (`http://HOST:FACADE_PORT/issuer`, or the service's own port), whatever Host a
 * request names: what the issuer signs cannot depend on how a client reached the platform, so neither
 * does anything that links to it. That is right on one machine and wrong behind a proxy or beyond
 * loopback: set it there, with https for did:web.
 */
import type { RuntimeConfig, ServiceMount } from './runtime.js';
import type { ServiceName } from './services.js';

/** Looks up a service's public base URL (no trailing slash); resolved when called, so a stack can fill in the ports it bound. */
export type PublicUrls = (service: ServiceName) => string;

/** Where the facade serves a service when no public URL is configured: the bound port, the mount's prefix. */
export function servedBaseUrl(host: string, port: number, prefix: string): string {
  // A wildcard bind address is no address a client can use; loopback is what reaches it on this machine.
  const reachable = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return `http://${reachable}:${port}${prefix.replace(/\/+$/, '')}`;
}

/**
 * Each service's configured public URL, else where the facade serves it: HOST, the port its mount
 * is bound to (`boundPort`: the configured one unless the facade chose it, port 0), its prefix.
 */
export function publicUrlsOfConfig(config: Pick<RuntimeConfig, 'host' | 'mounts' | 'publicUrls'>, boundPort: (mount: ServiceMount) => number = (mount) => mount.port): PublicUrls {
  return (service) => {
    const configured = config.publicUrls[service];
    if (configured !== undefined) return configured;
    const mount = config.mounts.find((candidate) => candidate.service === service)!;
    return servedBaseUrl(config.host, boundPort(mount), mount.prefix);
  };
}
