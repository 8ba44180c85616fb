import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { parseDatabaseUrl } from './postgres.js';

/** The constructor of a service's generated Prisma client. */
export type PrismaClientClass<T> = new (options: { adapter: PrismaPg }) => T;

/**
 * Counts the SQL statements a pool sends (every `query` of every client it hands out: Prisma's
 * queries, raw SQL and transaction control alike), so that tests can see how many a request costs.
 */
export class StatementCounter {
  #count = 0;

  get count(): number {
    return this.#count;
  }

  /** Counts from now on every statement sent on the pool's connections. */
  watch(pool: pg.Pool): void {
    pool.on('connect', (client) => {
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
        this.#count += 1;
        return query(...args);
      };
    });
  }
}

/**
 * Opens a service's Prisma client on the `pg` driver adapter, inside the schema named by the URL's
 * `?schema=` parameter; the statements sent are counted by `statements` when given.
 */
export function openPrismaClient<T>(Client: PrismaClientClass<T>, url: string, poolSize = 10, statements?: StatementCounter): T {
  const target = parseDatabaseUrl(url);
  const connectionString = new URL(url);
  connectionString.searchParams.delete('schema');
  const pool = new pg.Pool({ connectionString: connectionString.toString(), max: poolSize });
  statements?.watch(pool);
  return new Client({ adapter: new PrismaPg(pool, { schema: target.schema, disposeExternalPool: true }) });
}
