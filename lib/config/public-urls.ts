/**
 * The public base URL of each service (DESIGN §3, "Public identity"): the address clients see, behind
 * any proxy, from which every absolute URL written into a signed or published document is made (the
 * issuer's did:web, credential ids, status list URLs). `<SERVICE>_PUBLIC_URL` sets it; unset, it is
 * where the facade serves the service (`http://HOST:FACADE_PORT/issuer`, or the service's own port),
 * which is right on one machine and wrong behind a proxy: set it there, with https for did:web.
 */
import type { RuntimeConfig } from './runtime.js';
import type { ServiceName } from './services.js';

/** Looks up a service's public base URL (no trailing slash); resolved when called, so a stack can fill in the ports it bound. */
export type PublicUrls = (service: ServiceName) => string;

/** Where the facade serves a service when no public URL is configured: the bound port, the mount's prefix. */
export function servedBaseUrl(host: string, port: number, prefix: string): string {
  // A wildcard bind address is no address a client can use; loopback is what reaches it on this machine.
  const reachable = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return `http://${reachable}:${port}${prefix.replace(/\/+$/, '')}`;
}

/** Each service's configured public URL, else where it is served (`served`, asked when a URL is needed). */
export function publicUrls(configured: Partial<Record<ServiceName, string>>, served: (service: ServiceName) => string): PublicUrls {
  return (service) => configured[service] ?? served(service);
}

/** Public URLs from a configuration alone: configured ones, else the facade's configured port and prefix. */
export function publicUrlsOfConfig(config: Pick<RuntimeConfig, 'host' | 'mounts' | 'publicUrls'>): PublicUrls {
  return publicUrls(config.publicUrls, (service) => {
    const mount = config.mounts.find((candidate) => candidate.service === service)!;
    return servedBaseUrl(config.host, mount.port, mount.prefix);
  });
}
