import { PrismaPg } from '@prisma/adapter-pg';
import type { Tracer } from '@opentelemetry/api';
import pg from 'pg';
import { traceStatements } from '../ops/tracing.js';
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

/** How long a request waits for one of the pool's connections. */
const POOL_WAIT_MS = 10_000;

/** DATABASE_STATEMENT_TIMEOUT_MS, default 30 s: the longest any one SQL statement may run. */
function statementTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  const configured = Number(env.DATABASE_STATEMENT_TIMEOUT_MS ?? 30_000);
  return Number.isInteger(configured) && configured > 0 ? configured : 30_000;
}

/**
 * Opens a service's Prisma client on the `pg` driver adapter, inside the schema named by the URL's
 * `?schema=` parameter; the statements sent are counted by `statements` when given, and traced by `tracer`.
 */
export function openPrismaClient<T>(Client: PrismaClientClass<T>, url: string, poolSize = 10, statements?: StatementCounter, tracer?: Tracer): T {
  const target = parseDatabaseUrl(url);
  const connectionString = new URL(url);
  connectionString.searchParams.delete('schema');
  const pool = new pg.Pool({
    connectionString: connectionString.toString(),
    max: poolSize,
    // A request waits this long for a free connection, then fails as DATABASE_UNAVAILABLE (503).
    connectionTimeoutMillis: POOL_WAIT_MS,
    // No statement holds a connection longer, so one heavy request cannot starve the others.
    options: `-c statement_timeout=${statementTimeoutMs()} -c idle_in_transaction_session_timeout=${statementTimeoutMs()}`,
  });
  statements?.watch(pool);
  if (tracer) traceStatements(pool, tracer, connectionString.pathname.slice(1));
  return new Client({ adapter: new PrismaPg(pool, { schema: target.schema, disposeExternalPool: true }) });
}
