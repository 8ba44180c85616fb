/** The four services of the platform, in the order the specification presents them. */
export const SERVICES = ['trust', 'registry', 'issuer', 'archive'] as const;
export type ServiceName = (typeof SERVICES)[number];

export function isServiceName(value: string): value is ServiceName {
  return (SERVICES as readonly string[]).includes(value);
}

/**
 * The platform's six servers: the REST facade, the gateway and each service's subgraph. A server's
 * name labels its metrics (`server`), and names it in traces and logs (`passport-<server>`).
 */
export const SERVER_NAMES = ['facade', 'gateway', ...SERVICES] as const;
export type ServerName = (typeof SERVER_NAMES)[number];
