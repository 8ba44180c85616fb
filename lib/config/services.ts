/** The four services of the platform, in the order the specification presents them. */
export const SERVICES = ['trust', 'registry', 'issuer', 'archive'] as const;
export type ServiceName = (typeof SERVICES)[number];

/**
 * The platform's PostgreSQL schemas, each with its Prisma schema and migrations: one per service,
 * and the identity store (operators and their access tokens, lib/auth/identity-store.ts), which
 * every server reads and no service owns.
 */
export const DATABASE_SCHEMAS = [...SERVICES, 'identity'] as const;
export type SchemaName = (typeof DATABASE_SCHEMAS)[number];

export function isSchemaName(value: string): value is SchemaName {
  return (DATABASE_SCHEMAS as readonly string[]).includes(value);
}

export function isServiceName(value: string): value is ServiceName {
  return (SERVICES as readonly string[]).includes(value);
}

/**
 * The platform's six servers: the REST facade, the gateway and each service's subgraph. A server's
 * name labels its metrics (`server`), and names it in traces and logs (`passport-<server>`).
 */
export const SERVER_NAMES = ['facade', 'gateway', ...SERVICES] as const;
export type ServerName = (typeof SERVER_NAMES)[number];
