/**
 * The database a backup reads or a restore writes: the one that holds the four services' schemas
 * and the identity store's,
 * found as the platform's other commands find it (lib/db/platform-database.ts).
 */
import pg from 'pg';
import { serviceDatabaseUrl } from '../config/database.js';
import { DATABASE_SCHEMAS, type SchemaName } from '../config/services.js';
import { BackupError } from './backup-file.js';
import { NoPlatformDatabase, withPlatformDatabase } from './platform-database.js';
import { clientConfig, parseDatabaseUrl } from './postgres.js';

export const quote = (identifier: string) => `"${identifier.replaceAll('"', '""')}"`;
export const qualified = (schema: string, table: string) => `${quote(schema)}.${quote(table)}`;

export interface Database {
  /** The database holding the five schemas, without a schema. */
  target: ReturnType<typeof parseDatabaseUrl>;
  schemas: Record<SchemaName, string>;
  /** Each service's URL (and the identity store's), with its schema. */
  urls: Record<SchemaName, string>;
}

/** The one database that holds every service's schema, or the sentence saying they are apart. */
function locate(env: NodeJS.ProcessEnv): Database {
  const urls = DATABASE_SCHEMAS.map((schema) => serviceDatabaseUrl(schema, env));
  const targets = urls.map(parseDatabaseUrl);
  const where = (target: (typeof targets)[number]) => `${target.host}:${target.port}/${target.database}`;
  if (new Set(targets.map(where)).size > 1) {
    throw new BackupError(
      'The services’ schemas are in different databases, and one snapshot spans one database: point DATABASE_URL (or every <SERVICE>_DATABASE_URL and IDENTITY_DATABASE_URL) at the one database holding all five.',
    );
  }
  const byService = <T>(values: T[]) => Object.fromEntries(DATABASE_SCHEMAS.map((schema, i) => [schema, values[i]!])) as Record<SchemaName, T>;
  return { target: targets[0]!, schemas: byService(targets.map((target) => target.schema)), urls: byService(urls) };
}

/**
 * Runs `work` against the platform's database (withPlatformDatabase); `create` makes the embedded
 * cluster of a data folder that has none yet (a restore's).
 */
export async function withBackupDatabase<T>(env: NodeJS.ProcessEnv, create: boolean, work: (database: Database) => Promise<T>): Promise<T> {
  try {
    return await withPlatformDatabase((found) => work(locate(found)), env, { create });
  } catch (error) {
    throw error instanceof NoPlatformDatabase ? new BackupError(error.message) : error;
  }
}

/** A session of its own for the whole backup or restore. */
export async function connect(database: Database): Promise<pg.Client> {
  const client = new pg.Client(clientConfig(database.target, database.target.database));
  await client.connect();
  // A backup of a large database is one long transaction; the services' own timeouts do not apply to it.
  await client.query('SET statement_timeout = 0; SET idle_in_transaction_session_timeout = 0');
  return client;
}
