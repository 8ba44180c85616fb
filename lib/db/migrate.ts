/**
 * Applies a service's committed Prisma migrations (`prisma/<service>/migrations/<name>/migration.sql`)
 * as `prisma migrate deploy` does, through `pg` alone: no schema engine, no Prisma binary.
 *
 * The record is Prisma's own `_prisma_migrations` table, written the way Prisma writes it (the
 * migration's name, the SHA-256 of its file, start and finish times), so a database migrated by
 * Prisma upgrades here and one migrated here reads as up to date to `prisma migrate status`.
 * Unlike Prisma, each migration runs in one transaction with its record, so a failed migration
 * leaves neither half-applied SQL nor a failed record behind, and can be fixed and retried. Two
 * starts against one database take Prisma's advisory lock in turn, so they never apply a
 * migration twice.
 */
import { createHash, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { SchemaName } from '../config/services.js';
import { clientConfig, parseDatabaseUrl, type DatabaseTarget } from './postgres.js';

/** The advisory lock key Prisma's schema engine takes around migrations; sharing it serialises us with it too. */
export const PRISMA_MIGRATION_LOCK = 72707369;

const prismaDirectory = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'prisma');

export function migrationsDirectory(service: SchemaName): string {
  return join(prismaDirectory, service, 'migrations');
}

export interface Migration {
  /** The folder's name, e.g. `20261123074829_foundation`: the order and the record's key. */
  name: string;
  sql: string;
  /** SHA-256 of the file in hex, as Prisma records it. */
  checksum: string;
}

/** Reads a migrations folder in the order Prisma applies it (folder names sorted). */
export async function readMigrations(directory: string): Promise<Migration[]> {
  if (!existsSync(directory)) return [];
  const entries = await readdir(directory, { withFileTypes: true });
  const names = entries
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const bytes = await readFile(join(directory, name, 'migration.sql'));
      return { name, sql: bytes.toString('utf8'), checksum: createHash('sha256').update(bytes).digest('hex') };
    }),
  );
}

/** Why migrations cannot be applied: a migration failed under Prisma earlier, or a committed one changed after it was applied. */
export class MigrationError extends Error {
  override name = 'MigrationError';
}

/** Prisma's own definition of its record table, so Prisma reads ours and we read Prisma's. */
const RECORD_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum"              VARCHAR(64) NOT NULL,
  "finished_at"           TIMESTAMPTZ,
  "migration_name"        VARCHAR(255) NOT NULL,
  "logs"                  TEXT,
  "rolled_back_at"        TIMESTAMPTZ,
  "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

interface RecordRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

export interface MigrateOptions {
  /** Run on the same session once the schema is up to date (a start reads its stored keys so, without a connection of its own). */
  afterwards?: (client: pg.ClientBase) => Promise<void>;
}

/**
 * Applies every migration of `directory` not yet recorded in the URL's schema (Prisma's `?schema=`),
 * creating the schema first. Returns the names applied, in order.
 */
export async function applyMigrations(url: string, directory: string, options: MigrateOptions = {}): Promise<string[]> {
  const target = parseDatabaseUrl(url);
  const migrations = await readMigrations(directory);
  return withMigrationLock(target, (client) => migrateSchema(client, target.schema, migrations, options));
}

/** Runs `run` on a new session to the target's database that holds the migration lock; ending the session releases it. */
async function withMigrationLock<T>(target: DatabaseTarget, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client(clientConfig(target, target.database));
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [PRISMA_MIGRATION_LOCK]);
    return await run(client);
  } finally {
    await client.end();
  }
}

/** The schema's check and its missing migrations, on a session that holds the migration lock and searches that schema. */
async function migrateSchema(client: pg.ClientBase, schema: string, migrations: readonly Migration[], options: MigrateOptions): Promise<string[]> {
  await prepareSchema(client, schema);
  const records = await client.query<RecordRow>('SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations" ORDER BY started_at');
  const failed = records.rows.find((row) => row.finished_at === null && row.rolled_back_at === null);
  if (failed) {
    throw new MigrationError(
      `migration ${failed.migration_name} failed earlier in schema "${schema}" and is recorded as unfinished; ` +
        'repair the database, then mark it rolled back (UPDATE "_prisma_migrations" SET rolled_back_at = now() WHERE migration_name = …) or applied (SET finished_at = now())',
    );
  }
  const applied = new Map(records.rows.filter((row) => row.finished_at !== null && row.rolled_back_at === null).map((row) => [row.migration_name, row.checksum]));
  const names: string[] = [];
  for (const migration of migrations) {
    const recorded = applied.get(migration.name);
    if (recorded !== undefined) {
      if (recorded !== migration.checksum) {
        throw new MigrationError(`migration ${migration.name} was changed after it was applied to schema "${schema}"; add a new migration instead of editing an applied one`);
      }
      continue;
    }
    await client.query('BEGIN');
    try {
      await runMigration(client, migration);
      await client.query('COMMIT');
    } catch (error) {
      // A lost connection cannot roll back, but then the server discards the transaction anyway.
      await client.query('ROLLBACK').catch(() => {});
      throw new MigrationError(`migration ${migration.name} failed and was rolled back: ${(error as Error).message}`, { cause: error });
    }
    names.push(migration.name);
  }
  await options.afterwards?.(client);
  return names;
}

/** Creates the schema and Prisma's record table in it when missing; the client's search_path must name the schema. */
export async function prepareSchema(client: pg.ClientBase, schema: string): Promise<void> {
  await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema.replaceAll('"', '""')}"`);
  await client.query(RECORD_TABLE);
}

/** One migration's SQL and its record, inside the caller's transaction (a restore runs several in one). */
export async function runMigration(client: pg.ClientBase, migration: Migration): Promise<void> {
  await client.query(migration.sql);
  await client.query(`INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count) VALUES ($1, $2, $3, now(), clock_timestamp(), 1)`, [
    randomUUID(),
    migration.checksum,
    migration.name,
  ]);
}

/** One service's part of deployServices (or the identity store's). */
export interface ServiceMigration extends MigrateOptions {
  service: SchemaName;
  url: string;
}

/**
 * Applies each service's committed migrations to its schema, as deployMigrations would, but services
 * whose URLs name the same server, user and database share one session (and one advisory lock): each
 * new connection costs PostgreSQL ~36 ms of CPU (a process, SCRAM), and a start checks four schemas.
 * Every check ends before this returns: each service's outcome, in order, as Promise.allSettled gives them.
 */
export async function deployServices(services: readonly ServiceMigration[]): Promise<PromiseSettledResult<string[]>[]> {
  const outcomes: PromiseSettledResult<string[]>[] = [];
  const sessions = new Map<string, number[]>();
  for (const [index, { url }] of services.entries()) {
    const { host, port, user, password, database } = parseDatabaseUrl(url);
    const key = JSON.stringify([host, port, user, password, database]);
    sessions.set(key, [...(sessions.get(key) ?? []), index]);
  }
  await Promise.all(
    [...sessions.values()].map(async (indexes) => {
      try {
        const migrations = await Promise.all(indexes.map((index) => readMigrations(migrationsDirectory(services[index]!.service))));
        await withMigrationLock(parseDatabaseUrl(services[indexes[0]!]!.url), async (client) => {
          for (const [position, index] of indexes.entries()) {
            const { schema } = parseDatabaseUrl(services[index]!.url);
            try {
              await client.query(`SET search_path TO "${schema.replaceAll('"', '""')}"`);
              outcomes[index] = { status: 'fulfilled', value: await migrateSchema(client, schema, migrations[position]!, services[index]!) };
            } catch (reason) {
              outcomes[index] = { status: 'rejected', reason };
            }
          }
        });
      } catch (reason) {
        // No session (or no migrations folder read): every service of it not yet checked fails alike.
        for (const index of indexes) outcomes[index] ??= { status: 'rejected', reason };
      }
    }),
  );
  return outcomes;
}

/** Applies a service's committed migrations to its schema. Returns the names applied. */
export function deployMigrations(service: SchemaName, url: string, options: MigrateOptions = {}): Promise<string[]> {
  return applyMigrations(url, migrationsDirectory(service), options);
}
