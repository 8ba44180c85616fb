import { PrismaPg } from '@prisma/adapter-pg';
import { parseDatabaseUrl } from '../../prisma/engine/wasm-engine.js';

/** The constructor of a service's generated Prisma client. */
export type PrismaClientClass<T> = new (options: { adapter: PrismaPg }) => T;

/**
 * Opens a service's Prisma client on the `pg` driver adapter, inside the schema named by the URL's
 * `?schema=` parameter.
 */
export function openPrismaClient<T>(Client: PrismaClientClass<T>, url: string, poolSize = 10): T {
  const target = parseDatabaseUrl(url);
  const connectionString = new URL(url);
  connectionString.searchParams.delete('schema');
  return new Client({ adapter: new PrismaPg({ connectionString: connectionString.toString(), max: poolSize }, { schema: target.schema }) });
}
