/**
 * PostgreSQL connection facts from a URL, and the database itself made when missing: what the
 * services, the embedded cluster and the migration engine all need, with no Prisma in it.
 */
import pg from 'pg';

/** Connection parts of a PostgreSQL URL; `schema` is Prisma's `?schema=` parameter. */
export interface DatabaseTarget {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  schema: string;
}

export function parseDatabaseUrl(url: string): DatabaseTarget {
  const parsed = new URL(url);
  if (parsed.protocol !== 'postgresql:' && parsed.protocol !== 'postgres:') {
    throw new Error(`not a PostgreSQL URL: ${parsed.protocol}`);
  }
  return {
    host: decodeURIComponent(parsed.hostname) || 'localhost',
    port: Number(parsed.port || 5432),
    user: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
    database: decodeURIComponent(parsed.pathname.slice(1)),
    schema: parsed.searchParams.get('schema') ?? 'public',
  };
}

/** A pg client of `database` on the target's server, searching the target's schema. */
export function clientConfig(target: DatabaseTarget, database: string): pg.ClientConfig {
  return { host: target.host, port: target.port, user: target.user, password: target.password, database, options: `-c search_path="${target.schema}"` };
}

/** Creates the database named in the URL when it does not exist yet. Returns whether it did. */
export async function ensureDatabase(url: string): Promise<boolean> {
  const target = parseDatabaseUrl(url);
  const admin = new pg.Client(clientConfig(target, 'postgres'));
  await admin.connect();
  try {
    const existing = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [target.database]);
    if (existing.rowCount) return false;
    await admin.query(`CREATE DATABASE "${target.database.replaceAll('"', '""')}"`);
    return true;
  } finally {
    await admin.end();
  }
}
