/**
 * The facade's side of the one public-URL rule (lib/config/public-urls.ts): every absolute URL it
 * writes for a request, a problem's `type` included, is made from the public base URL of the service
 * the request is for, never from the request's Host, so it names what the issuer signs.
 */
import { publicUrlsOfConfig } from '../lib/config/public-urls.js';
import type { ServiceMount } from '../lib/config/runtime.js';
import type { ServiceName } from '../lib/config/services.js';

export interface FacadeUrls {
  /** Every mounted service's public base URL. */
  services(): Record<ServiceName, string>;
  /**
   * The origin a problem's `type` names (where /docs/problems is served): that of the service
   * whose base the path is under on the port the request came in on, else of that port's first
   * service.
   */
  problemOrigin(localPort: number | undefined, path: string): string;
}

/** `boundPort`: the port a configured one was bound to (they differ when 0 asked for any free port). */
export function facadeUrls(options: { host: string; mounts: readonly ServiceMount[]; publicUrls?: Partial<Record<ServiceName, string>> }, boundPort: (configured: number) => number): FacadeUrls {
  const urls = publicUrlsOfConfig({ host: options.host, mounts: [...options.mounts], publicUrls: options.publicUrls ?? {} }, (mount) => boundPort(mount.port));
  const prefixOf = (mount: ServiceMount) => mount.prefix.replace(/\/+$/, '');
  return {
    services: () => Object.fromEntries(options.mounts.map((mount) => [mount.service, urls(mount.service)])) as Record<ServiceName, string>,
    problemOrigin(localPort, path) {
      const here = options.mounts.filter((mount) => localPort === undefined || boundPort(mount.port) === localPort);
      const under = here.filter((mount) => prefixOf(mount) === '' || path === prefixOf(mount) || path.startsWith(`${prefixOf(mount)}/`)).sort((a, b) => prefixOf(b).length - prefixOf(a).length)[0];
      return new URL(urls((under ?? here[0] ?? options.mounts[0]!).service)).origin;
    },
  };
}
